// The chat page's test files: one Chromium per file, a fresh visitor (own localStorage) per test, and the page's
// common steps. Code inside page.evaluate runs in the page: it reads the page's globals through page-globals.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl } from '../support/api';
import type { DemoBot } from '../../lib/local/stack';
import type { PageGlobals } from './page-globals';

/**
 * Registers the file's browser (launched before its tests, closed after) and closes each test's visitors after
 * it; returns how to make a visitor, open the page, and read each page's uncaught errors.
 */
export function chatPageHooks() {
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  /** Uncaught errors of each page, checked by the tests that care. */
  const pageErrors = new WeakMap<Page, string[]>();
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
  });
  /** A fresh visitor (own localStorage). */
  const visitor = async (): Promise<BrowserContext> => {
    const ctx = await browser.newContext();
    contexts.push(ctx);
    return ctx;
  };
  const openChat = async (ctx: BrowserContext, query = '', base = apiUrl()): Promise<Page> => {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    pageErrors.set(page, errors);
    await page.goto(`${base}/${query}`);
    return page;
  };
  return { visitor, openChat, pageErrors };
}

export const ready = (page: Page) => page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
export const box = (page: Page) => page.getByRole('textbox', { name: 'Message' });
/** The local stack's demo bot (its data folder's demo-bot.json). */
export const demo = () => JSON.parse(readFileSync(join(process.env.DATA_DIR as string, 'demo-bot.json'), 'utf8')) as DemoBot;

/** The external_id the page keeps in localStorage. */
export const storedExternalId = (page: Page) =>
  page.evaluate(() => Object.entries((globalThis as unknown as PageGlobals).localStorage).find(([k]) => k.startsWith('chat.external_id:'))?.[1] as string | undefined);

export async function sendText(page: Page, text: string): Promise<void> {
  await box(page).fill(text);
  await box(page).press('Enter');
}
