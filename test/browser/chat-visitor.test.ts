// The chat page in real headless Chromium: the visitor id it keeps (per API address, and one kept before that
// rule), its CSP, a bot whose allowed origins leave the page out, and the page against a stack without realtime.
// Code inside page.evaluate runs in the page: it reads the page's globals through test/browser/page-globals.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiUrl, newBot } from '../support/api';
import { stackEnv, startLocalProcess } from '../support/local-process';
import { until, untilTime } from '../support/wait';
import type { DemoBot } from '../../lib/local/stack';
import type { PageGlobals } from './page-globals';
import { chatPageHooks, demo, ready, sendText, storedExternalId } from './chat-page';

const { visitor, openChat, pageErrors } = chatPageHooks();

test('the visitor id is kept per API address: a link naming another API is not sent it; the page carries a CSP', async () => {
  const ctx = await visitor();
  const page = await openChat(ctx);
  await ready(page);
  expect(await storedExternalId(page)).toMatch(/^visitor_/);
  // Only the page's own script and style run there (the rest of this file shows the page works under it).
  expect(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')).toContain("script-src 'self'");
  // The same page, linked with another API's address and this bot's client key: that API gets no visitor id.
  const sessions: unknown[] = [];
  const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type, authorization', 'access-control-allow-methods': 'GET, POST' };
  await ctx.route('http://other-api.test/**', async (route) => {
    const req = route.request();
    if (req.method() === 'POST') sessions.push(req.postDataJSON());
    if (req.method() === 'OPTIONS') await route.fulfill({ status: 204, headers: cors });
    else await route.fulfill({ status: 503, contentType: 'application/json', headers: cors, body: '{"error":"down"}' });
  });
  await openChat(ctx, `?api=${encodeURIComponent('http://other-api.test')}&client_key=${demo().client_key}`);
  await until(() => sessions.length > 0, 15_000, 'the other API to be asked for a session');
  expect(sessions[0]).toEqual({ client_key: demo().client_key });
});

test('a visitor id stored before ids were kept per API address is used once, by the API the page names, and kept under it', async () => {
  const ctx = await visitor();
  const page = await openChat(ctx);
  await ready(page);
  const id = await storedExternalId(page);
  // As an older page left it: under the client key alone.
  await page.evaluate(([key, value]) => {
    const ls = (globalThis as unknown as PageGlobals).localStorage;
    ls.clear();
    ls.setItem(key, value);
  }, [`chat.external_id:${demo().client_key}`, id as string]);
  await page.reload();
  await ready(page);
  const keys = await page.evaluate(() => Object.keys((globalThis as unknown as PageGlobals).localStorage));
  expect([keys, await storedExternalId(page)]).toEqual([[`chat.external_id:${apiUrl()}:${demo().client_key}`], id]);
});

test('a bot whose allowed_origins does not list this page shows the 403 to the person', async () => {
  const { bot } = await newBot({ allowed_origins: ['https://shop.example'] });
  const page = await openChat(await visitor(), `?client_key=${bot.client_key}`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toMatch(/could not start.*not allowed for this bot.*\(403\)/i);
  expect(pageErrors.get(page)).toEqual([]);
});

test('without realtime the page polls and still shows replies; it can be pointed at another stack by URL', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-browser-'));
  // Sessions of 4 s on this stack, so the page meets a real expired token and must renew it.
  const stack = await startLocalProcess(await stackEnv(dir, { REALTIME: 'off', SESSION_TTL_SECONDS: '4' }));
  try {
    const other = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
    // The page of the main stack, pointed at the realtime-less stack through its query string.
    // The session's expiry as the stack gave it, seen on the way to the page.
    const ctx = await visitor();
    let expiresAt = '';
    ctx.on('response', (r) => void (r.url().endsWith('/api/client/session') && r.json().then((b: { expires_at: string }) => (expiresAt = b.expires_at))));
    const page = await openChat(ctx, `?api=${encodeURIComponent(stack.apiUrl)}&client_key=${other.client_key}`);
    await ready(page);
    expect(await page.locator('#status').textContent()).toBe('updates every few seconds');
    await sendText(page, 'polling works');
    await page.locator('.message.outcoming', { hasText: 'You said: polling works' }).waitFor({ timeout: 10_000 });
    // Once the session expires, the next call gets a 401: the page renews it with the stored external_id
    // and carries on in the same chat, with no error shown.
    await until(() => expiresAt !== '', 15_000, 'the session response');
    await untilTime(Date.parse(expiresAt) + 1000, 'the session to expire');
    await sendText(page, 'after renewal');
    await page.locator('.message.outcoming', { hasText: 'You said: after renewal' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('.message .text').allTextContents()).toEqual([
      'polling works',
      'You said: polling works',
      'after renewal',
      'You said: after renewal',
    ]);
    expect(await page.getByRole('alert').isHidden()).toBe(true);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
