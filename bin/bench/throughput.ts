// Phase 3: throughput under load from a second process (autocannon), resident memory, CPU steal.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { options, ROOT } from './options';
import { round } from './stats';
import { request, type Api, type LiveSession } from './http';

/**
 * The share of this machine's CPU time the hypervisor gave to others (steal, /proc/stat) from now until the
 * returned function is called; undefined where /proc/stat is not there.
 */
export function stealSampler(): () => number | undefined {
  const read = () => {
    try {
      const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
      return { steal: cpu[7] ?? 0, total: cpu.reduce((a, b) => a + b, 0) };
    } catch {
      return undefined;
    }
  };
  const before = read();
  return () => {
    const after = read();
    if (!before || !after || after.total === before.total) return undefined;
    return round((100 * (after.steal - before.steal)) / (after.total - before.total), 0);
  };
}

/** Resident memory (MB) of the stack's processes: this Node process (gateways, handlers; the benchmark's own
 * clients too), DynamoDB Local (Java) and the S3 emulator, read from /proc. */
export class MemorySampler {
  private readonly pids: Record<string, number>;
  constructor(dataDir: string) {
    const p = JSON.parse(readFileSync(join(dataDir, 'local-stack.json'), 'utf8')) as Record<string, number>;
    this.pids = { node: process.pid, dynamodb_local: p.dynamodb, s3_emulator: p.s3 };
  }
  sample(): Record<string, number> {
    const mb: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
        mb[name] = round(kb / 1024);
      } catch {
        mb[name] = NaN; // not Linux, or gone
      }
    }
    mb.total = round(Object.values(mb).reduce((a, b) => a + b, 0));
    return mb;
  }
}

/** What bin/bench/load.ts prints: autocannon's result, the parts read here. */
type LoadResult = { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number };

/** autocannon in a second process (bin/bench/load.ts): one connection per user, for `seconds`. */
function autocannon(cfg: { url: string; method: 'GET' | 'POST'; body?: string; seconds: number; users: { token: string; path: string }[] }) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'bench', 'load.ts'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise<LoadResult>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout) as LoadResult) : reject(new Error(`autocannon exited ${code}`)))),
  );
}

/** Seconds of load on each endpoint. */
export const LOAD_SECONDS = options.quick ? 3 : 10;

export interface ThroughputFigures {
  rps: Record<string, number>;
  load_latency_ms: Record<string, { p50: number; p99: number }>;
  /** Per process, and their total: at rest (before the first phase) and the peak under this load. */
  rss_mb: { at_rest: Record<string, number>; under_load: Record<string, number> };
}

export async function throughput(apiUrl: string, clientKey: string, memory: MemorySampler, atRest: Record<string, number>): Promise<ThroughputFigures> {
  const post = <T,>(path: string, json: unknown, token?: string) => request<T>(apiUrl, 'POST', path, { json, token });
  // Ten users, each with a chat: ten connections, each one user's client.
  const users: { token: string; chatId: string }[] = [];
  for (let i = 0; i < 10; i++) {
    const session = await post<LiveSession>('/api/client/session', { client_key: clientKey, external_id: `bench-load-${i}` });
    const chat = await post<Api['Chat']>('/api/client/chats', { name: 'load' }, session.session_token);
    users.push({ token: session.session_token, chatId: chat.id });
  }
  const seconds = LOAD_SECONDS;
  const rps: Record<string, number> = {};
  const latency: Record<string, { p50: number; p99: number }> = {};
  let peak: Record<string, number> = {};
  const cases: [string, Parameters<typeof autocannon>[0]][] = [
    ['list_chats', { url: apiUrl, method: 'GET', seconds, users: users.map((u) => ({ token: u.token, path: '/api/client/chats' })) }],
    ['create_message', { url: apiUrl, method: 'POST', body: JSON.stringify({ content: 'load' }), seconds, users: users.map((u) => ({ token: u.token, path: `/api/client/chats/${u.chatId}/messages` })) }],
  ];
  for (const [id, cfg] of cases) {
    const sampler = setInterval(() => {
      const now = memory.sample();
      if (!(peak.total >= now.total)) peak = now;
    }, 500);
    try {
      const r = await autocannon(cfg);
      if (r.non2xx || r.errors) throw new Error(`load on ${id}: ${r.non2xx} non-2xx replies, ${r.errors} errors`);
      rps[id] = round(r.requests.average, 0);
      latency[id] = { p50: r.latency.p50, p99: r.latency.p99 };
    } finally {
      clearInterval(sampler);
    }
  }
  return { rps, load_latency_ms: latency, rss_mb: { at_rest: atRest, under_load: peak } };
}
