// One local SQS queue and the event source that feeds its consumer, as Lambda's SQS event source does: batches of
// up to batchSize visible messages, a few at once, run by the event-source runner (event-source.ts); a failed message (reported in batchItemFailures, or all of a batch whose
// function threw) becomes visible again after the visibility timeout, and one received maxReceiveCount times is
// moved to the queue's dead-letter queue at its next receive (SQS's redrive policy). Every message is journaled
// (journal.ts) before it is acknowledged: a restart delivers again what was not handled.
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { SQSRecord } from 'aws-lambda';
import type { FunctionDef } from '../routes';
import { EventSource } from './event-source';
import { parsedBody, type DeadLetters } from './dead-letters';
import { Journal } from './journal';

/** A queue's consumer and its event source's settings (WEBHOOK_QUEUE's shape). */
export interface QueueConsumer {
  def: FunctionDef;
  queue: { batchSize: number; visibilityTimeoutSeconds: number; maxReceiveCount: number };
  /**
   * A FIFO queue (the stream consumers' redo queues): messages of one group are received in the order sent, none
   * while an earlier one of its group is in flight or waiting to show again; a deduplication id seen in the last
   * 5 minutes is accepted and dropped.
   */
  fifo?: boolean;
  /** Invocations at once (the event source's maximum concurrency); DEFAULT_CONCURRENCY when not set. */
  maxConcurrency?: number;
  /** The queue its redrive policy names; `<name>_dlq` when not set. */
  deadLetterQueue?: string;
}

interface Message {
  id: string;
  body: string;
  visibleAt: number;
  receiveCount: number;
  sentAt: number;
  /** FIFO: its group and its place in the queue (send order). */
  group?: string;
  order: number;
}

/** What a queue's journal keeps of a message: enough to deliver it again after a restart. */
type Sent = Pick<Message, 'body' | 'visibleAt' | 'sentAt' | 'group'>;

/** A message as sent (SendMessage, an entry of SendMessageBatch). */
export interface Outgoing {
  body: string;
  delaySeconds: number;
  groupId?: string;
  deduplicationId?: string;
}

/** How long SQS remembers a FIFO message's deduplication id. */
const DEDUPLICATION_MS = 5 * 60_000;

/** Batches of one queue running at once when its event source names no maximum (Lambda scales out from 5 up). */
const DEFAULT_CONCURRENCY = 4;

export const md5 = (s: string) => createHash('md5').update(s).digest('hex');

export class LocalQueue {
  private messages: Message[] = [];
  private readonly journal: Journal<Sent>;
  private readonly source: EventSource;
  private readonly visibilityMs: number;
  private readonly maxConcurrency: number;
  private inFlight = 0;
  private stopped = false;
  private waker?: () => void;
  private loop?: Promise<void>;
  private readonly deadLetters: DeadLetters;
  private sent = 0;
  /** FIFO: deduplication id → the id of the message sent with it, and when. */
  private readonly seen = new Map<string, { id: string; at: number }>();
  /** FIFO: groups with a message in flight. */
  private readonly busyGroups = new Set<string>();

  constructor(
    private readonly name: string,
    private readonly consumer: QueueConsumer,
    o: { root: string; journalDir: string; deadLetters: DeadLetters; log: (line: string) => void; visibilityTimeoutMs?: number },
  ) {
    this.deadLetters = o.deadLetters;
    this.source = new EventSource(consumer.def, o.root, o.deadLetters, o.log);
    this.visibilityMs = o.visibilityTimeoutMs ?? consumer.queue.visibilityTimeoutSeconds * 1000;
    this.maxConcurrency = consumer.maxConcurrency ?? DEFAULT_CONCURRENCY;
    this.journal = new Journal<Sent>(join(o.journalDir, `${name}.jsonl`));
    // Delayed messages keep their time; those received before the stop are visible again at once.
    const pending = this.journal.pending();
    for (const [id, m] of pending) this.messages.push({ id, ...m, receiveCount: 0, order: this.sent++ });
    if (pending.length) o.log(`${name}: ${pending.length} message(s) not yet handled before the last stop, delivered again`);
  }

  /** Starts feeding the consumer (once the SQS API listens: a handler may send to a queue). */
  start(): void {
    this.loop ??= this.poll();
  }

  /** Journals the messages (before the sender gets their ids), then queues them. */
  send(entries: Outgoing[]): string[] {
    const now = Date.now();
    for (const [key, s] of this.seen) if (now - s.at > DEDUPLICATION_MS) this.seen.delete(key);
    const ids: string[] = [];
    const sent: { id: string; value: Sent }[] = [];
    for (const e of entries) {
      const dup = this.consumer.fifo && e.deduplicationId !== undefined ? this.seen.get(e.deduplicationId) : undefined;
      if (dup) {
        ids.push(dup.id);
        continue;
      }
      const id = randomUUID();
      if (this.consumer.fifo && e.deduplicationId !== undefined) this.seen.set(e.deduplicationId, { id, at: now });
      ids.push(id);
      sent.push({ id, value: { body: e.body, visibleAt: now + e.delaySeconds * 1000, sentAt: now, ...(this.consumer.fifo && { group: e.groupId ?? '' }) } });
    }
    this.journal.add(sent);
    for (const m of sent) this.messages.push({ id: m.id, ...m.value, receiveCount: 0, order: this.sent++ });
    this.wake();
    return ids;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  private wake(): void {
    this.waker?.();
  }

  /** Polls for visible messages; sleeps until the next is due or something changes (an idle stack does no work). */
  private async poll(): Promise<void> {
    while (!this.stopped) {
      const now = Date.now();
      const visible = this.receivable(now);
      if (visible.length && this.inFlight < this.maxConcurrency) {
        const received = visible.slice(0, this.consumer.queue.batchSize);
        this.messages = this.messages.filter((m) => !received.includes(m));
        const batch = received.filter((m) => !this.redriven(m));
        for (const m of batch) {
          m.receiveCount++;
          if (m.group !== undefined) this.busyGroups.add(m.group);
        }
        if (batch.length) void this.run(batch);
        continue;
      }
      // The next message to show; one visible but held back (at most batches in flight, its FIFO group busy) waits
      // for the batch in flight to end (run() wakes this loop).
      const hidden = this.messages.filter((m) => m.visibleAt > now);
      const next = this.inFlight < this.maxConcurrency && hidden.length ? Math.min(...hidden.map((m) => m.visibleAt)) - now : 60_000;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, Math.min(next, 60_000)));
        this.waker = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /**
   * The messages a receive may take, in order. FIFO: a group's only while none of it is in flight, and only up to
   * its first message still hidden (a failed one waiting out its visibility timeout keeps its place).
   */
  private receivable(now: number): Message[] {
    if (!this.consumer.fifo) return this.messages.filter((m) => m.visibleAt <= now);
    const blocked = new Set(this.busyGroups);
    const out: Message[] = [];
    for (const m of [...this.messages].sort((a, b) => a.order - b.order)) {
      if (blocked.has(m.group as string)) continue;
      if (m.visibleAt <= now) out.push(m);
      else blocked.add(m.group as string);
    }
    return out;
  }

  /** A message already received maxReceiveCount times goes to the dead-letter queue instead of the consumer. */
  private redriven(m: Message): boolean {
    if (m.receiveCount < this.consumer.queue.maxReceiveCount) return false;
    this.deadLetters.write(this.consumer.deadLetterQueue ?? `${this.name}_dlq`, {
      source: 'aws:sqs',
      consumer: this.consumer.def.id,
      condition: 'MaxReceiveCountExceeded',
      body: parsedBody(m.body),
      attributes: { ApproximateReceiveCount: String(m.receiveCount), SentTimestamp: String(m.sentAt), MessageId: m.id },
    });
    this.journal.done(m.id);
    return true;
  }

  private async run(batch: Message[]): Promise<void> {
    this.inFlight++;
    const records: SQSRecord[] = batch.map((m) => ({
      messageId: m.id,
      receiptHandle: m.id,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
        ...(m.group !== undefined && { MessageGroupId: m.group }),
      },
      messageAttributes: {},
      md5OfBody: md5(m.body),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:local:000000000000:${this.name}`,
      awsRegion: 'local',
    }));
    const { failed } = await this.source.invoke({ Records: records }, batch.map((m) => m.id));
    // Deleted when handled; a failed message is visible again once its visibility timeout is over.
    for (const m of batch) {
      if (!failed.includes(m.id)) this.journal.done(m.id);
      else this.messages.push({ ...m, visibleAt: Date.now() + this.visibilityMs });
      if (m.group !== undefined) this.busyGroups.delete(m.group);
    }
    this.inFlight--;
    this.wake();
  }
}
