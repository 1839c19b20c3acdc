// Phase 2: what a conversation costs on AWS, counted unit by unit where it happens (meters.ts), priced at
// prices.ts. The exchange: a user's 100-character message, its webhook to the bot (answered 200 at once), the
// bot's 400-character reply, the three publications on the user's one socket (the message, the reply, the
// read action), and the user's read. A conversation adds its overhead: a session, the chat list, a new chat,
// the history, a socket's connect and subscribe, its close, and the browser's CORS preflights. Every other
// conversation's socket subscribes recoverable, as the client package does: its publications are positioned
// (`recoverable`, `position`); the others' are a client of the contract's, the headline figures.
import WebSocket from 'ws';
import type { Invocation } from '../../lib/local/handlers';
import { functionLogs } from '../../lib/local/tool-stack';
import { NOT_FOUND, ROUTES, WS_ROUTES } from '../../lib/routes';
import { PUBLISHER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { installMeters } from './meters';
import { pollUntil, request, type Api, type LiveSession, type WebhookReceiver } from './http';
import { PRICES } from './prices';
import { UNIT_KEYS, accessLogBytes, type CpuShareBound, type FunctionCost, type PositionCost, billedMs, cpuShareGbSeconds, defOf, memoryGb, platformLogBytes, usdOf, zeroUnits, LOG_EVENT_OVERHEAD_BYTES, type UnitKey, type Units, usdWithConsumersAtOneVcpu } from './cost-model';
import { idleSocketHour, type IdleSocketHour } from './idle';
import { options } from './options';
import { round } from './stats';

/** How long a visitor's socket stays open per conversation (connection minutes are billed per minute). */
export const VISIT_MINUTES = 10;

/** The conversations whose socket subscribed recoverable (the client package's): the same exchange, positioned. */
export interface RecoverableCost {
  exchanges: number;
  exchange_units: Units;
  usd_per_1m_exchanges: number;
  usd_per_1m_conversations_overhead: number;
}

export interface CostFigures {
  exchanges: number;
  conversations: number;
  exchange_units: Units;
  overhead_units: Units & { websocket_connection_minutes: number; cors_preflights: number };
  /** Per exchange, by function. */
  exchange_functions: Record<string, FunctionCost>;
  /** Per conversation's overhead (its visit: session, chat, socket), by function: the stream records a visit gives the consumers among them. */
  overhead_functions: Record<string, FunctionCost>;
  prices: Record<string, number | string>;
  usd_per_1m_exchanges: number;
  usd_per_1m_exchanges_by_unit: Record<UnitKey, number>;
  usd_per_1m_conversations_overhead: number;
  cpu_share_bound: CpuShareBound;
  /** The same exchange with the publisher and the dispatcher at 1,769 MB (cost-model.ts usdWithConsumersAtOneVcpu). */
  usd_per_1m_exchanges_consumers_at_1_vcpu: number;
  position: PositionCost;
  recoverable: RecoverableCost;
  /** An idle page's socket for an hour, reconnecting at each idle timeout or kept open by the keepalive (idle.ts). */
  idle_socket_hour: IdleSocketHour;
}

const HTTP_ENTRIES = new Set([...ROUTES, NOT_FOUND].map((d) => d.entry));
const WS_DEFAULT = WS_ROUTES.find((r) => r.id === 'ws_default')!.entry;

/** A window's units: the invocations it saw, the function log bytes written meanwhile. */
function tally(invs: Invocation[], logBytes: number, logLines: number, perFunction?: Record<string, FunctionCost>): Units {
  const u = zeroUnits();
  for (const inv of invs) {
    const def = defOf(inv.entry);
    const c = inv.counters;
    const billed = billedMs(inv);
    const gbSeconds = memoryGb(def) * (billed / 1000);
    u.lambda_invocations += 1;
    u.lambda_gb_seconds += gbSeconds;
    u.dynamodb_write_units += c.write_units ?? 0;
    u.dynamodb_read_units += c.read_units ?? 0;
    u.secrets_manager_calls += c.secrets ?? 0;
    u.sqs_requests += c.sqs ?? 0;
    u.websocket_messages += c.websocket_messages ?? 0;
    u.log_bytes += platformLogBytes(memoryGb(def) * 1024, billed);
    if (HTTP_ENTRIES.has(inv.entry)) {
      u.http_requests += 1;
      u.log_bytes += accessLogBytes((inv.event as { routeKey?: string }).routeKey ?? '$default');
    }
    // A frame from the client and the route's reply to it, if any (the keepalive has none), are a message each.
    if (inv.entry === WS_DEFAULT) u.websocket_messages += 1 + ((inv.result as { body?: string } | undefined)?.body ? 1 : 0);
    // The SQS event source's ReceiveMessage and DeleteMessageBatch of the job's batch.
    if (inv.entry === WEBHOOK_DELIVERER.entry) u.sqs_requests += 2;
    if (perFunction) {
      const f = (perFunction[def.id] ??= { invocations: 0, stream_records: 0, billed_ms: 0, gb_seconds: 0, dynamodb_write_units: 0, dynamodb_read_units: 0, cpu_ms: 0, cpu_share_gb_seconds: 0 });
      f.invocations += 1;
      f.stream_records += (inv.event as { Records?: unknown[] }).Records?.length ?? 0;
      f.billed_ms += billed;
      f.gb_seconds += gbSeconds;
      f.dynamodb_write_units += c.write_units ?? 0;
      f.dynamodb_read_units += c.read_units ?? 0;
      f.cpu_ms += inv.cpuMs ?? 0;
      f.cpu_share_gb_seconds += cpuShareGbSeconds(inv);
    }
  }
  u.log_bytes += logBytes + logLines * LOG_EVENT_OVERHEAD_BYTES;
  return u;
}

const sumOf = (functions: Record<string, FunctionCost>, key: keyof FunctionCost) => Object.values(functions).reduce((sum, f) => sum + f[key], 0);
const addUnits = (a: Units, b: Units) => UNIT_KEYS.forEach((k) => (a[k] += b[k]));
const perEach = <T extends Record<string, number>>(o: T, n: number, digits = 4): T =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v / n, digits)])) as T;
/** Each function's totals per exchange (or per conversation). */
const perEachFunction = (functions: Record<string, FunctionCost>, n: number): Record<string, FunctionCost> =>
  Object.fromEntries(Object.entries(functions).map(([id, f]) => [id, perEach(f as unknown as Record<string, number>, n) as unknown as FunctionCost]));

/**
 * The default abuse limits during a phase (the tool stack turns them off): their counters are part of the bill.
 * `keepOff`: limits left off all the same.
 */
export async function withDefaultLimits<T>(run: () => Promise<T>, keepOff: string[] = []): Promise<T> {
  const { reloadConfig } = await import('../../lambdas/shared/config');
  const names = Object.keys(process.env).filter((k) => !keepOff.includes(k) && (k.startsWith('RATE_') || ['MAX_CHATS_PER_USER', 'MAX_SOCKETS_PER_USER', 'MAX_OPEN_UPLOAD_BYTES', 'MAX_UPLOAD_BYTES_PER_DAY'].includes(k)));
  const saved = Object.fromEntries(names.map((k) => [k, process.env[k]]));
  for (const k of names) delete process.env[k];
  reloadConfig();
  try {
    return await run();
  } finally {
    Object.assign(process.env, saved);
    reloadConfig();
  }
}

export async function cost(apiUrl: string, receiver: WebhookReceiver): Promise<CostFigures> {
  const conversations = options.quick ? 6 : 20;
  const perConversation = options.quick ? 4 : 5;
  return withDefaultLimits(async () => {
    const meters = await installMeters(new Map());
    try {
      const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
      const { bot, secretKey } = await createBot({ name: 'bench cost' });
      await updateBot(bot.id, { webhook_url: receiver.url });
      const [exchange, overhead, recoverableExchange, recoverableOverhead] = [zeroUnits(), zeroUnits(), zeroUnits(), zeroUnits()];
      const [functions, visitFunctions]: Record<string, FunctionCost>[] = [{}, {}];
      const positions = { publications: 0, write_units: 0, read_units: 0 };
      let preflights = 0;
      /** Runs `act`, waits until the stack is quiet, and adds what happened meanwhile to `into`. */
      const window = async (into: Units, act: () => Promise<void>, perFunction?: Record<string, FunctionCost>) => {
        const mark = meters.seen.length;
        const logs = { ...functionLogs };
        await act();
        // Quiet: no invocation ended for 100 ms (stream consumers and the deliverer finish after the replies).
        for (let n = -1; n !== meters.seen.length; ) {
          n = meters.seen.length;
          await new Promise((r) => setTimeout(r, 100));
        }
        const invs = meters.seen.slice(mark);
        addUnits(into, tally(invs, functionLogs.bytes - logs.bytes, functionLogs.lines - logs.lines, perFunction));
        if (into === recoverableExchange) {
          for (const { counters: c } of invs) {
            positions.publications += c.positions ?? 0;
            positions.write_units += c.position_write_units ?? 0;
            positions.read_units += c.position_read_units ?? 0;
          }
        }
      };
      for (let c = 0; c < conversations; c++) {
        const recoverable = c % 2 === 1;
        const [exchangeInto, overheadInto] = recoverable ? [recoverableExchange, recoverableOverhead] : [exchange, overhead];
        const http = <T = unknown,>(method: string, path: string, token: string, json?: unknown) => request<T>(apiUrl, method, path, { token, json });
        let token = '';
        let chatId = '';
        let ws!: WebSocket;
        const pubs = new Set<string>();
        let reads = 0;
        /** Distinct (method, URL) pairs: a browser preflights each once per max-age, longer than a visit. */
        const preflighted = new Set<string>();
        const call = <T = unknown,>(method: string, path: string, json?: unknown, bearer = token) => {
          if (bearer === token) preflighted.add(`${method} ${path}`);
          return http<T>(method, path, bearer, json);
        };
        await window(overheadInto, async () => {
          const s = await http<LiveSession>('POST', '/api/client/session', '', { client_key: bot.client_key, external_id: `cost-${c}` });
          preflighted.add('POST /api/client/session');
          token = s.session_token;
          await call('GET', '/api/client/chats');
          chatId = (await call<Api['Chat']>('POST', '/api/client/chats', { name: 'Support' })).id;
          await call('GET', `/api/client/chats/${chatId}/messages`);
          ws = new WebSocket(s.realtime.url);
          await new Promise((r) => ws.once('open', r));
          const subscribed = new Promise((r) => ws.once('message', r));
          ws.on('message', (data) => {
            // ws hands a text frame over as one Buffer (its default binaryType).
            for (const line of (data as Buffer).toString().split('\n')) {
              const pub = (JSON.parse(line) as { push?: { pub?: { data?: { type: string; data: { id: string; action?: string } } } } }).push?.pub?.data;
              if (pub?.type === 'message') pubs.add(pub.data.id);
              if (pub?.type === 'action' && pub.data.action === 'read') reads++;
            }
          });
          const sentAt = meters.seen.length;
          ws.send(`${JSON.stringify({ id: 1, connect: { token: s.realtime.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: s.realtime.channel, ...(recoverable && { recoverable }) } })}`);
          await subscribed;
          // The reply comes before the frame's invocation ends (the subscribe hands over to live publications after it).
          await until(() => meters.seen.slice(sentAt).some((i) => i.entry === WS_DEFAULT), 'the subscribe to end');
        }, recoverable ? undefined : visitFunctions);
        for (let e = 0; e < perConversation; e++) {
          await window(exchangeInto, async () => {
            const hooks = receiver.received.count;
            const mark = meters.seen.length;
            const sent = await call<Api['Message']>('POST', `/api/client/chats/${chatId}/messages`, { content: 'u'.repeat(100) });
            await until(() => pubs.has(sent.id) && receiver.received.count > hooks, 'the message and its webhook');
            await until(() => meters.seen.slice(mark).some((i) => i.entry === WEBHOOK_DELIVERER.entry), 'the deliverer to end');
            const reply = await http<Api['Message']>('POST', `/api/bot/chats/${chatId}/messages`, secretKey, { content: 'b'.repeat(400) });
            await until(() => pubs.has(reply.id), 'the reply');
            const readsBefore = reads;
            await call('POST', `/api/client/chats/${chatId}/read`);
            await until(() => reads > readsBefore, 'the read action');
          }, recoverable ? undefined : functions);
        }
        await window(overheadInto, async () => {
          const mark = meters.seen.length;
          ws.close();
          await until(() => meters.seen.slice(mark).some((i) => i.entry.includes('disconnect')), '$disconnect');
        }, recoverable ? undefined : visitFunctions);
        preflights += preflighted.size;
        // Preflights: HTTP API requests answered by API Gateway itself (no Lambda), each with its access line.
        overheadInto.http_requests += preflighted.size;
        overheadInto.log_bytes += preflighted.size * accessLogBytes('-');
      }
      const prices = Object.fromEntries(Object.entries(PRICES.units).map(([k, p]) => [k, p.usd]));
      const measure = async (act: () => Promise<void>) => {
        const u = zeroUnits();
        await window(u, act);
        return u;
      };
      const idle = await idleSocketHour(apiUrl, bot.client_key, measure, () => meters.seen, prices);
      const recoverableConversations = Math.floor(conversations / 2);
      const plainConversations = conversations - recoverableConversations;
      const [n, nRecoverable] = [plainConversations * perConversation, recoverableConversations * perConversation];
      const exchangeUnits = perEach(exchange, n, 6);
      const perConversationExtras = { websocket_connection_minutes: VISIT_MINUTES, cors_preflights: round(preflights / conversations, 2) };
      const overheadUnits = { ...perEach(overhead, plainConversations, 6), ...perConversationExtras };
      const recoverableUnits = perEach(recoverableExchange, nRecoverable, 6);
      const overheadUsd = (u: Units) => round(usdOf({ ...u, ...perConversationExtras, cors_preflights: 0 }, prices) * 1e6, 2);
      const { HISTORY_TTL_SECONDS } = await import('../../lambdas/entities/channel-stream');
      const perPublication = (units: number) => (positions.publications ? round(units / positions.publications, 4) : 0);
      const position: PositionCost = {
        publications_per_exchange: round(positions.publications / nRecoverable, 4),
        write_units_per_publication: perPublication(positions.write_units),
        read_units_per_publication: perPublication(positions.read_units),
        history_ttl_hours: HISTORY_TTL_SECONDS / 3600,
        usd_per_1m_exchanges: round(((positions.write_units * prices.dynamodb_write_units + positions.read_units * prices.dynamodb_read_units) / nRecoverable) * 1e6, 4),
      };
      const perExchange = perEachFunction(functions, n);
      const usdPer1m = round(usdOf(exchangeUnits, prices) * 1e6, 2);
      const consumers = [PUBLISHER.id, WEBHOOK_DISPATCHER.id].flatMap((id) => perExchange[id] ?? []);
      const byUnit = Object.fromEntries(UNIT_KEYS.map((k) => [k, round(exchangeUnits[k] * prices[k] * 1e6, 4)])) as Record<UnitKey, number>;
      return {
        exchanges: n,
        conversations,
        exchange_units: exchangeUnits,
        overhead_units: overheadUnits,
        exchange_functions: perExchange,
        overhead_functions: perEachFunction(visitFunctions, plainConversations),
        prices: { as_of: PRICES.as_of, source: PRICES.source, region: PRICES.region, architecture: PRICES.architecture, ...prices },
        usd_per_1m_exchanges: usdPer1m,
        usd_per_1m_exchanges_by_unit: byUnit,
        usd_per_1m_conversations_overhead: overheadUsd(perEach(overhead, plainConversations, 6)),
        cpu_share_bound: {
          cpu_ms_per_exchange: round(sumOf(functions, 'cpu_ms') / n, 2),
          gb_seconds_per_exchange: round(sumOf(functions, 'cpu_share_gb_seconds') / n, 6),
          usd_per_1m_exchanges: round((sumOf(functions, 'cpu_share_gb_seconds') / n) * prices.lambda_gb_seconds * 1e6, 2),
        },
        usd_per_1m_exchanges_consumers_at_1_vcpu: usdWithConsumersAtOneVcpu(usdPer1m, consumers, prices.lambda_gb_seconds),
        position,
        recoverable: {
          exchanges: nRecoverable,
          exchange_units: recoverableUnits,
          usd_per_1m_exchanges: round(usdOf(recoverableUnits, prices) * 1e6, 2),
          usd_per_1m_conversations_overhead: overheadUsd(perEach(recoverableOverhead, recoverableConversations, 6)),
        },
        idle_socket_hour: idle,
      };
    } finally {
      meters.uninstall();
    }
  });
}

async function until(done: () => boolean, what: string): Promise<void> {
  await pollUntil(done, 1000);
  if (!done()) throw new Error(`cost phase: waited 10 s for ${what}`);
}
