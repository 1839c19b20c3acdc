// /docs in real headless Chromium: Redoc, served by the local stack, renders docs/openapi.yaml's operations,
// and the page asks nothing of any other origin.
// Code inside page.evaluate runs in the page: it reads the page's globals through test/browser/page-globals.ts.
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl } from '../support/http';
import type { PageGlobals } from './page-globals';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

test('the API reference renders offline: the operations of both APIs and the webhook are on the page', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  const console: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') console.push(m.text());
  });
  const elsewhere: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // What the browser fetched from another origin (a request the Content-Security-Policy refuses fails instead).
  page.on('requestfinished', (r) => {
    if (!r.url().startsWith(apiUrl()) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) elsewhere.push(r.url());
  });
  page.on('requestfailed', (r) => console.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) console.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(`${apiUrl()}/docs`);
  await page.getByText('Find or create the user by external_id and open a session').first().waitFor({ state: 'attached', timeout: 20_000 });
  const text = await page.evaluate(() => (globalThis as unknown as PageGlobals).document.body.textContent ?? '');
  for (const summary of ['Send a message as the user', 'Edit a message of the bot side (a streamed answer)', 'A new user message, POSTed to the bot']) {
    expect(text).toContain(summary);
  }
  // The only thing refused by the page's Content-Security-Policy is Redoc's footer logo on cdn.redoc.ly.
  expect({ errors, elsewhere, console: console.filter((c) => !c.includes('https://cdn.redoc.ly/redoc/logo-mini.svg')) }).toEqual({ errors: [], elsewhere: [], console: [] });
  await page.close();
});
