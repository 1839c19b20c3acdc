// Loads a handler module of the route table the way Lambda does: once, on first use (a cold start). Each
// invocation runs in its own async context, so tools (the benchmark) can attribute work to it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';

export interface Invocation {
  /** The handler module (route table entry). */
  entry: string;
  /** The event it was given (the benchmark replays one for cold starts). */
  event: unknown;
  /** Filled by whoever observes calls (e.g. DynamoDB round trips and capacity). */
  counters: Record<string, number>;
  /** Filled by the same observers: each AWS call (and outbound request) with when it was in flight, in performance.now() ms. */
  spans?: CallSpan[];
  /** performance.now() at the start and the end of the handler's run (its duration, as Lambda bills it). */
  startedAt: number;
  endedAt?: number;
  /**
   * The process's CPU time (user and system, ms) while the handler ran: at most the handler's own, since it
   * includes whatever else the process did meanwhile (the local gateways, other invocations).
   */
  cpuMs?: number;
  /** What the handler returned (a WebSocket route's reply is its `body`: none for the keepalive). */
  result?: unknown;
}

/** One call an invocation made: which service (the bench's allowance key) and when it was in flight. */
export interface CallSpan {
  service: string;
  startedAt: number;
  endedAt?: number;
}

export const invocations = new AsyncLocalStorage<Invocation>();
/** Called after every invocation; the benchmark sets it, and `invocations` holds only while one is set. */
export const invocationObservers: ((inv: Invocation) => void)[] = [];
/** Called after every invocation settles, with no context: the stream poller wakes (a handler may have written). */
export const invocationEndListeners = new Set<() => void>();

export function handlerLoader<H extends (event: never, context: never) => Promise<unknown>>(root: string): (entry: string) => Promise<H> {
  const loaded = new Map<string, Promise<H>>();
  return (entry) => {
    let h = loaded.get(entry);
    if (!h) {
      h = import(resolve(root, entry)).then((m: { handler?: H; default?: { handler?: H } }) => {
        const handler = (m.handler ?? m.default?.handler) as H;
        const observed = async (event: never, context: never) => {
          // An async context makes every promise of the process cost more (Node 20's promise hooks), so
          // invocations run in one only while someone observes them.
          if (!invocationObservers.length) return handler(event, context);
          const inv: Invocation = { entry, event, counters: {}, startedAt: performance.now() };
          const cpu = process.cpuUsage();
          try {
            inv.result = await invocations.run(inv, () => handler(event, context));
            return inv.result;
          } finally {
            inv.endedAt = performance.now();
            const used = process.cpuUsage(cpu);
            inv.cpuMs = (used.user + used.system) / 1000;
            for (const observe of invocationObservers) observe(inv);
          }
        };
        const wrapped = async (event: never, context: never) => {
          try {
            return await observed(event, context);
          } finally {
            for (const listener of invocationEndListeners) listener();
          }
        };
        return wrapped as unknown as H;
      });
      loaded.set(entry, h);
    }
    return h;
  };
}
