// Every fenced code block of the docs (README.md, docs/*.md, packages/client/README.md) is run or checked here, by
// its language, so a snippet that stops working fails the build. A block of a language without a rule fails.
//
// What each language gets:
// - text: a diagram, a tree or a URL shape; nothing to run, nothing checked.
// - json: parses; a body the API sends (a webhook's event) validates against docs/openapi.yaml's schema. A string
//   holding `…` is an elided example value: a schema error on it alone is not counted.
// - sh: a block with a curl command is RUN in bash, command by command, against the run's stack, on a fresh bot
//   with a user (external_id crm-42) and a chat; each curl must answer 2xx and print the `"key":value` pairs its
//   comment shows (ids and instants for presence only); a read that does not show its state yet is read again
//   until it does (the docs say to poll). npm/npx commands cannot run in a test (npm start, a deploy, npm test
//   itself): they are CHECKED: the npm script exists, `npm run bot` subcommands and flags are in bin/bot.ts's
//   usage, `npm run deploy` arguments are accepted by bin/deploy.ts (deployCommand, which runs nothing), the
//   environment variables named are read by the program started, a package name is the package's own. Today
//   that is README's install/start/test line, the bot CLI lines, the deploy lines, the echo bot's start, the
//   integration suite's lines and the package's npm install; every other sh block is run.
// - js/ts: RUN in Node (a rule below per block: the globals a page or a server would give it, what it must do).
//   Blocks that need a DOM or XMLHttpRequest, and html blocks, run in one headless Chromium on a page of a second
//   local server (another origin, as a website): the package's script-tag build at the path the block names, its
//   ES module build for `import ... from '@nexus-chat/client'` through an import map, the widget from the stack.
//
// Substitution (the only changes to a block before it runs): http://localhost:3000, localhost:3000 and
// https://chat.example.com become the stack's URL, http://localhost:4569 the S3 emulator's; cli_... / cli_… the
// block's bot's client key, sk_… its secret key; `./.data/demo-bot.json` (what npm start writes) is written for
// the block's bot in its folder; `NAME=…` takes NAME from the command before it (TOKEN: its session_token,
// CHAT: its id); `<file id>` is the id of the file the block made first; `# N. POST the bytes` is where the test
// POSTs a file of the declared size and type to the presigned upload, as the js block under it does.
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiUrl, call, newBot, newSession } from '../support/api';
import { Bash, CURL_STATUS, docBlocks, shCommands, shownPairs, type Block } from '../support/doc-blocks';
import { checkCommands, local, postUpload, where, type Ticket } from '../support/doc-run';
import { png } from '../support/files';
import { checkSchema } from '../support/openapi';
import { DocSite, IMPORT_MAP, SCRIPT_TAG_PATH } from '../support/doc-site';
import { until } from '../support/wait';
import { asBot, block, closeOpened, NODE_RUNS, walkThrough } from '../support/doc-node-runs';

afterEach(closeOpened);

const BLOCKS = docBlocks();
const of = (lang: string) => BLOCKS.filter((b) => b.lang === lang);
const LANGS = ['text', 'json', 'sh', 'js', 'ts', 'html'];

/** The blocks run in Chromium (a DOM, XMLHttpRequest, a script tag): the last tests of this file. */
const BROWSER_BLOCKS = ['docs/uploads.md js#0', 'docs/widget.md js#0', 'docs/widget.md html#0', 'packages/client/README.md html#0', 'packages/client/README.md js#0'];


test('every block is of a language with a rule, and closed', () => {
  expect(BLOCKS.length).toBeGreaterThan(30);
  expect(BLOCKS.filter((b) => !LANGS.includes(b.lang)).map((b) => `${where(b)}: \`\`\`${b.lang || '(none: tag it text)'}`)).toEqual([]);
});

test('json blocks parse; an API body validates against docs/openapi.yaml', () => {
  const schemaOf: Record<string, string> = { 'message.created': 'WebhookMessageCreated', 'chat.unread_reminder': 'WebhookUnreadReminder' };
  for (const b of of('json')) {
    const value = JSON.parse(b.code) as { event?: string };
    const schema = schemaOf[value.event ?? ''];
    if (!schema) throw new Error(`${where(b)}: which body is this? Add its schema to the rule`);
    const elided = (path: string) => JSON.stringify(path.split('/').slice(1).reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], value) ?? '').includes('…');
    const problems = checkSchema(schema, value).filter((p) => !elided(/^(\S*)/.exec(p)?.[1] ?? ''));
    expect({ block: where(b), problems }).toEqual({ block: where(b), problems: [] });
  }
});

test('sh commands that cannot run in a test are checked: scripts, CLI subcommands and flags, deploy arguments, env vars', () => {
  const { problems, checked } = checkCommands(of('sh'));
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(15);
});

/** The walk-through itself (a block that opens its own session) starts from the bot alone. */
async function fixtureFor(b: Block) {
  if (!/^TOKEN=/m.test(b.code)) return walkThrough();
  const { bot, secretKey } = await newBot();
  return { bot, secretKey, session: undefined, chatId: '' };
}

const FROM_OUTPUT: Record<string, (o: Record<string, unknown>) => unknown> = { TOKEN: (o) => o.session_token, CHAT: (o) => o.id };

// Side by side: each block has its own bot, and most of a block's time is the stack's (an erasure, an upload).
test.concurrent.each(of('sh').filter((b) => /(^|\s|\()curl /m.test(b.code)).map((b) => [where(b), b] as const))('sh %s runs against the stack as it says', async (_at, b) => {
  const { bot, secretKey, session, chatId } = await fixtureFor(b);
  const dir = mkdtempSync(join(tmpdir(), 'doc-sh-'));
  mkdirSync(join(dir, '.data'));
  writeFileSync(join(dir, '.data', 'demo-bot.json'), JSON.stringify({ bot_id: bot.id, client_key: bot.client_key, secret_key: secretKey }));
  writeFileSync(join(dir, 'cat.png'), png(2048));
  const env = { API: `${apiUrl()}/api/client`, TOKEN: session?.session_token ?? '', CHAT: chatId, SK: secretKey, USER_ID: session?.user.id ?? '' };
  const bash = new Bash(dir, env);
  try {
    await bash.run(CURL_STATUS);
    let last: Record<string, unknown> = {};
    let fileId: string | undefined;
    for (const c of shCommands(local(b.code, { client_key: bot.client_key, secret_key: secretKey }))) {
      if (/^# \d+\. POST the bytes/.test(c.text)) {
        await postUpload(last as unknown as Ticket);
        continue;
      }
      if (c.text.startsWith('#')) continue;
      const placeholder = /^([A-Z_]+)=…/.exec(c.text);
      if (placeholder) {
        const value = FROM_OUTPUT[placeholder[1]]?.(last);
        if (typeof value !== 'string') throw new Error(`${where(b)}: no rule gives ${placeholder[1]} from ${JSON.stringify(last)}`);
        await bash.run(`${placeholder[1]}='${value}'`);
        continue;
      }
      const text = fileId ? c.text.replace(/<file id>/g, fileId) : c.text;
      const isRead = /curl /.test(text) && !/ -X | -d | -F /.test(text);
      const pairs = shownPairs(local(c.says));
      let r = await bash.run(text);
      const missing = () => pairs.filter((p) => !r.out.includes(p.literal ? `"${p.key}":${p.literal}` : `"${p.key}":`));
      if (isRead) await until(async () => missing().length === 0 || ((r = await bash.run(text)), false), 15_000, `${text} to show ${c.says}`);
      expect({ command: text, code: r.code, stderr: r.stderr }).toEqual({ command: text, code: 0, stderr: '' });
      if (/curl /.test(text)) expect({ command: text, answer: r.status >= 200 && r.status < 300 ? '2xx' : `${r.status} ${r.out}` }).toEqual({ command: text, answer: '2xx' });
      const status = /^(\d{3})\b/.exec(c.says);
      if (status) expect({ command: text, status: r.status }).toEqual({ command: text, status: Number(status[1]) });
      if (/^\[\]/.test(c.says)) expect(r.out).toBe('[]');
      expect({ command: text, missing: missing() }).toEqual({ command: text, missing: [] });
      try {
        last = JSON.parse(r.out) as Record<string, unknown>;
      } catch {
        last = {};
      }
      const made = (last.file as { id?: string } | undefined)?.id ?? (last.type === 'photo' ? (last.id as string) : undefined);
      fileId ??= made;
    }
  } finally {
    bash.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every js, ts and html block has a rule: run in Node or in Chromium', () => {
  const rules = [...Object.keys(NODE_RUNS), ...BROWSER_BLOCKS];
  expect(BLOCKS.filter((b) => ['js', 'ts', 'html'].includes(b.lang) && !rules.includes(b.key)).map((b) => `${where(b)} (${b.key})`)).toEqual([]);
});

test.each(Object.keys(NODE_RUNS))('js/ts %s runs in Node and does what it says', async (key) => {
  await NODE_RUNS[key]();
});

// The browser blocks, on pages of a second local server (a website's origin) in one Chromium.
let site: DocSite;
beforeAll(async () => {
  site = await DocSite.start();
}, 30_000);
afterAll(() => site?.close());

type BotChats = { chats: { id: string; user: { id: string; external_id: string | null } }[] };
const botChats = async (secretKey: string) => (await call<BotChats>('GET', '/api/bot/chats', { headers: asBot(secretKey) })).body.chats;
const history = async (secretKey: string, chatId: string) => (await call('GET', `/api/bot/chats/${chatId}/messages`, { headers: asBot(secretKey) })).body;

test("packages/client/README.md in a page: the script tag makes a client; the quick start shows a reply, sends the form's text and a file", async () => {
  const { bot, secretKey } = await newBot({ allowed_origins: [site.origin] });
  const tag = local(block('packages/client/README.md html#0').code, bot);
  expect(tag).toContain(`src="${SCRIPT_TAG_PATH}"`);
  const page = await site.open(
    '/quick-start',
    `<!doctype html><html><head><meta charset="utf-8">${IMPORT_MAP}</head><body><ul id="messages"></ul>
<form><input name="text"><button>Send</button></form><input type="file" id="file">
${tag}
<script type="module">${local(block('packages/client/README.md js#0').code, bot)}</script></body></html>`,
  );
  // The tag's client (a page-wide const).
  expect(await page.evaluate('typeof client.chat')).toBe('function');
  await until(async () => (await botChats(secretKey)).length === 1, 10_000, 'the visitor’s chat');
  const [{ id: chatId }] = await botChats(secretKey);
  // A reply shown means the quick start's listeners are all on (they are set in one go after client.chat()).
  await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: asBot(secretKey), json: { content: 'Hi, this is Maria', sender: 'operator' } });
  await page.locator('#messages li', { hasText: 'Hi, this is Maria' }).waitFor({ timeout: 10_000 });
  await page.fill('input[name=text]', 'Where is my order?');
  await page.click('button');
  await page.locator('#messages li', { hasText: 'Where is my order?' }).waitFor({ timeout: 10_000 });
  await page.setInputFiles('#file', { name: 'cat.png', mimeType: 'image/png', buffer: png(2048) });
  await until(async () => (await history(secretKey, chatId)).some((m) => m.files?.[0]?.name === 'cat.png'), 10_000, 'the file sent');
  expect((await history(secretKey, chatId)).map((m) => m.content)).toEqual(expect.arrayContaining(['Hi, this is Maria', 'Where is my order?']));
  expect(page.errors).toEqual([]);
});

// `externalIdHash: '…'` is the HMAC the site's server computes: the test computes it with the bot's identity secret.
test('docs/widget.md in a page: the script tag loads the widget; the host page identifies its visitor and shows unread replies in its title', async () => {
  const { bot, secretKey } = await newBot({ allowed_origins: [site.origin], identity_verification: true });
  const hash = createHmac('sha256', bot.identity_secret as string).update('customer-1234').digest('hex');
  const host = local(block('docs/widget.md js#0').code, bot).replace(`externalIdHash: '…'`, `externalIdHash: '${hash}'`);
  const tag = local(block('docs/widget.md html#0').code, bot);
  expect(tag).toBe(`<script src="${apiUrl()}/widget.js" data-client-key="${bot.client_key}" async></script>`);
  const page = await site.open('/shop', `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title><script>${host}</script></head><body>${tag}</body></html>`);
  await until(async () => (await botChats(secretKey)).some((c) => c.user.external_id === 'customer-1234'), 10_000, 'the identified visitor’s chat');
  const chat = (await botChats(secretKey)).find((c) => c.user.external_id === 'customer-1234')!;
  await call('POST', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey), json: { content: 'Welcome back, Ada', sender: 'operator' } });
  await page.waitForFunction("document.title === '(1) Shop'", undefined, { timeout: 10_000 });
  expect(page.errors).toEqual([]);
});

test('docs/uploads.md in a page: every field, then the file, POSTed to S3; the file settles as uploaded', async () => {
  const { bot } = await newBot();
  const session = await newSession(bot.client_key);
  const bytes = png(2048);
  const ticket = await call('POST', '/api/client/files/uploads', { token: session.session_token, json: { name: 'cat.png', size: bytes.length, mime_type: 'image/png' } });
  expect(ticket.status).toBe(201);
  const page = await site.open('/upload', '<!doctype html><progress></progress>');
  const settled = await page.evaluate(`new Promise((waitForFile, fail) => {
    const ticket = ${JSON.stringify(ticket.body)};
    const file = new File([new Uint8Array(${JSON.stringify([...bytes])})], 'cat.png', { type: 'image/png' });
    const bar = document.querySelector('progress');
    const showS3Error = (text) => fail(new Error(text));
    ${block('docs/uploads.md js#0').code}
  })`);
  expect(settled).toBe((ticket.body as { file: { id: string } }).file.id);
  await until(async () => (await call('GET', `/api/client/files/${settled as string}`, { token: session.session_token })).body.status === 'uploaded', 10_000, 'the file uploaded');
  expect(await page.evaluate("document.querySelector('progress').value")).toBe(1);
});
