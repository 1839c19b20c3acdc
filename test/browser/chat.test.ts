// The chat page in real headless Chromium against the running local stack (with its echo bot): sending, streamed
// replies, history, files, the unread badge, reconnects, several chats and tabs. Its visitor id, origins and the
// page without realtime: chat-visitor.test.ts.
// Code inside page.evaluate runs in the page: it reads the page's globals through test/browser/page-globals.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { call, newBot } from '../support/api';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { ROOT } from '../support/local-process';
import { until } from '../support/wait';
import { present } from '../support/contract';
import type { PageGlobals } from './page-globals';
import { chatPageHooks, demo, ready, sendText, storedExternalId } from './chat-page';

/** The page as the streamed-reply test instruments it: each version of the bot's bubble, and whether typing showed. */
type Instrumented = PageGlobals & { __seen: { typing: boolean; versions: string[] } };

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const OUT = join(ROOT, 'test-output');

const { visitor, openChat, pageErrors } = chatPageHooks();

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
