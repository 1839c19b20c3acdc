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
}

interface Message {
  id: string;
  body: string;
  visibleAt: number;
  receiveCount: number;
  sentAt: number;
}

/** What a queue's journal keeps of a message: enough to deliver it again after a restart. */
type Sent = Pick<Message, 'body' | 'visibleAt' | 'sentAt'>;

/** Batches of one queue running at once (Lambda scales an SQS event source out the same way, from 5 up). */
const MAX_CONCURRENCY = 4;

export const md5 = (s: string) => createHash('md5').update(s).digest('hex');

export class LocalQueue {
  private messages: Message[] = [];
  private readonly journal: Journal<Sent>;
  private readonly source: EventSource;
  private readonly visibilityMs: number;
  private inFlight = 0;
  private stopped = false;
  private waker?: () => void;
  private loop?: Promise<void>;
  private readonly deadLetters: DeadLetters;

  constructor(
    private readonly name: string,
    private readonly consumer: QueueConsumer,
    o: { root: string; journalDir: string; deadLetters: DeadLetters; log: (line: string) => void; visibilityTimeoutMs?: number },
  ) {
    this.deadLetters = o.deadLetters;
    this.source = new EventSource(consumer.def, o.root, o.deadLetters, o.log);
    this.visibilityMs = o.visibilityTimeoutMs ?? consumer.queue.visibilityTimeoutSeconds * 1000;
    this.journal = new Journal<Sent>(join(o.journalDir, `${name}.jsonl`));
    // Delayed messages keep their time; those received before the stop are visible again at once.
    const pending = this.journal.pending();
    for (const [id, m] of pending) this.messages.push({ id, ...m, receiveCount: 0 });
    if (pending.length) o.log(`${name}: ${pending.length} message(s) not yet handled before the last stop, delivered again`);
  }

  /** Starts feeding the consumer (once the SQS API listens: a handler may send to a queue). */
  start(): void {
    this.loop ??= this.poll();
  }

  /** Journals the messages (before the sender gets their ids), then queues them. */
  send(entries: { body: string; delaySeconds: number }[]): string[] {
    const now = Date.now();
    const sent = entries.map((e) => ({ id: randomUUID(), value: { body: e.body, visibleAt: now + e.delaySeconds * 1000, sentAt: now } }));
    this.journal.add(sent);
    for (const m of sent) this.messages.push({ id: m.id, ...m.value, receiveCount: 0 });
    this.wake();
    return sent.map((m) => m.id);
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
      const visible = this.messages.filter((m) => m.visibleAt <= now);
      if (visible.length && this.inFlight < MAX_CONCURRENCY) {
        const received = visible.slice(0, this.consumer.queue.batchSize);
        this.messages = this.messages.filter((m) => !received.includes(m));
        const batch = received.filter((m) => !this.redriven(m));
        for (const m of batch) m.receiveCount++;
        if (batch.length) void this.run(batch);
        continue;
      }
      const next = this.inFlight < MAX_CONCURRENCY && this.messages.length ? Math.min(...this.messages.map((m) => m.visibleAt)) - now : 60_000;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, Math.min(next, 60_000)));
        this.waker = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** A message already received maxReceiveCount times goes to the dead-letter queue instead of the consumer. */
  private redriven(m: Message): boolean {
    if (m.receiveCount < this.consumer.queue.maxReceiveCount) return false;
    this.deadLetters.write(`${this.name}_dlq`, {
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
    }
    this.inFlight--;
    this.wake();
  }
}
