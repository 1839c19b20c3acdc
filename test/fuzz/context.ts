// The fuzzer's own world on the stack: bots made in-process, users, chats, messages and files through HTTP, forged tokens.
import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { call } from '../support/http';
import type { BotChatPage, Chat, FileInfo, Message, Session } from '../support/contract';

export interface ChatCtx {
  id: string;
  /** The secret key of the chat's bot: the history check reads through it. */
  botKey: string;
  userMessageIds: string[];
  botMessageIds: string[];
  /** Files the bot uploaded for this chat (attachable to its replies). */
  botFileIds: string[];
}

export interface UserCtx {
  id: string;
  token: string;
  chats: ChatCtx[];
  /** Files the user uploaded (attachable to their messages). */
  fileIds: string[];
}

export interface BotCtx {
  id: string;
  clientKey: string;
  secretKey: string;
  users: UserCtx[];
  /** next_cursor of the first one-chat page of GET /api/bot/chats. */
  cursor?: string;
}

export interface FuzzContext {
  main: BotCtx;
  /** Another bot: its key, its users' tokens and its chats are "foreign" to the main bot. */
  foreign: BotCtx;
  /** A bot turned off after its user, chat and message were made. */
  disabled: BotCtx;
  /** Tokens made by hand: alg none, another key, tampered; with the stack's key, expired and naming a bot or user that does not exist. */
  forged: Record<string, string>;
  realtimeToken?: string;
  chats: ChatCtx[];
  /** Messages acknowledged with 201 while setting up (they must be in history at the end too). */
  acks: { chatId: string; messageId: string }[];
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

export async function createContext(base: string): Promise<FuzzContext> {
  // Imported here, once the caller has pointed the environment at the stack's DynamoDB.
  const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
  const acks: FuzzContext['acks'] = [];
  let realtimeToken: string | undefined;

  const ok = async <T>(what: string, method: string, path: string, opts: Parameters<typeof call>[2], status: number): Promise<T> => {
    const res = await call(method, path, { ...opts, base });
    if (res.status !== status) throw new Error(`fuzz set-up: ${what} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body as T;
  };
  const upload = (token: string, fields: Record<string, string> = {}) => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('fuzz file')], { type: 'text/plain' }), 'fuzz.txt');
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return form;
  };

  async function makeBot(name: string, users: number, chatsEach: number, record = true): Promise<BotCtx> {
    // Several chats per user: the main bot's widget allows them.
    const { bot, secretKey } = await createBot({ name, widget: { multiple_chats: true } });
    const ctx: BotCtx = { id: bot.id, clientKey: bot.client_key, secretKey, users: [] };
    const asBot = { headers: { authorization: `Bearer ${secretKey}` } };
    for (let u = 0; u < users; u++) {
      const session = await ok<Session>('session', 'POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: `fuzz-${randomUUID()}`, first_name: 'Fuzz' } }, 200);
      realtimeToken ??= session.realtime?.token;
      const token = session.session_token;
      const user: UserCtx = { id: session.user.id, token, chats: [], fileIds: [] };
      user.fileIds.push((await ok<FileInfo>('user upload', 'POST', '/api/client/files', { token, body: upload(token) }, 201)).id);
      for (let c = 0; c < chatsEach; c++) {
        const chat = await ok<Chat>('chat', 'POST', '/api/client/chats', { token, json: { name: `fuzz ${u}.${c}`, additional_info: { fuzz: true } } }, 201);
        const mine = await ok<Message>('user message', 'POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'hello from the fuzzer' } }, 201);
        const reply = await ok<Message>('bot message', 'POST', `/api/bot/chats/${chat.id}/messages`, { ...asBot, json: { content: 'a reply' } }, 201);
        // A question with quick replies: the visitor's answer (POST .../response) has one to answer, or to refuse.
        const items = [{ title: 'Yes', value: 'yes' }, { title: 'No', value: 'no' }];
        const ask = await ok<Message>('bot question', 'POST', `/api/bot/chats/${chat.id}/messages`, { ...asBot, json: { content: 'Go on?', content_type: 'input_select', content_attributes: { items } } }, 201);
        const file = await ok<FileInfo>('bot upload', 'POST', '/api/bot/files', { ...asBot, body: upload(token, { chat_id: chat.id }) }, 201);
        if (record) acks.push({ chatId: chat.id, messageId: mine.id }, { chatId: chat.id, messageId: reply.id });
        user.chats.push({ id: chat.id, botKey: secretKey, userMessageIds: [mine.id], botMessageIds: [reply.id, ask.id], botFileIds: [file.id] });
      }
      ctx.users.push(user);
    }
    const page = await ok<BotChatPage>('chat page', 'GET', '/api/bot/chats?limit=1', asBot, 200);
    ctx.cursor = page.next_cursor ?? undefined;
    return ctx;
  }

  const main = await makeBot('fuzz main', 3, 2);
  const foreign = await makeBot('fuzz foreign', 1, 2);
  // Its history cannot be read once it is off, so its set-up messages are not checked at the end.
  const disabled = await makeBot('fuzz disabled', 1, 1, false);
  await updateBot(disabled.id, { enabled: false });

  const a = main.users[0];
  const [h, p, sig] = a.token.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const sign = (payload: Record<string, unknown>, key: Uint8Array, typ = 'nexus-session+jwt', alg = 'HS256') =>
    new SignJWT(payload).setProtectedHeader({ alg, typ }).sign(key);
  const otherKey = new TextEncoder().encode('k'.repeat(64));
  const forged: Record<string, string> = {
    'alg-none': `${b64({ alg: 'none', typ: 'nexus-session+jwt' })}.${p}.`,
    'another-key': await sign(claims, otherKey),
    tampered: `${h}.${b64({ ...claims, sub: main.users[1].id })}.${sig}`,
    'no-signature': `${h}.${p}.`,
  };
  // With the stack's own key (the test stack's, or the CLI's own stack): tokens that verify but name the wrong things.
  const keyFile = process.env.JWT_SECRET_FILE;
  if (keyFile && existsSync(keyFile)) {
    const key = new TextEncoder().encode(readFileSync(keyFile, 'utf8').trim());
    const claimsAt = (over: Record<string, unknown>) => ({ ...claims, iat: now - 10, exp: now + 3600, ...over });
    forged.expired = await sign(claimsAt({ iat: now - 7200, exp: now - 60 }), key);
    forged['bot-gone'] = await sign(claimsAt({ bot: randomUUID(), sub: randomUUID() }), key);
    forged['user-gone'] = await sign(claimsAt({ sub: randomUUID() }), key);
    forged['realtime-typ'] = await sign(claimsAt({ aud: 'nexus:realtime' }), key, 'nexus-realtime+jwt');
    forged['HS512'] = await sign(claimsAt({}), key, 'nexus-session+jwt', 'HS512');
    forged['not-yet-valid'] = await sign(claimsAt({ nbf: now + 600 }), key);
    forged['sub-not-uuid'] = await sign(claimsAt({ sub: 'admin' }), key);
    forged['no-exp'] = await sign({ ...claims, iat: now, exp: undefined }, key);
  }
  const all = [main, foreign, disabled];
  return {
    main,
    foreign,
    disabled,
    forged,
    realtimeToken,
    chats: all.flatMap((b) => b.users.flatMap((u) => u.chats)),
    acks,
  };
}

/**
 * Authorization headers that must not pass (tag, value): malformed, forged, the other API's credential, another
 * bot's, a bot turned off. `token` is the right credential, reused in malformed shapes.
 */
export function badCredentials(ctx: FuzzContext, security: 'session' | 'bot' | 'none', token: string): [string, string | undefined][] {
  const bad: [string, string | undefined][] = [
    ['missing', undefined], ['empty-bearer', 'Bearer '], ['garbage', 'Bearer not.a.jwt'], ['basic', `Basic ${token}`], ['no-scheme', token],
    ['lowercase-scheme', `bearer ${token}`], ['double-space', `Bearer  ${token}`], ['oversized', `Bearer ${'a'.repeat(5000)}`],
  ];
  if (security !== 'bot') {
    bad.push(['bot-key-on-client', `Bearer ${ctx.main.secretKey}`], ['other-bot-user', `Bearer ${ctx.foreign.users[0].token}`], ['disabled-bot-user', `Bearer ${ctx.disabled.users[0].token}`]);
    if (ctx.realtimeToken) bad.push(['realtime-token', `Bearer ${ctx.realtimeToken}`]);
    for (const [name, t] of Object.entries(ctx.forged)) bad.push([name, `Bearer ${t}`]);
  }
  if (security !== 'session') {
    const k = ctx.main.secretKey;
    bad.push(['session-token-on-bot', `Bearer ${ctx.main.users[0].token}`], ['other-bot-key', `Bearer ${ctx.foreign.secretKey}`], ['disabled-bot-key', `Bearer ${ctx.disabled.secretKey}`]);
    bad.push(['key-unknown-bot', `Bearer sk_${'0'.repeat(80)}`], ['key-wrong-secret', `Bearer ${k.slice(0, -4)}${k.endsWith('0000') ? '1111' : '0000'}`], ['key-truncated', `Bearer ${k.slice(0, -1)}`], ['key-uppercase', `Bearer ${k.toUpperCase()}`]);
  }
  return bad;
}
