// A website's own chat in at most 20 lines on the client package's script-tag build, on another origin (a second
// local server; the bot's allowed_origins set with the bot CLI), in real headless Chromium: a session, a message,
// the bot's reply and its edit, a 6 MB file, a dropped socket during which a reply and an edit of an old message
// arrive, an expired realtime token, and a reload.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { SignJWT } from 'jose';
import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl, call } from '../support/api';
import { ROOT } from '../support/local-process';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { until } from '../support/wait';

/** The integrator's code: everything the page does, on NexusChat (the package's script-tag build). */
const PAGE_SCRIPT = `
const client = NexusChat.createChatClient({ apiUrl: API_URL, clientKey: CLIENT_KEY });
client.on('status', (s) => (document.body.dataset.status = s));
client.chat().then((chat) => {
  const list = document.querySelector('#messages');
  const render = () => list.replaceChildren(...chat.messages.map((m) =>
    Object.assign(document.createElement('li'), { textContent: m.content + (m.files?.length ? ' [' + m.files[0].name + ']' : '') })));
  render();
  chat.on('message', render);
  chat.on('updated', render);
  document.querySelector('form').addEventListener('submit', (e) => {
    e.preventDefault();
    chat.sendText(e.target.text.value);
    e.target.reset();
  });
  document.querySelector('#file').addEventListener('change', (e) => chat.sendFile(e.target.files[0]));
});`;

let browser: Browser;
let site: Server;
let proxy: FaultProxy;
let dir: string;
let origin = '';
let bot: { bot_id: string; client_key: string; secret_key: string };
let script = '';

const page = () => `<!doctype html><html><head><meta charset="utf-8"><script src="/nexus-chat.min.js"></script></head><body>
<ul id="messages" aria-label="Messages"></ul><form><input name="text" aria-label="Message"><button>Send</button></form>
<input type="file" id="file" aria-label="File">
<script>const API_URL = ${JSON.stringify(proxy.url)}; const CLIENT_KEY = ${JSON.stringify(bot.client_key)};${PAGE_SCRIPT}</script></body></html>`;

beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'client-page-'));
  // The package's script-tag build, as packages/client/build.mjs makes it (in memory here).
  const out = await build({ entryPoints: [join(ROOT, 'packages', 'client', 'src', 'index.ts')], bundle: true, format: 'iife', globalName: 'NexusChat', minify: true, target: 'es2020', write: false, logLevel: 'silent' });
  script = out.outputFiles[0].text;
  site = createServer((req, res) => {
    const js = req.url === '/nexus-chat.min.js';
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(js ? script : page());
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  proxy = await startFaultProxy(apiUrl());
  // The bot, made with the CLI as its owner would, with this page's origin allowed.
  const cli = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'bot.ts'), 'create', '--name', 'Shop', '--allowed-origin', origin, '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (cli.status !== 0) throw new Error(cli.stderr);
  bot = JSON.parse(cli.stdout) as typeof bot;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => site?.close(r));
  proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

const asBot = async (method: string, path: string, json?: unknown) =>
  (await call(method, `/api/bot${path}`, { json, headers: { authorization: `Bearer ${bot.secret_key}` } })).body as { id: string; chats?: { id: string }[] };
const items = (p: Page) => p.getByRole('list', { name: 'Messages' }).locator('li').allTextContents();

/** A realtime token as the server signs them (the run's JWT secret), already expired. */
async function expiredRealtimeToken(userId: string): Promise<string> {
  const secret = new TextEncoder().encode(readFileSync(process.env.JWT_SECRET_FILE as string, 'utf8').trim());
  const exp = Math.floor(Date.now() / 1000) - 5;
  return new SignJWT({ bot: bot.bot_id }).setProtectedHeader({ alg: 'HS256', typ: 'nexus-realtime+jwt' }).setIssuer('nexus').setAudience('nexus:realtime').setSubject(userId).setIssuedAt(exp - 60).setExpirationTime(exp).sign(secret);
}

test('the page is at most 20 lines of code on the package', () => {
  expect(PAGE_SCRIPT.trim().split('\n').length).toBeLessThanOrEqual(20);
});

test('another origin, 20 lines: send, a reply and its edit, a 6 MB file, a dropped socket, an expired realtime token, a reload', async () => {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(e.message));
  // Every socket the page opens passes through here: the test can cut it, and hold the next ones.
  let held = false;
  const tokens: string[] = [];
  let live: WebSocketRoute | undefined;
  await p.routeWebSocket(/token=/, (ws) => {
    tokens.push(new URL(ws.url()).searchParams.get('token') ?? '');
    if (held) return void ws.close({ code: 1006 });
    live = ws;
    ws.connectToServer();
  });
  // The first session's realtime token has expired: the handshake is refused, and the package renews it.
  proxy.rewriteSession = async (s) => {
    const expired = await expiredRealtimeToken(s.user.id);
    return { ...s, realtime: { ...s.realtime!, token: expired, url: s.realtime!.url.replace(/token=[^&]+/, `token=${expired}`) } };
  };
  await p.goto(`${origin}/`);
  await p.waitForSelector('body[data-status="online"]', { timeout: 20_000 });
  expect(new Set(tokens).size).toBeGreaterThanOrEqual(2);

  // A message, the bot's reply and its edit.
  await p.getByRole('textbox', { name: 'Message' }).fill('hello');
  await p.getByRole('button', { name: 'Send' }).click();
  await until(async () => (await items(p)).includes('hello'), 10_000, 'the message');
  const chatId = (await asBot('GET', '/chats')).chats![0].id;
  const old = await asBot('POST', `/chats/${chatId}/messages`, { content: 'first answer' });
  await until(async () => (await items(p)).includes('first answer'), 10_000, 'the reply');
  await asBot('PATCH', `/chats/${chatId}/messages/${old.id}`, { content: 'first answer, edited', version: 1 });
  await until(async () => (await items(p)).includes('first answer, edited'), 10_000, 'the edit');
  // 21 more replies: the edited one is then more than 20 messages back.
  for (let i = 0; i < 21; i++) await asBot('POST', `/chats/${chatId}/messages`, { content: `filler ${i}` });
  await until(async () => (await items(p)).includes('filler 20'), 10_000, 'the fillers');

  // 6 MB: straight to storage.
  const big = join(dir, 'catalogue.pdf');
  writeFileSync(big, '%PDF-1.4\n');
  truncateSync(big, 6 * 1024 * 1024);
  await p.setInputFiles('#file', big);
  await until(async () => (await items(p)).some((t) => t.endsWith('[catalogue.pdf]')), 30_000, 'the 6 MB file');

  // The socket drops and the next ones are held: meanwhile a reply, and an edit of the old one.
  held = true;
  await live!.close({ code: 1006 });
  await p.waitForSelector('body:not([data-status="online"])');
  const missed = await asBot('POST', `/chats/${chatId}/messages`, { content: 'while you were away' });
  await asBot('PATCH', `/chats/${chatId}/messages/${old.id}`, { content: 'first answer, edited again', version: 2 });
  held = false;
  await p.waitForSelector('body[data-status="online"]', { timeout: 20_000 });
  await until(async () => (await items(p)).includes('first answer, edited again') && (await items(p)).includes('while you were away'), 20_000, 'the catch-up');
  const shown = await items(p);
  expect(shown.filter((t) => t === 'while you were away')).toHaveLength(1);
  expect(shown.filter((t) => t.startsWith('first answer'))).toEqual(['first answer, edited again']);
  expect(shown).toHaveLength(1 + 1 + 21 + 1 + 1);
  expect(missed.id).toEqual(expect.any(String));

  // A reload: the same visitor, the same history, once each.
  await p.reload();
  await until(async () => JSON.stringify(await items(p)) === JSON.stringify(shown), 15_000, 'the same history after a reload');
  expect(errors).toEqual([]);
}, 120_000);
