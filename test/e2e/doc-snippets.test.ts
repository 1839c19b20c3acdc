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
//   environment variables named are read by the program started, a package name is the package's own.
// - js/ts: RUN in Node (a rule below per block: the globals a page or a server would give it, what it must do).
//   Blocks that need a DOM or XMLHttpRequest are run in Chromium by test/browser/doc-snippets.test.ts.
//
// Substitution (the only changes to a block before it runs): http://localhost:3000, localhost:3000 and
// https://chat.example.com become the stack's URL, http://localhost:4569 the S3 emulator's; cli_... / cli_… the
// block's bot's client key, sk_… its secret key; `./.data/demo-bot.json` (what npm start writes) is written for
// the block's bot in its folder; `NAME=…` takes NAME from the command before it (TOKEN: its session_token,
// CHAT: its id); `<file id>` is the id of the file the block made first; `# N. POST the bytes` is where the test
// POSTs a file of the declared size and type to the presigned upload, as the js block under it does.
import { createHmac } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { createChatClient, memoryStorage, type ChatClientOptions } from '../../packages/client/src';
import { deployCommand } from '../../bin/deploy';
import { signWebhook } from '../../lambdas/adapters/webhooks';
import { apiUrl, call, newBot, newSession } from '../support/api';
import { Bash, CURL_STATUS, docBlocks, shCommands, shownPairs, type Block } from '../support/doc-blocks';
import { png } from '../support/files';
import { ROOT } from '../support/local-process';
import { checkSchema } from '../support/openapi';
import { until } from '../support/wait';

const BLOCKS = docBlocks();
const of = (lang: string) => BLOCKS.filter((b) => b.lang === lang);
const where = (b: Block) => `${b.file}:${b.line}`;
const LANGS = ['text', 'json', 'sh', 'js', 'ts', 'html'];

/** The blocks run in Chromium (a DOM, XMLHttpRequest): test/browser/doc-snippets.test.ts. */
export const BROWSER_BLOCKS = ['docs/uploads.md js#0', 'docs/widget.md js#0', 'docs/widget.md html#0', 'packages/client/README.md html#0', 'packages/client/README.md js#0'];

function local(code: string, keys: { client_key?: string; secret_key?: string } = {}): string {
  let out = code.replace(/https?:\/\/localhost:3000|localhost:3000|https:\/\/chat\.example\.com/g, apiUrl()).replace(/http:\/\/localhost:4569/g, process.env.S3_ENDPOINT as string);
  if (keys.client_key) out = out.replace(/cli_(\.\.\.|…)/g, keys.client_key);
  if (keys.secret_key) out = out.replace(/sk_…/g, keys.secret_key);
  return out;
}

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
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const botUsage = /const USAGE = `([\s\S]*?)`;/.exec(readFileSync(join(ROOT, 'bin', 'bot.ts'), 'utf8'))?.[1] ?? '';
  const clientPkg = JSON.parse(readFileSync(join(ROOT, 'packages', 'client', 'package.json'), 'utf8')) as { name: string };
  const readerOf: Record<string, string> = { bot: 'bin/bot.ts', 'test:integration': 'test/stack/global-setup.ts' };
  const problems: string[] = [];
  let checked = 0;
  for (const b of of('sh').filter((x) => !/(^|\s|\()curl /m.test(x.code))) {
    for (const c of shCommands(b.code).filter((x) => !x.text.startsWith('#'))) {
      const line = c.text.replace(/\s#\s.*$/, '');
      for (const part of line.split('&&').map((p) => p.trim())) {
        checked++;
        const assignments = /^(?:[A-Z_]+=(?:<[^>]*>|[^\s<])*\s+)*/.exec(part)?.[0] ?? '';
        const env = [...assignments.matchAll(/([A-Z_]+)=/g)].map((m) => m[1]);
        const cmd = part.slice(assignments.length);
        let reader: string | undefined;
        const run = /^npm (?:run (\S+)|(start|test))(?:\s+--\s+(.*))?$/.exec(cmd);
        if (run) {
          const script = run[1] ?? run[2];
          if (!pkg.scripts[script]) problems.push(`${where(b)}: no npm script "${script}"`);
          reader = readerOf[script];
          const args = run[3] ?? '';
          if (script === 'bot') {
            const sub = args.split(/\s+/)[0];
            if (!botUsage.includes(`npm run bot -- ${sub} `) && !botUsage.includes(`npm run bot -- ${sub}\n`)) problems.push(`${where(b)}: no bot subcommand "${sub}"`);
            for (const flag of args.match(/--[a-z][a-z-]*/g) ?? []) if (!botUsage.includes(`${flag} `) && !botUsage.includes(`${flag}]`)) problems.push(`${where(b)}: bin/bot.ts has no ${flag}`);
          }
          if (script === 'deploy') {
            try {
              deployCommand(args.split(/\s+/).filter(Boolean));
            } catch (err) {
              problems.push(`${where(b)}: npm run deploy -- ${args}: ${(err as Error).message}`);
            }
          }
        } else if (/^npm install( @\S+)?$/.test(cmd)) {
          const name = cmd.split(' ')[2];
          if (name && name !== clientPkg.name) problems.push(`${where(b)}: no package ${name} here (packages/client is ${clientPkg.name})`);
        } else if (/^npx tsx (\S+)$/.test(cmd)) {
          reader = cmd.split(' ')[2];
          if (!existsSync(join(ROOT, reader))) problems.push(`${where(b)}: no ${reader}`);
        } else problems.push(`${where(b)}: no rule for the command "${cmd}"`);
        for (const name of env) {
          if (!reader || !readFileSync(join(ROOT, reader), 'utf8').includes(name)) problems.push(`${where(b)}: ${reader ?? cmd} does not read ${name}`);
        }
      }
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(15);
});

/** A bot, its user crm-42 (Ada) and a chat: what the README's walk-through leaves behind, for the blocks after it. */
async function walkThrough() {
  const { bot, secretKey } = await newBot();
  const session = await newSession(bot.client_key, { external_id: 'crm-42', first_name: 'Ada' });
  const chat = await call('POST', '/api/client/chats', { token: session.session_token, json: { name: 'Support' } });
  return { bot, secretKey, session, chatId: chat.body.id };
}

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
      const shows = () => pairs.every((p) => (p.literal ? r.out.includes(`"${p.key}":${p.literal}`) : r.out.includes(`"${p.key}":`)));
      if (isRead) await until(async () => shows() || ((r = await bash.run(text)), false), 15_000, `${text} to show ${c.says}`);
      expect({ command: text, code: r.code, stderr: r.stderr }).toEqual({ command: text, code: 0, stderr: '' });
      if (/curl /.test(text)) expect({ command: text, status: r.status }).toEqual({ command: text, status: expect.any(Number) as number });
      if (/curl /.test(text)) expect(r.status >= 200 && r.status < 300 ? 'ok' : `${r.status} ${r.out}`).toBe('ok');
      const status = /^(\d{3})\b/.exec(c.says);
      if (status) expect({ command: text, status: r.status }).toEqual({ command: text, status: Number(status[1]) });
      if (/^\[\]/.test(c.says)) expect(r.out).toBe('[]');
      expect({ command: text, missing: pairs.filter((p) => !(p.literal ? r.out.includes(`"${p.key}":${p.literal}`) : r.out.includes(`"${p.key}":`))) }).toEqual({ command: text, missing: [] });
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

interface Ticket {
  file: { id: string; size: number; mime_type: string; name: string };
  upload: { url: string; fields: Record<string, string> };
}

/** What a page does with a ticket (docs/uploads.md's js block, run in Chromium elsewhere): every field, then the file. */
async function postUpload(ticket: Ticket): Promise<void> {
  const jpeg = Buffer.alloc(ticket.file.size, 7);
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).copy(jpeg);
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', new Blob([jpeg], { type: ticket.file.mime_type }), ticket.file.name);
  const res = await fetch(ticket.upload.url, { method: 'POST', body: form });
  expect(res.status).toBe(204);
}

/**
 * Runs a js/ts block in Node: its imports taken from `modules`, `export` dropped, the names it declares at the
 * top returned (the test calls what a block defines, and closes what it opens).
 */
async function runNode(b: Block, globals: Record<string, unknown>, modules: Record<string, Record<string, unknown>> = {}): Promise<Record<string, unknown>> {
  const code = b.code
    .replace(/^import \{([^}]+)\} from '([^']+)';$/gm, (_m, names: string, mod: string) => {
      if (!modules[mod]) throw new Error(`${where(b)}: no module "${mod}" in its rule`);
      return `const {${names}} = __modules[${JSON.stringify(mod)}];`;
    })
    .replace(/^export /gm, '');
  const names = [...code.matchAll(/^(?:const|let|(?:async )?function)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]);
  const source = `async function __block(__modules, ${Object.keys(globals).join(', ')}) {\n${code}\nreturn { ${names.join(', ')} };\n}`;
  const out = await transform(source, { loader: b.lang === 'ts' ? 'ts' : 'js', format: 'esm', target: 'node20' });
  const fn = new Function(`${out.code}\nreturn __block;`)() as (...a: unknown[]) => Promise<Record<string, unknown>>;
  return fn(modules, ...Object.values(globals));
}

const block = (key: string) => {
  const b = BLOCKS.find((x) => x.key === key);
  if (!b) throw new Error(`no block ${key}`);
  return b;
};
const asBot = (secretKey: string) => ({ authorization: `Bearer ${secretKey}` });
/** The package as a page has it: a page gives it its WebSocket and localStorage; Node gets `ws` and a memory storage. */
const opened: { close(): void }[] = [];
const packageForNode = {
  createChatClient: (o: ChatClientOptions) => {
    const c = createChatClient({ WebSocket, storage: memoryStorage(), ...o });
    opened.push(c);
    return c;
  },
};
afterEach(() => opened.splice(0).forEach((c) => c.close()));

test('every js/ts block has a rule: run in Node here or in Chromium', () => {
  const rules = [...Object.keys(NODE_RUNS), ...BROWSER_BLOCKS];
  expect(BLOCKS.filter((b) => ['js', 'ts', 'html'].includes(b.lang) && !rules.includes(b.key)).map((b) => `${where(b)} (${b.key})`)).toEqual([]);
});

const NODE_RUNS: Record<string, () => Promise<void>> = {
  // The README's package example: the message is sent, and the bot's reply is logged as it arrives.
  'README.md js#0': async () => {
    const { bot, secretKey } = await newBot();
    const logs: unknown[][] = [];
    const b = block('README.md js#0');
    const { chat } = (await runNode({ ...b, code: local(b.code, bot) }, { console: { log: (...a: unknown[]) => logs.push(a) } }, { '@nexus-chat/client': packageForNode })) as { chat: { id: string } };
    const history = await call('GET', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey) });
    expect(history.body.map((m) => [m.sender, m.content])).toEqual([['user', 'Hello!']]);
    await call('POST', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey), json: { content: 'Hi Ada', sender: 'operator' } });
    await until(() => logs.some((l) => l[0] === 'operator' && l[1] === 'Hi Ada'), 10_000, 'the reply logged');
  },
  // The site's server hashes its user's id with the identity secret: the service takes that hash, not another.
  'docs/api.md js#0': async () => {
    const { bot } = await newBot({ identity_verification: true });
    const { external_id_hash } = await runNode(block('docs/api.md js#0'), { crypto: nodeCrypto, IDENTITY_SECRET: bot.identity_secret, user: { id: 'crm-42' } });
    const session = (hash: unknown) => call('POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: 'crm-42', external_id_hash: hash } });
    expect((await session(external_id_hash)).status).toBe(200);
    expect((await session(createHmac('sha256', 'another').update('crm-42').digest('hex'))).status).toBe(403);
  },
  // The receiver's check: the service's own signature passes; a changed body, an old timestamp or no signature fail.
  'docs/bot-api.md ts#0': async () => {
    const { verifyWebhook } = (await runNode(block('docs/bot-api.md ts#0'), {}, { 'node:crypto': nodeCrypto })) as { verifyWebhook: (s: string, body: string, t?: string, sig?: string) => boolean };
    const body = JSON.stringify({ event: 'message.created' });
    const now = String(Math.floor(Date.now() / 1000));
    const old = String(Math.floor(Date.now() / 1000) - 600);
    expect(verifyWebhook('whsec_x', body, now, signWebhook('whsec_x', now, body))).toBe(true);
    expect(verifyWebhook('whsec_x', body + ' ', now, signWebhook('whsec_x', now, body))).toBe(false);
    expect(verifyWebhook('whsec_x', body, old, signWebhook('whsec_x', old, body))).toBe(false);
    expect(verifyWebhook('whsec_x', body, now, undefined)).toBe(false);
  },
  // The realtime subscription: a message sent lands in showOnce, the chat's read in markRead.
  'docs/realtime.md js#0': async () => {
    const { session, chatId } = await walkThrough();
    const shown: { content: string }[] = [];
    const read: string[] = [];
    // `new Centrifuge(url, { token, websocket: require('ws') })`, as the block's last line says for Node.
    const InNode = class extends Centrifuge {
      constructor(url: string, opts: object) {
        super(url, { websocket: WebSocket, ...opts });
      }
    };
    const { client, sub } = (await runNode(block('docs/realtime.md js#0'), { session, showOnce: (m: { content: string }) => shown.push(m), markRead: (id: string) => read.push(id), uploadSettled: () => undefined }, { centrifuge: { Centrifuge: InNode } })) as { client: Centrifuge; sub: { state: string } };
    try {
      await until(() => sub.state === 'subscribed', 10_000, 'the subscription');
      await call('POST', `/api/client/chats/${chatId}/messages`, { token: session.session_token, json: { content: 'over the socket' } });
      await until(() => shown.some((m) => m.content === 'over the socket'), 10_000, 'the message shown');
      await call('POST', `/api/client/chats/${chatId}/read`, { token: session.session_token });
      await until(() => read.includes(chatId), 10_000, 'the read');
    } finally {
      client.disconnect();
    }
  },
  // The echo bot's retry helper: a reply lands once, sent twice with one Idempotency-Key.
  'docs/reliable-bot.md ts#0': async () => {
    const { secretKey, chatId } = await walkThrough();
    const { botApiCall } = (await runNode(block('docs/reliable-bot.md ts#0'), { sleep: (ms: number) => new Promise((r) => setTimeout(r, ms)) })) as {
      botApiCall: (api: object, method: string, path: string, body: unknown, key?: string) => Promise<{ status: number; body: { id?: string } }>;
    };
    const send = () => botApiCall({ apiUrl: apiUrl(), secretKey }, 'POST', `/chats/${chatId}/messages`, { content: 'Your order has shipped.', sender: 'operator' }, 'order-1');
    const [first, again] = [await send(), await send()];
    expect(first.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const history = await call('GET', `/api/bot/chats/${chatId}/messages`, { headers: asBot(secretKey) });
    expect(history.body.map((m) => m.content)).toEqual(['Your order has shipped.']);
  },
};

test.each(Object.keys(NODE_RUNS))('js/ts %s runs in Node and does what it says', async (key) => {
  await NODE_RUNS[key]();
});
