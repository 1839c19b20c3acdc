// The last phase: one bot with many conversations, and where their units land key by key (key-loads.ts): the hottest
// key value a bot's conversations share, per exchange and per session, and the rates of one bot that take it to
// DynamoDB's per-key limits (scale-model.ts). See docs/benchmarks.md "Scale".
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { installMeters, type Meters } from './meters';
import { KeyLoadRecorder, type KeyLoad } from './key-loads';
import { windowLoad, type WindowLoad } from './scale-model';
import { withDefaultLimits } from './cost';
import { pollUntil, request, tabAgent, type Api, type LiveSession, type WebhookReceiver } from './http';
import { PUBLISHER, WEBHOOK_DELIVERER } from '../../lib/consumers';
import { options } from './options';

/**
 * Conversations of the bot (each a visitor with one chat): four to each of the chat list's default 32 shards
 * (two with --quick), so that nearly every shard is touched; returning visitors: the first 32 of them (16 with
 * --quick: a returning session's load is per session, and no key it touches is sharded).
 */
const CONVERSATIONS = options.quick ? 64 : 128;
const RETURNING = options.quick ? 16 : 32;
/** Conversations at once, each on its own keep-alive socket (a visitor's tab). */
const AT_ONCE = 4;

export interface ScaleFigures {
  conversations: number;
  per_exchange: WindowLoad;
  per_session_new: WindowLoad;
  per_session_returning: WindowLoad;
  /** The bot side typing once in each conversation (its item, the publisher's read of the channel). */
  per_typing: WindowLoad;
  /** null: no key of the table or an index is shared by two conversations (nothing per bot to reach). */
  max_exchanges_per_s_per_bot: number | null;
  exchanges_limited_by: string;
  max_sessions_per_s_per_bot: number | null;
  sessions_limited_by: string;
  max_typing_per_s_per_bot: number | null;
}

interface Conversation {
  externalId: string;
  token: string;
  chatId: string;
}

/** A keep-alive socket of one worker, for one window only (an idle one is closed by the server meanwhile). */
type Agent = ReturnType<typeof tabAgent>;

export async function scale(apiUrl: string, receiver: WebhookReceiver): Promise<ScaleFigures> {
  // The default limits, as deployed (their counters are per user and per socket), but sessions per IP: every
  // visitor of the bench comes from one address, where real visitors each have their own.
  return withDefaultLimits(() => run(apiUrl, receiver), ['RATE_SESSIONS_PER_IP_PER_MINUTE']);
}

async function run(apiUrl: string, receiver: WebhookReceiver): Promise<ScaleFigures> {
  const meters = await installMeters(new Map());
  const conversations: Conversation[] = Array.from({ length: CONVERSATIONS }, (_, c) => ({ externalId: `scale-${String(c).padStart(6, '0')}`, token: '', chatId: '' }));
  // A conversation first, unmeasured: the functions' caches (bot settings) warm, as on a warm Lambda.
  const warm: Conversation = { externalId: 'scale-warm', token: '', chatId: '' };
  try {
    const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
    const { clientOptions } = await import('../../lambdas/aws/options');
    const { bot, secretKey } = await createBot({ name: 'bench scale' });
    await updateBot(bot.id, { webhook_url: receiver.url });
    // Ids of one conversation: a key that names one belongs to that conversation alone.
    const ids = new Set<string>();
    const own = (...xs: string[]) => xs.forEach((x) => ids.add(x));
    const ownedBy = (key: string) => [...ids].some((id) => key.includes(id));

    const visit = async (c: Conversation, agent: Agent) => {
      const s = await request<LiveSession>(apiUrl, 'POST', '/api/client/session', { agent, json: { client_key: bot.client_key, external_id: c.externalId } });
      c.token = s.session_token;
      own(c.externalId, s.user.id, createHash('sha256').update(s.user.id).digest('hex'));
      // The page's socket: connect and subscribe in one frame, then its close.
      const ws = new WebSocket(s.realtime.url);
      await new Promise((r) => ws.once('open', r));
      const replied = new Promise<string>((r) => ws.on('message', (data) => r((data as Buffer).toString())));
      ws.send(`${JSON.stringify({ id: 1, connect: { token: s.realtime.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: s.realtime.channel } })}`);
      const client = (JSON.parse((await replied).split('\n')[0]) as { connect?: { client?: string } }).connect?.client;
      if (client) own(client);
      ws.close();
    };
    const exchange = async (c: Conversation, agent: Agent) => {
      await request(apiUrl, 'POST', `/api/client/chats/${c.chatId}/messages`, { agent, token: c.token, json: { content: 'u'.repeat(100) } });
      await request(apiUrl, 'POST', `/api/bot/chats/${c.chatId}/messages`, { agent, token: secretKey, json: { content: 'b'.repeat(400) } });
      await request(apiUrl, 'POST', `/api/client/chats/${c.chatId}/read`, { agent, token: c.token });
    };
    /** Runs `act` over the conversations, AT_ONCE at a time, then waits until the stack is quiet. */
    const each = async (act: (c: Conversation, agent: Agent) => Promise<void>, expect: { disconnects?: number; webhooks?: number; published?: number }, some = conversations) => {
      const mark = meters.seen.length;
      const hooks = receiver.received.count;
      const queue = [...some];
      const worker = async () => {
        const agent = tabAgent();
        try {
          for (let c = queue.shift(); c; c = queue.shift()) await act(c, agent);
        } finally {
          agent.destroy();
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, worker));
      const disconnects = () => meters.seen.slice(mark).filter((i) => i.entry.includes('disconnect')).length;
      // The publisher's records of the window (it may pause longer than quiet() waits between its batches).
      const published = () => meters.seen.slice(mark).filter((i) => i.entry === PUBLISHER.entry).reduce((n, i) => n + ((i.event as { Records?: unknown[] }).Records?.length ?? 0), 0);
      const done = () => disconnects() >= (expect.disconnects ?? 0) && receiver.received.count >= hooks + (expect.webhooks ?? 0) && published() >= (expect.published ?? 0);
      await until(done, 'the stack to finish the window');
      await quiet(meters);
    };
    const measured = async (act: (c: Conversation, agent: Agent) => Promise<void>, expect: { disconnects?: number; webhooks?: number; published?: number }, some = conversations): Promise<KeyLoad[]> => {
      const recorder = new KeyLoadRecorder({ ...clientOptions(), endpoint: process.env.DYNAMODB_ENDPOINT });
      meters.keyLoads = recorder;
      try {
        await each(act, expect, some);
      } finally {
        meters.keyLoads = undefined;
      }
      return recorder.loads;
    };

    const typing = async (c: Conversation, agent: Agent) => {
      await request(apiUrl, 'POST', `/api/bot/chats/${c.chatId}/typing`, { agent, token: secretKey });
    };
    const warmUp = async (agent: Agent) => {
      await visit(warm, agent);
      warm.chatId = (await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { agent, token: warm.token, json: { name: 'Support' } })).id;
      await exchange(warm, agent);
      await typing(warm, agent);
    };
    const hooks = receiver.received.count;
    const agent = tabAgent();
    await warmUp(agent);
    agent.destroy();
    await until(() => receiver.received.count > hooks, 'the warm-up webhook');
    await quiet(meters);
    ids.clear();

    const n = conversations.length;
    const newSessions = await measured(visit, { disconnects: n });
    const returners = conversations.slice(0, RETURNING);
    const returning = await measured(visit, { disconnects: returners.length }, returners);
    // Each visitor's chat (not part of an exchange or a session), then one exchange in each.
    await each(async (c, agent) => {
      c.chatId = (await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { agent, token: c.token, json: { name: 'Support' } })).id;
      own(c.chatId);
    }, {});
    // Per exchange three records reach the publisher: the message, the reply, the read.
    const exchanges = await measured(exchange, { webhooks: n, published: 3 * n });
    await until(() => meters.seen.filter((i) => i.entry === WEBHOOK_DELIVERER.entry).length > 0, 'the deliverer');
    const typed = await measured(typing, {});

    const perExchange = windowLoad(exchanges, n, ownedBy);
    const perNew = windowLoad(newSessions, n, ownedBy);
    const perReturning = windowLoad(returning, returners.length, ownedBy);
    const perTyping = windowLoad(typed, n, ownedBy);
    const sessions = [perNew, perReturning].filter((w) => w.max_per_s !== null).sort((a, b) => (a.max_per_s as number) - (b.max_per_s as number))[0];
    return {
      conversations: n,
      per_exchange: perExchange,
      per_session_new: perNew,
      per_session_returning: perReturning,
      per_typing: perTyping,
      max_exchanges_per_s_per_bot: perExchange.max_per_s,
      exchanges_limited_by: perExchange.limited_by,
      max_sessions_per_s_per_bot: sessions?.max_per_s ?? null,
      sessions_limited_by: sessions ? `${sessions === perNew ? 'new' : 'returning'} visitors: ${sessions.limited_by}` : perNew.limited_by,
      max_typing_per_s_per_bot: perTyping.max_per_s,
    };
  } finally {
    meters.uninstall();
  }
}

/** Until no invocation ended for 200 ms (stream consumers and the deliverer finish after the replies). */
async function quiet(meters: Meters): Promise<void> {
  for (let n = -1; n !== meters.seen.length; ) {
    n = meters.seen.length;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function until(done: () => boolean, what: string): Promise<void> {
  await pollUntil(done, 3000);
  if (!done()) throw new Error(`scale phase: waited 30 s for ${what}`);
}
