// The widget (/widget.js) on a page of another origin, in real headless Chromium: one script tag, a hostile
// stylesheet and a strict Content-Security-Policy on the host page. The panel still looks as it should, talks to
// the bot (a quick reply answered too), counts unread replies for the host page, and takes another visitor through
// identify().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl, call, newBot, newSession } from '../support/api';
import { until } from '../support/wait';

const HOSTILE_CSS = '* { all: unset !important; } html, body, div, button, p, li { font-size: 40px !important; color: #0f0 !important; }';

let browser: Browser;
let host: Server;
let hostOrigin = '';
/** What the host page's script tag names: set per test before the page loads. */
let clientKey = '';
let csp = '';

// The host page: its own content, the hostile stylesheet, the widget's tag, and a listener of its events.
const page = () => `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/hostile.css"><script src="/host.js"></script></head>
<body><h1>A shop</h1><script src="${apiUrl()}/widget.js" data-client-key="${clientKey}" async></script></body></html>`;
const HOST_JS = `window.__unread = []; window.__violations = [];
addEventListener('securitypolicyviolation', (e) => __violations.push(e.violatedDirective + ' ' + e.blockedURI));
addEventListener('nexuschat:ready', (e) => e.detail.on('unread', (n) => __unread.push(n)));`;

beforeAll(async () => {
  browser = await launchChromium();
  host = createServer((req, res) => {
    const [type, body] = req.url === '/hostile.css' ? ['text/css', HOSTILE_CSS] : req.url === '/host.js' ? ['text/javascript', HOST_JS] : ['text/html', page()];
    res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'content-security-policy': csp });
    res.end(body);
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => host?.close(r));
});

const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

/** The sources docs/widget.md tells a host page to allow: the widget's and API's origin, the realtime URL's, the files'. */
async function documentedCsp(key: string): Promise<string> {
  const realtime = (await newSession(key)).realtime;
  const ws = realtime ? new URL(realtime.url).origin : '';
  const files = new URL(process.env.S3_ENDPOINT as string).origin;
  return [`default-src 'self'`, `script-src 'self' ${apiUrl()}`, `connect-src ${apiUrl()} ${ws} ${files}`, `img-src ${apiUrl()} ${files} data: blob:`, `style-src 'self'`].join('; ');
}

/** A bot with these widget settings (and allowed_origins), and the host page naming it, under the documented CSP. */
async function widgetOn(settings: Parameters<typeof newBot>[0]): Promise<{ p: Page; secretKey: string }> {
  const { bot, secretKey } = await newBot(settings);
  clientKey = bot.client_key;
  csp = await documentedCsp(bot.client_key);
  return { p: await hostPage(), secretKey };
}

async function hostPage(): Promise<Page> {
  const ctx = await browser.newContext();
  contexts.push(ctx);
  const p = await ctx.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(e.message));
  (p as Page & { errors: string[] }).errors = errors;
  await p.goto(`${hostOrigin}/`);
  return p;
}

const botReply = async (secretKey: string, chatId: string, content: string) =>
  (await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: { authorization: `Bearer ${secretKey}` }, json: { content } })).body;

test('one script tag on another origin, under a hostile stylesheet and the documented CSP: a working panel in the bot\'s colour, unread counted for the host page', async () => {
  const { p, secretKey } = await widgetOn({ allowed_origins: [], widget: { primary_color: '#c026d3', multiple_chats: false, attachments: true } });
  const launcher = p.getByRole('button', { name: /open chat/i });
  await launcher.waitFor({ timeout: 15_000 });
  // The host's CSS reaches neither the launcher nor the panel: their own size, colour and font size (the
  // launcher's is the browser's initial 16px, the messages' the widget's 14px; never the host's 40px).
  const style = (selector: string) =>
    p.evaluate(`(() => { const el = document.querySelector('nexus-chat-widget').shadowRoot.querySelector('${selector}'); const s = getComputedStyle(el); return [s.width, s.backgroundColor, s.fontSize, s.position]; })()`);
  expect(await style('.launcher')).toEqual(['56px', 'rgb(192, 38, 211)', '16px', 'relative']);
  expect(await p.evaluate(`getComputedStyle(document.querySelector('nexus-chat-widget')).position`)).toBe('fixed');

  await launcher.click();
  const box = p.getByRole('textbox', { name: 'Message' });
  await box.fill('hello from the shop');
  await box.press('Enter');
  const log = p.getByRole('log', { name: 'Messages' });
  await log.getByText('hello from the shop').waitFor();
  expect(await style('.message.incoming')).toEqual([expect.any(String), 'rgb(192, 38, 211)', '14px', 'static']);

  // The bot answers; the panel is open, so the reply is read at once.
  const chats = (await call('GET', '/api/bot/chats', { headers: { authorization: `Bearer ${secretKey}` } })).body.chats as { id: string }[];
  expect(chats).toHaveLength(1);
  await botReply(secretKey, chats[0].id, 'Hi! How can I help?');
  await log.getByText('Hi! How can I help?').waitFor();
  // A bot's question, drawn and answered as on the chat page, under the host's CSS and CSP.
  const headers = { authorization: `Bearer ${secretKey}` };
  const items = [{ title: 'Small', value: 's' }, { title: 'Large', value: 'l' }];
  const asked = (await call('POST', `/api/bot/chats/${chats[0].id}/messages`, { headers, json: { content: 'Which size?', content_type: 'input_select', content_attributes: { items } } })).body as { id: string };
  await log.getByRole('group', { name: 'Which size?' }).getByRole('button', { name: 'Large' }).click();
  await log.getByRole('button', { name: 'Large', pressed: true, disabled: true }).waitFor();
  const answered = async () => ((await call('GET', `/api/bot/chats/${chats[0].id}/messages`, { headers })).body as { id: string; content_attributes?: { submitted_values?: unknown } }[]).find((m) => m.id === asked.id)?.content_attributes?.submitted_values;
  await until(async () => (await answered()) === 'l', 10_000, 'the answer in the bot’s history');

  // Closed: a reply is unread, on the badge and for the host page's listener; opened again, read.
  await p.getByRole('button', { name: 'Close chat' }).first().click();
  await botReply(secretKey, chats[0].id, 'Still there?');
  await p.getByRole('button', { name: /open chat, 1 unread/i }).waitFor();
  await until(async () => (await p.evaluate<number[]>('window.__unread')).at(-1) === 1, 10_000, 'the unread event');
  await p.getByRole('button', { name: /open chat/i }).click();
  await log.getByText('Still there?').waitFor();
  await until(async () => (await p.evaluate<number[]>('window.__unread')).at(-1) === 0, 10_000, 'read once shown');

  expect(await p.evaluate('window.__violations')).toEqual([]);
  expect((p as Page & { errors: string[] }).errors).toEqual([]);
});

test('identify() from the host page: the visitor who logged in gets their own session and chat; open() and close() drive the panel', async () => {
  const { p, secretKey } = await widgetOn({ widget: { primary_color: '#16a34a', multiple_chats: false, attachments: false } });
  await p.getByRole('button', { name: /open chat/i }).waitFor({ timeout: 15_000 });
  // No attachments for this bot: no file input.
  expect(await p.evaluate(`document.querySelector('nexus-chat-widget').shadowRoot.querySelectorAll('input[type=file]').length`)).toBe(0);
  await p.evaluate(`window.nexusChatWidget.identify({ externalId: 'shopper-42', firstName: 'Ada' }).then(() => window.nexusChatWidget.open())`);
  const box = p.getByRole('textbox', { name: 'Message' });
  await box.fill('logged in now');
  await box.press('Enter');
  await p.getByRole('log', { name: 'Messages' }).getByText('logged in now').waitFor();
  const user = (await call('GET', '/api/bot/users?external_id=shopper-42', { headers: { authorization: `Bearer ${secretKey}` } })).body as { first_name?: string };
  expect(user.first_name).toBe('Ada');
  await p.evaluate('window.nexusChatWidget.close()');
  await p.getByRole('textbox', { name: 'Message' }).waitFor({ state: 'hidden' });
  expect((p as Page & { errors: string[] }).errors).toEqual([]);
});

test('a bot with multiple_chats: a conversation picker and a new conversation, each with its own messages', async () => {
  const { p, secretKey } = await widgetOn({ widget: { primary_color: '#0ea5e9', multiple_chats: true, attachments: true } });
  await p.getByRole('button', { name: /open chat/i }).click();
  const box = p.getByRole('textbox', { name: 'Message' });
  await box.fill('in the first');
  await box.press('Enter');
  const log = p.getByRole('log', { name: 'Messages' });
  await log.getByText('in the first').waitFor();
  await p.getByRole('button', { name: 'New conversation' }).click();
  const picker = p.getByRole('combobox', { name: 'Conversation' });
  await until(async () => (await picker.locator('option').count()) === 2, 10_000, 'two conversations');
  await log.getByText('in the first').waitFor({ state: 'detached' });
  await box.fill('in the second');
  await box.press('Enter');
  await log.getByText('in the second').waitFor();
  const chats = (await call('GET', '/api/bot/chats', { headers: { authorization: `Bearer ${secretKey}` } })).body.chats as { id: string }[];
  expect(chats).toHaveLength(2);
  // Back to the first: its own message only.
  await picker.selectOption({ index: 1 });
  await log.getByText('in the first').waitFor();
  expect(await log.getByText('in the second').count()).toBe(0);
  expect((p as Page & { errors: string[] }).errors).toEqual([]);
});
