// A local stand-in for the SQS queues: the SQS JSON API's SendMessage and SendMessageBatch (what our
// code calls, through lambdas/aws/sqs.ts with an endpoint override), delays, and an SQS event source that
// feeds the consumer like Lambda does (batches, batchItemFailures, visibility timeout, maxReceiveCount →
// the dead-letter queue). The dead-letter queue is a file: DATA_DIR/dead-letter/<queue>.jsonl. Each queue's
// messages are journaled in DATA_DIR/queues/<queue>.jsonl (journal.ts): a restart delivers again every message
// not yet handled, those in flight at a crash at once (as SQS does once their visibility timeout is over).
import { createServer, type Server } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { handlerLoader } from './handlers';
import { Journal } from './journal';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type FunctionDef } from '../routes';

type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** A request's body, as the SDK sends SendMessage and SendMessageBatch. */
type SqsInput = { QueueUrl?: string; MessageBody: string; DelaySeconds?: number; Entries: { Id: string; MessageBody: string; DelaySeconds?: number }[] };

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

export interface LocalQueues {
  endpoint: string;
  stop(): Promise<void>;
}

export interface LocalQueuesOptions {
  host: string;
  port: number;
  root: string;
  deadLetterDir: string;
  /** Where each queue's journal is kept (DATA_DIR/queues). */
  journalDir: string;
  /** queue name → its consumer; queues without one are dead-letter queues (written to a file). */
  consumers: Record<string, QueueConsumer | undefined>;
  log: (line: string) => void;
  /** Redelivery delay after a consumer failure; SQS's visibility timeout (shortened by tests). */
  visibilityTimeoutMs?: number;
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

export async function startLocalQueues(o: LocalQueuesOptions): Promise<LocalQueues> {
  const endpoint = `http://localhost:${o.port}`;
  const queues = new Map<string, Message[]>(Object.keys(o.consumers).map((n) => [n, []]));
  const journals = new Map<string, Journal<Sent>>();
  for (const name of Object.keys(o.consumers)) {
    if (!o.consumers[name]) continue;
    const journal = new Journal<Sent>(join(o.journalDir, `${name}.jsonl`));
    journals.set(name, journal);
    // Delayed messages keep their time; those received before the stop are visible again at once.
    for (const [id, m] of journal.pending()) (queues.get(name) as Message[]).push({ id, ...m, receiveCount: 0 });
    if (journal.pending().length) o.log(`${name}: ${journal.pending().length} message(s) not yet handled before the last stop, delivered again`);
  }
  let stopped = false;
  // Each consumer's loop sleeps until its next message is due or something changes (a send, a redelivery,
  // a batch done): an idle stack does no work here.
  const wakers = new Map<string, () => void>();
  const wake = (name: string) => wakers.get(name)?.();

  const deadLetter = (queue: string, body: string, why: string) => {
    mkdirSync(o.deadLetterDir, { recursive: true });
    const file = join(o.deadLetterDir, `${queue}.jsonl`);
    appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), queue, why, body: JSON.parse(body) as unknown }) + '\n');
    o.log(`${queue}: dead-lettered (${why}) → ${file}`);
  };

  /** Journals the messages (before the sender gets their ids), then queues them. */
  const enqueue = (name: string, entries: { body: string; delaySeconds: number }[]): string[] => {
    const list = queues.get(name);
    if (!list) throw Object.assign(new Error(`no queue ${name}`), { code: 'QueueDoesNotExist' });
    const now = Date.now();
    const sent = entries.map((e) => ({ id: randomUUID(), value: { body: e.body, visibleAt: now + e.delaySeconds * 1000, sentAt: now } }));
    if (!o.consumers[name]) for (const m of sent) deadLetter(name, m.value.body, 'sent to the dead-letter queue');
    else {
      journals.get(name)?.add(sent);
      for (const m of sent) list.push({ id: m.id, ...m.value, receiveCount: 0 });
    }
    wake(name);
    return sent.map((m) => m.id);
  };

  // node:http ignores what a listener returns (an error the body does not answer stays unhandled).
  const server: Server = createServer((req, res) => void (async () => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const reply = (status: number, body: unknown, type?: string) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...(type && { 'x-amzn-query-error': `${type};Sender` }) });
      res.end(JSON.stringify(body));
    };
    try {
      const target = String(req.headers['x-amz-target'] ?? '');
      // The SDK's JSON protocol: the fields of SendMessage and SendMessageBatch read here.
      const input = JSON.parse(Buffer.concat(chunks).toString() || '{}') as SqsInput;
      const name = String(input.QueueUrl ?? '').split('/').pop() as string;
      if (!queues.has(name)) return reply(400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' }, 'AWS.SimpleQueueService.NonExistentQueue');
      if (target === 'AmazonSQS.SendMessage') {
        const [id] = enqueue(name, [{ body: input.MessageBody, delaySeconds: input.DelaySeconds ?? 0 }]);
        return reply(200, { MessageId: id, MD5OfMessageBody: md5(input.MessageBody) });
      }
      if (target === 'AmazonSQS.SendMessageBatch') {
        const entries = input.Entries;
        const ids = enqueue(name, entries.map((e) => ({ body: e.MessageBody, delaySeconds: e.DelaySeconds ?? 0 })));
        const Successful = entries.map((e, i) => ({ Id: e.Id, MessageId: ids[i], MD5OfMessageBody: md5(e.MessageBody) }));
        return reply(200, { Successful, Failed: [] });
      }
      reply(400, { __type: 'com.amazonaws.sqs#UnsupportedOperation', message: `${target} is not served locally` });
    } catch (err) {
      reply(500, { __type: 'InternalError', message: String(err) });
    }
  })());
  await new Promise<void>((r, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => r());
  });

  // The event source: poll visible messages, invoke the consumer with up to batchSize of them, at most a few
  // batches at once (Lambda scales out the same way), honouring batchItemFailures.
  const workers: Promise<void>[] = [];
  for (const [name, consumer] of Object.entries(o.consumers)) {
    if (!consumer) continue;
    const { def, queue } = consumer;
    const visibilityMs = o.visibilityTimeoutMs ?? queue.visibilityTimeoutSeconds * 1000;
    const handler = handlerLoader<SqsHandler>(o.root)(def.entry);
    let inFlight = 0;
    const run = async (batch: Message[]) => {
      inFlight++;
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
        eventSourceARN: `arn:aws:sqs:local:000000000000:${name}`,
        awsRegion: 'local',
      }));
      let failed: Set<string>;
      try {
        // Lambda's context as far as our handlers read it: the time left before the function's timeout.
        const deadline = Date.now() + (def.timeoutSeconds ?? 10) * 1000;
        const context = { awsRequestId: randomUUID(), functionName: def.id, getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
        const res = await (await handler)({ Records: records }, context);
        failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      } catch (err) {
        o.log(`${def.id}: handler threw (${(err as Error).message}); the batch will be redelivered`);
        failed = new Set(batch.map((m) => m.id));
      }
      const list = queues.get(name) as Message[];
      const journal = journals.get(name) as Journal<Sent>;
      for (const m of batch) {
        if (!failed.has(m.id)) journal.done(m.id);
        else if (m.receiveCount >= queue.maxReceiveCount) {
          deadLetter(`${name}_dlq`, m.body, `failed ${m.receiveCount} receives`);
          journal.done(m.id);
        } else list.push({ ...m, visibleAt: Date.now() + visibilityMs });
      }
      inFlight--;
      wake(name);
    };
    workers.push(
      (async () => {
        while (!stopped) {
          const list = queues.get(name) as Message[];
          const now = Date.now();
          const ready = list.filter((m) => m.visibleAt <= now);
          if (ready.length && inFlight < 4) {
            const batch = ready.slice(0, queue.batchSize);
            queues.set(name, list.filter((m) => !batch.includes(m)));
            for (const m of batch) m.receiveCount++;
            void run(batch);
            continue;
          }
          const next = inFlight < 4 && list.length ? Math.min(...list.map((m) => m.visibleAt)) - now : 60_000;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(1, Math.min(next, 60_000)));
            wakers.set(name, () => {
              clearTimeout(timer);
              resolve();
            });
          });
        }
      })(),
    );
  }

  return {
    endpoint,
    stop: async () => {
      stopped = true;
      for (const name of wakers.keys()) wake(name);
      await Promise.all(workers);
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
