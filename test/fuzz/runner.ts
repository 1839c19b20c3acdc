// Sends generated requests to a stack, each answer checked against docs/openapi.yaml; then stack health and lost messages.
import { appendFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { call, type Reply } from '../support/http';
import type { Message } from '../support/contract';
import { createContext, type FuzzContext } from './context';
import { requestArbitrary, type FuzzRequest } from './operations';
import { loadDoc } from './schema-arbitrary';

export interface FuzzOptions {
  /** The stack's base URL (http://localhost:3000). */
  baseUrl: string;
  requests: number;
  seed: number;
  concurrency?: number;
  /** A request unanswered this long is a failure. */
  timeoutMs?: number;
  /** A file to append one JSON line per exchange to (request, status, answer), to see what a seed did. */
  logFile?: string;
}

export interface OperationStats {
  sent: number;
  statuses: Record<string, number>;
  /** The statuses of the fully valid requests alone (right auth, own ids, valid body). */
  validStatuses: Record<string, number>;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  durationMs: number;
  perOperation: Record<string, OperationStats>;
  /** The first MAX_FAILURES failures, each with its request's index, method, path and body excerpt. */
  failures: string[];
  failureCount: number;
  /** Every failure counted by kind, operation, status and what the request had wrong. */
  failureGroups: Record<string, number>;
  /** Messages acknowledged with 201 (set-up included), each then looked for in its chat's history. */
  acknowledged: number;
}

const MAX_FAILURES = 50;
/** Requests generated at a time: fast-check's runs within a sample grow from small to large values. */
const BATCH = 100;
const HISTORY_PAGE = 500;

/** The seed of one batch: a batch is generated the same way whatever the concurrency. */
const batchSeed = (seed: number, batch: number) => (seed ^ Math.imul(batch + 1, 0x9e3779b1)) >>> 0;

export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const base = o.baseUrl;
  const ctx = await createContext(base);
  const arb = requestArbitrary(loadDoc(), ctx);
  const report: FuzzReport = { seed: o.seed, requests: o.requests, durationMs: 0, perOperation: {}, failures: [], failureCount: 0, failureGroups: {}, acknowledged: 0 };
  const acks = [...ctx.acks];
  const fail = (kind: string, group: string, line: string) => {
    report.failureCount++;
    report.failureGroups[`${kind} ${group}`] = (report.failureGroups[`${kind} ${group}`] ?? 0) + 1;
    if (report.failures.length < MAX_FAILURES) report.failures.push(`${kind}: ${line}`);
  };

  const log = (entry: Record<string, unknown>) => o.logFile && appendFileSync(o.logFile, JSON.stringify(entry) + '\n');

  let batch: { n: number; requests: FuzzRequest[] } | undefined;
  const requestAt = (i: number): FuzzRequest => {
    const n = Math.floor(i / BATCH);
    if (batch?.n !== n) batch = { n, requests: fc.sample(arb, { seed: batchSeed(o.seed, n), numRuns: BATCH }) };
    return batch.requests[i % BATCH];
  };

  const send = async (i: number, req: FuzzRequest) => {
    const key = req.tags.some((t) => t.startsWith('route:')) ? '(default route)' : req.op;
    const stats = (report.perOperation[key] ??= { sent: 0, statuses: {}, validStatuses: {} });
    const count = (status: string) => {
      stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
      if (req.valid) stats.validStatuses[status] = (stats.validStatuses[status] ?? 0) + 1;
    };
    stats.sent++;
    const what = `#${i} ${req.method} ${excerpt(req.path, 160)} [${req.valid ? 'valid' : req.tags.join(' ')}]`;
    const group = `${key} [${req.valid ? 'valid' : req.tags.join(' ')}]`;
    const body = typeof req.body === 'function' ? req.body() : req.body;
    let res: Reply<unknown>;
    try {
      res = await withTimeout(call(req.method, req.path, { base, headers: req.headers, body }), o.timeoutMs ?? 30_000);
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      const documented = message.startsWith('Response not as documented');
      const status = / \(?(?:status )?(\d{3})[,:)]/.exec(message)?.[1] ?? 'error';
      count(status);
      log({ i, op: key, valid: req.valid, tags: req.tags, path: excerpt(req.path, 300), status, error: excerpt(message, 500) });
      const problem = message.replace(/^Response not as documented \(docs\/openapi.yaml\):\n/, '').replace(/\n/g, ' ');
      fail(documented ? 'contract' : 'network', `${status} ${group}`, `${what} → ${excerpt(problem, 700)} | sent: ${bodyExcerpt(body)}`);
      return;
    }
    count(String(res.status));
    log({ i, op: key, valid: req.valid, tags: req.tags, path: excerpt(req.path, 300), status: res.status, answer: excerpt(JSON.stringify(res.body), 300), sent: bodyExcerpt(body) });
    if (res.status >= 500) fail('5xx', `${res.status} ${group}`, `${what} → ${res.status} ${excerpt(JSON.stringify(res.body), 300)} | sent: ${bodyExcerpt(body)}`);
    if (res.status < 300 && req.mustRefuse) fail('authz', `${res.status} ${group}`, `${what} → ${res.status} for a chat or message the credential does not own: ${excerpt(JSON.stringify(res.body), 300)}`);
    const leaked = res.status < 300 ? req.notMine.filter((id) => JSON.stringify(res.body).includes(id)) : [];
    if (leaked.length) fail('leak', `${res.status} ${group}`, `${what} → ${res.status} names chats of others (${leaked.join(', ')}): ${excerpt(JSON.stringify(res.body), 300)}`);
    if (req.acksMessage && res.status === 201) {
      const message = res.body as Message; // checked against the document by call()
      acks.push({ chatId: message.chat_id, messageId: message.id });
    }
    // What the document says comes back exactly as sent, does.
    if (res.status === 201 && req.echo.length && typeof body === 'string') {
      const sent = parseOr(body);
      const answer = res.body as Record<string, unknown> | undefined;
      for (const k of req.echo) {
        if (sent && typeof sent === 'object' && k in sent && !isDeepStrictEqual(normalise(sent[k]), normalise(answer?.[k]))) {
          fail('echo', `${k} ${group}`, `${what} → ${k} came back as ${excerpt(JSON.stringify(answer?.[k]), 300)} | sent: ${bodyExcerpt(body)}`);
        }
      }
    }
  };

  let next = 0;
  const worker = async () => {
    for (let i = next++; i < o.requests; i = next++) await send(i, requestAt(i));
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, worker));

  await checkHealth(base, ctx, acks, fail);
  await checkHistory(base, ctx, acks, fail);
  report.acknowledged = acks.length;
  report.durationMs = Date.now() - started;
  return report;
}

type Fail = (kind: string, group: string, line: string) => void;

/** After the run the stack still serves: a new session, chat and message succeed. */
async function checkHealth(base: string, ctx: FuzzContext, acks: FuzzContext['acks'], fail: Fail): Promise<void> {
  try {
    const session = await call('POST', '/api/client/session', { base, json: { client_key: ctx.main.clientKey } });
    if (session.status !== 200) throw new Error(`session → ${session.status} ${JSON.stringify(session.body)}`);
    const token = session.body.session_token;
    const chat = await call('POST', '/api/client/chats', { base, token, json: { name: 'after the fuzz' } });
    if (chat.status !== 201) throw new Error(`chat → ${chat.status} ${JSON.stringify(chat.body)}`);
    const message = await call('POST', `/api/client/chats/${chat.body.id}/messages`, { base, token, json: { content: 'still there?' } });
    if (message.status !== 201) throw new Error(`message → ${message.status} ${JSON.stringify(message.body)}`);
    acks.push({ chatId: chat.body.id, messageId: message.body.id });
    ctx.chats.push({ id: chat.body.id, botKey: ctx.main.secretKey, userMessageIds: [], botMessageIds: [], botFileIds: [] });
  } catch (err) {
    fail('health', 'after the run', `the stack no longer serves a session, chat and message: ${excerpt((err as Error).message, 500)}`);
  }
}

/** Every message acknowledged with 201 is in its chat's history (read through the chat's bot, every page). */
async function checkHistory(base: string, ctx: FuzzContext, acks: FuzzContext['acks'], fail: Fail): Promise<void> {
  const byChat = new Map<string, string[]>();
  for (const a of acks) byChat.set(a.chatId, [...(byChat.get(a.chatId) ?? []), a.messageId]);
  for (const [chatId, ids] of byChat) {
    const key = ctx.chats.find((c) => c.id === chatId)?.botKey ?? ctx.main.secretKey;
    let seen: Set<string>;
    try {
      seen = await historyIds(base, chatId, key);
    } catch (err) {
      fail('lost', 'history unreadable', `chat ${chatId}: ${excerpt((err as Error).message, 500)}`);
      continue;
    }
    for (const id of ids) if (!seen.has(id)) fail('lost', 'acknowledged message missing from history', `message ${id} of chat ${chatId} was acknowledged with 201 but is not in its history`);
  }
}

async function historyIds(base: string, chatId: string, key: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const page = async (query: string): Promise<{ id: string }[]> => {
    const res = await call('GET', `/api/bot/chats/${chatId}/messages?limit=${HISTORY_PAGE}${query}`, { base, headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`history → ${res.status} ${JSON.stringify(res.body)}`);
    for (const m of res.body) ids.add(m.id);
    return res.body;
  };
  const first = await page('');
  // Whichever end the first page is, walk away from it both ways until a short page.
  for (let p = first; p.length === HISTORY_PAGE; ) p = await page(`&before=${p[0].id}`);
  for (let p = first; p.length === HISTORY_PAGE; ) p = await page(`&after=${p[p.length - 1].id}`);
  return ids;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timeout: no answer in ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const excerpt = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

function bodyExcerpt(body: string | Buffer | undefined): string {
  if (body === undefined) return '(no body)';
  const text = typeof body === 'string' ? body : body.subarray(0, 200).toString('utf8');
  return JSON.stringify(excerpt(text, 200)) + (Buffer.isBuffer(body) ? ` (${body.length} bytes)` : '');
}

function parseOr(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** -0 and 0 compare equal (JSON does not tell them apart once parsed). */
const normalise = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(normalise) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)])) : v === 0 ? 0 : v;
