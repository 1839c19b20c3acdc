// Phase 2: realtime delivery through the real `centrifuge` client, one subscriber and a fan-out to 50.
import WebSocket from 'ws';
import { Centrifuge } from 'centrifuge';
import { options } from './options';
import { median, p99, round, shuffled } from './stats';
import { request, type Api, type LiveSession } from './http';
import { stealSampler } from './throughput';

/** POST returned → publication, ms; `messages` to each of the two channels; the CPU stolen by the host meanwhile. */
export interface RealtimeFigures {
  median: number;
  p99: number;
  fanout50_median: number;
  fanout50_p99: number;
  fanout50_each_median: number;
  messages: number;
  cpu_steal_pct: number | undefined;
}

export async function realtime(apiUrl: string, clientKey: string): Promise<RealtimeFigures> {
  const post = <T,>(path: string, json: unknown, token?: string) => request<T>(apiUrl, 'POST', path, { json, token });
  /** One user's channel with `subscribers` centrifuge clients on it, and a chat to post to. */
  const channel = async (externalId: string, subscribers: number) => {
    const session = await post<LiveSession>('/api/client/session', { client_key: clientKey, external_id: externalId });
    const chat = await post<Api['Chat']>('/api/client/chats', { name: 'latency' }, session.session_token);
    /** Per message id: how many subscribers have it, and the wait of the deliver() that posted it. */
    const received = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    const connect = async () => {
      const client = new Centrifuge(session.realtime.url, { token: session.realtime.token, websocket: WebSocket as never });
      // Recoverable, as the client package subscribes: each publication is positioned before it is posted.
      const sub = client.newSubscription(session.realtime.channel, { recoverable: true });
      const arrivals = new Map<string, number>();
      sub.on('publication', (ctx) => {
        const id = (ctx.data as { data?: { id: string } }).data?.id ?? '';
        arrivals.set(id, performance.now());
        const n = (received.get(id) ?? 0) + 1;
        received.set(id, n);
        if (n === subscribers) waiting.get(id)?.();
      });
      const ready = new Promise((r) => sub.once('subscribed', r));
      sub.subscribe();
      client.connect();
      await ready;
      return { client, arrivals };
    };
    const clients = await Promise.all(Array.from({ length: subscribers }, connect));
    /** Posts one message; resolves with the time from the POST's return to each subscriber's publication. */
    const deliver = async (i: number) => {
      // At a random point of the local stream poller's cycle (a read every 10 ms when idle), as real messages come.
      await new Promise((r) => setTimeout(r, Math.random() * 15));
      const sent = await post<Api['Message']>(`/api/client/chats/${chat.id}/messages`, { content: `m${i}` }, session.session_token);
      const returned = performance.now();
      // Woken by the last subscriber's publication; a second at most, after which a missing one counts as NaN.
      if ((received.get(sent.id) ?? 0) < subscribers) {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, 1000);
          waiting.set(sent.id, () => (clearTimeout(timer), r()));
        });
      }
      waiting.delete(sent.id);
      received.delete(sent.id);
      return clients.map((c) => (c.arrivals.get(sent.id) ?? NaN) - returned);
    };
    return { clients, deliver };
  };
  const one = await channel('bench-realtime', 1);
  const fifty = await channel('bench-realtime-50', 50);
  // A few messages first, not counted (first deliveries to new sockets warm up code paths).
  for (let i = 0; i < 5; i++) {
    await one.deliver(i);
    await fifty.deliver(i);
  }
  const single: number[] = [];
  /** Per message, its slowest subscriber of the 50 (a fan-out is done when all have it); and every delivery. */
  const fanout: number[] = [];
  const each: number[] = [];
  const steal = stealSampler();
  // Both kinds in one shuffled order: the two medians are taken under the same load of the machine, and each
  // kind follows either kind alike (where a message lands in the poller's cycle depends on when the previous
  // delivery ended).
  const perKind = options.quick ? 50 : 300;
  const order = shuffled([...Array<1>(perKind).fill(1), ...Array<50>(perKind).fill(50)] as (1 | 50)[]);
  for (const [i, kind] of order.entries()) {
    if (kind === 1) {
      single.push(...(await one.deliver(i)));
      continue;
    }
    const times = await fifty.deliver(i);
    fanout.push(Math.max(...times));
    each.push(...times);
  }
  const stolen = steal();
  for (const c of [...one.clients, ...fifty.clients]) c.client.disconnect();
  return {
    median: round(median(single)),
    p99: round(p99(single)),
    fanout50_median: round(median(fanout)),
    fanout50_p99: round(p99(fanout)),
    fanout50_each_median: round(median(each)),
    messages: single.length,
    cpu_steal_pct: stolen,
  };
}
