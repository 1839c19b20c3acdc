// The chat page in real headless Chromium against the running local stack (with its echo bot).
// Code inside page.evaluate runs in the page: it reads the page's globals through test/browser/page-globals.ts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl, call, newBot } from '../support/api';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { ROOT, stackEnv, startLocalProcess } from '../support/local-process';
import { until, untilTime } from '../support/wait';
import { present } from '../support/contract';
import type { DemoBot } from '../../lib/local/stack';
import type { PageGlobals } from './page-globals';

/** The page as the streamed-reply test instruments it: each version of the bot's bubble, and whether typing showed. */
type Instrumented = PageGlobals & { __seen: { typing: boolean; versions: string[] } };

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const OUT = join(ROOT, 'test-output');

let browser: Browser;
const contexts: BrowserContext[] = [];
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

/** Uncaught errors of each page, checked by the tests that care. */
const pageErrors = new WeakMap<Page, string[]>();
// Callbacks passed to page.evaluate run in the browser, where `globalThis` is the window; this project's
// type-check has no DOM library, hence the casts.

/** A fresh visitor (own localStorage). */
async function visitor(): Promise<BrowserContext> {
  const ctx = await browser.newContext();
  contexts.push(ctx);
  return ctx;
}

async function openChat(ctx: BrowserContext, query = '', base = apiUrl()): Promise<Page> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  pageErrors.set(page, errors);
  await page.goto(`${base}/${query}`);
  return page;
}

const ready = (page: Page) => page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
const box = (page: Page) => page.getByRole('textbox', { name: 'Message' });
const demo = () => JSON.parse(readFileSync(join(process.env.DATA_DIR as string, 'demo-bot.json'), 'utf8')) as DemoBot;

/** The external_id the page keeps in localStorage. */
const storedExternalId = (page: Page) =>
  page.evaluate(() => Object.entries((globalThis as unknown as PageGlobals).localStorage).find(([k]) => k.startsWith('chat.external_id:'))?.[1] as string | undefined);

async function sendText(page: Page, text: string): Promise<void> {
  await box(page).fill(text);
  await box(page).press('Enter');
}

test('send a message; the bot’s reply arrives over realtime without reload; a screenshot is kept', async () => {
  const page = await openChat(await visitor());
  await ready(page);
  await sendText(page, 'Hello from the browser');
  await page.locator('.message.incoming', { hasText: 'Hello from the browser' }).waitFor();
  await page.locator('.message.outcoming', { hasText: 'You said: Hello from the browser' }).waitFor();
  // The own message shows once although it came back over realtime too (deduplicated by id).
  expect(await page.locator('.message.incoming', { hasText: 'Hello from the browser' }).count()).toBe(1);
  expect(await page.locator('#status').textContent()).toBe('online');
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'chat-first-exchange.png') });
  expect(pageErrors.get(page)).toEqual([]);
});

test('a streamed reply: "typing…" shows, then one bubble grows in place to the final text, marked edited', async () => {
  const page = await openChat(await visitor());
  await ready(page);
  // Every version of the bot's bubble the page shows, and whether typing was shown, recorded in the page.
  await page.evaluate(() => {
    const w = globalThis as unknown as Instrumented;
    w.__seen = { typing: false, versions: [] as string[] };
    new w.MutationObserver(() => {
      const typing = w.document.getElementById('typing');
      if (typing && !typing.hidden && /typing/.test(typing.textContent ?? '')) w.__seen.typing = true;
      for (const el of w.document.querySelectorAll('.message.outcoming .text')) {
        const text = el.textContent as string;
        if (text.startsWith('You') && w.__seen.versions.at(-1) !== text) w.__seen.versions.push(text);
      }
    }).observe(w.document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await sendText(page, 'stream this answer to me please');
  const final = 'You said: stream this answer to me please';
  await page.locator('.message.outcoming', { hasText: final }).waitFor();
  const seen = await page.evaluate(() => (globalThis as unknown as Instrumented).__seen);
  expect(seen.typing).toBe(true);
  // The bubble grew word by word (each version a prefix of the next) and ended at the final text.
  expect(seen.versions.length).toBeGreaterThan(1);
  expect(seen.versions.at(-1)).toBe(final);
  for (const [i, v] of seen.versions.entries()) if (i > 0) expect(v.startsWith(seen.versions[i - 1])).toBe(true);
  // One bubble, marked edited, and typing cleared.
  expect(await page.locator('.message.outcoming').count()).toBe(1);
  expect(await page.locator('.message.outcoming .meta').textContent()).toMatch(/edited/);
  expect(await page.locator('#typing').isHidden()).toBe(true);
  // A reload shows the final version only.
  await page.reload();
  await ready(page);
  await page.locator('.message.outcoming', { hasText: final }).waitFor();
  expect(await page.locator('.message.outcoming').count()).toBe(1);
  expect(pageErrors.get(page)).toEqual([]);
});

test('reload: same visitor (external_id kept in localStorage), same history in created_at order', async () => {
  const ctx = await visitor();
  const page = await openChat(ctx);
  await ready(page);
  await sendText(page, 'first');
  await page.locator('.message.outcoming', { hasText: 'You said: first' }).waitFor();
  await sendText(page, 'second');
  await page.locator('.message.outcoming', { hasText: 'You said: second' }).waitFor();
  const before = await page.locator('.message .text').allTextContents();
  await page.reload();
  await ready(page);
  expect(await page.locator('.message .text').allTextContents()).toEqual(before);
  expect(before).toEqual(['first', 'You said: first', 'second', 'You said: second']);
  const stored = await storedExternalId(page);
  expect(stored).toMatch(/^visitor_/);
});

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

test('attach a PNG: it is uploaded, sent as a photo and rendered from its presigned URL', async () => {
  const page = await openChat(await visitor());
  await ready(page);
  await page.setInputFiles('#file', { name: 'pixel.png', mimeType: 'image/png', buffer: PNG });
  const img = page.locator('.message.incoming img[alt="pixel.png"]');
  await img.waitFor();
  await page.waitForFunction(() => {
    const el = (globalThis as unknown as PageGlobals).document.querySelector('.message.incoming img');
    return el?.complete && (el.naturalWidth ?? 0) > 0;
  });
  expect(await img.getAttribute('src')).toMatch(/X-Amz-Signature=/);
  await page.locator('.message.outcoming', { hasText: 'Nice photo! I got pixel.png' }).waitFor();
});

test('the unread badge counts a bot reply while the chat is minimized and clears when it is opened', async () => {
  const page = await openChat(await visitor());
  await ready(page);
  await sendText(page, 'hi');
  await page.locator('.message.outcoming', { hasText: 'You said: hi' }).waitFor();
  await page.getByRole('button', { name: 'Minimize' }).click();
  // An operator writes through the Bot API while the chat is minimized.
  const external = await storedExternalId(page);
  const auth = { authorization: `Bearer ${demo().secret_key}` };
  let chatId: string | undefined;
  for (let i = 0; i < 50 && !chatId; i++) {
    const chats = await call('GET', '/api/bot/chats?limit=20', { headers: auth });
    chatId = chats.body.chats.find((c) => c.user.external_id === external)?.id;
    if (!chatId) await new Promise((r) => setTimeout(r, 50)); // the bot's list is an index: eventually consistent
  }
  await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content: 'An operator here', sender: 'operator' } });
  await page.waitForFunction(() => {
    const badge = (globalThis as unknown as PageGlobals).document.getElementById('unread');
    return badge && !badge.hidden && badge.textContent === '1';
  });
  expect(await page.locator('#unread').getAttribute('aria-label')).toBe('1 unread message');
  await page.getByRole('button', { name: 'Open chat' }).click();
  await page.locator('.message.outcoming', { hasText: 'An operator here' }).waitFor();
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.getElementById('unread')?.hidden === true);
  // The read reached the server: after a reload the chat list says 0 unread, so no badge.
  await page.reload();
  await ready(page);
  expect(await page.locator('#unread').isHidden()).toBe(true);
});

test('after the server drops the socket the page reconnects and catches up with what it missed', async () => {
  const page = await openChat(await visitor());
  await ready(page);
  await sendText(page, 'before the drop');
  await page.locator('.message.outcoming', { hasText: 'You said: before the drop' }).waitFor();
  const external = await storedExternalId(page);
  const auth = { authorization: `Bearer ${demo().secret_key}` };
  const chat = (await call('GET', '/api/bot/chats?limit=20', { headers: auth })).body.chats.find((c) => c.user.external_id === external);
  if (!chat) throw new Error('the page’s user has no chat in the bot’s list');
  const subs = await dynamo.send(
    new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `SUB#nexus:user#${chat.user.id}` } }),
  );
  // Drop the socket as API Gateway would, and write while the page is away (its reconnect waits ~0.5 s).
  for (const item of subs.Items ?? []) {
    await fetch(`${process.env.WS_MANAGEMENT_ENDPOINT}/@connections/${encodeURIComponent(item.connection_id as string)}`, { method: 'DELETE' });
  }
  await call('POST', `/api/bot/chats/${chat.id}/messages`, { headers: auth, json: { content: 'sent while you were away', sender: 'operator' } });
  // And an earlier reply edited meanwhile: the page shows its latest version, in place.
  const history = await call('GET', `/api/bot/chats/${chat.id}/messages`, { headers: auth });
  const reply = present(history.body.find((m) => m.content === 'You said: before the drop'), 'the reply before the drop');
  expect((await call('PATCH', `/api/bot/chats/${chat.id}/messages/${reply.id}`, { headers: auth, json: { content: 'You said: before the drop (corrected)' } })).status).toBe(200);
  await page.locator('.message.outcoming', { hasText: 'sent while you were away' }).waitFor({ timeout: 10_000 });
  await page.locator('.message.outcoming', { hasText: 'You said: before the drop (corrected)' }).waitFor({ timeout: 10_000 });
  expect(await page.locator('.message.outcoming', { hasText: 'You said: before the drop' }).count()).toBe(1);
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.getElementById('status')?.textContent === 'online');
});

test('multiple_chats: a chat list with a new-chat button; each chat keeps its own history', async () => {
  const { bot } = await newBot({ widget: { multiple_chats: true, primary_color: '#0f766e' } });
  const page = await openChat(await visitor(), `?client_key=${bot.client_key}`);
  await ready(page);
  const list = page.getByRole('navigation', { name: 'Chats' });
  expect(await list.isVisible()).toBe(true);
  expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).getComputedStyle((globalThis as unknown as PageGlobals).document.documentElement).getPropertyValue('--primary').trim())).toBe('#0f766e');
  await sendText(page, 'in the first chat');
  await page.locator('.message.incoming', { hasText: 'in the first chat' }).waitFor();
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('#chat-list li').length === 2);
  expect(await page.locator('.message').count()).toBe(0);
  await sendText(page, 'in the second chat');
  await page.locator('.message.incoming', { hasText: 'in the second chat' }).waitFor();
  await list.getByRole('button', { name: 'Chat', exact: true }).click();
  await page.locator('.message.incoming', { hasText: 'in the first chat' }).waitFor();
  expect(await page.locator('.message .text').allTextContents()).toEqual(['in the first chat']);
});

test('a reply that arrives while its chat\'s history is on its way stays on screen when the older history lands', async () => {
  const { bot, secretKey } = await newBot({ widget: { multiple_chats: true } });
  const ctx = await visitor();
  const page = await openChat(ctx, `?client_key=${bot.client_key}`);
  await ready(page);
  await sendText(page, 'first chat');
  await page.locator('.message.incoming', { hasText: 'first chat' }).waitFor();
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('#chat-list li').length === 2);
  // Going back to the first chat: its history is read now, and handed to the page only later.
  let release = () => undefined as void;
  const held = new Promise<void>((r) => (release = r));
  let firstChat = '';
  await ctx.route(/\/api\/client\/chats\/[^/]+\/messages$/, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    firstChat = new URL(route.request().url()).pathname.split('/')[4];
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  }, { times: 1 });
  await page.getByRole('navigation', { name: 'Chats' }).getByRole('button', { name: 'Chat', exact: true }).click();
  await until(() => firstChat !== '', 15_000, 'the history request');
  const reply = await call('POST', `/api/bot/chats/${firstChat}/messages`, { headers: { authorization: `Bearer ${secretKey}` }, json: { content: 'while loading' } });
  expect(reply.status).toBe(201);
  await page.locator('.message.outcoming', { hasText: 'while loading' }).waitFor();
  release();
  await page.waitForResponse((r) => r.url().endsWith(`/chats/${firstChat}/messages`));
  // The page applies the history it got, keeping the message that came meanwhile.
  const shown = async () => JSON.stringify(await page.locator('.message .text').allTextContents());
  await until(async () => (await shown()) === JSON.stringify(['first chat', 'while loading']), 15_000, 'the history with the message that came while it loaded');
});

test('a second tab of the same visitor shows a message sent from the first', async () => {
  const ctx = await visitor();
  const first = await openChat(ctx);
  await ready(first);
  const second = await openChat(ctx);
  await ready(second);
  await sendText(first, 'from tab one');
  await second.locator('.message.incoming', { hasText: 'from tab one' }).waitFor();
  await second.locator('.message.outcoming', { hasText: 'You said: from tab one' }).waitFor();
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
