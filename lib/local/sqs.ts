// A local stand-in for the SQS API: SendMessage and SendMessageBatch (what our code calls, through
// lambdas/aws/sqs.ts with an endpoint override), with delays. Each queue with a consumer is a LocalQueue
// (local-queue.ts: journaled messages, the event source feeding its function); a queue without one is a
// dead-letter queue, whose messages are written to its dead-letter file (dead-letters.ts).
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { DeadLetters, parsedBody } from './dead-letters';
import { LocalQueue, md5, type Outgoing, type QueueConsumer } from './local-queue';

export type { QueueConsumer } from './local-queue';

/** A request's body, as the SDK sends SendMessage and SendMessageBatch. */
type SqsEntry = { MessageBody: string; DelaySeconds?: number; MessageGroupId?: string; MessageDeduplicationId?: string };
type SqsInput = SqsEntry & { QueueUrl?: string; Entries: (SqsEntry & { Id: string })[] };
const outgoing = (e: SqsEntry): Outgoing => ({ body: e.MessageBody, delaySeconds: e.DelaySeconds ?? 0, groupId: e.MessageGroupId, deduplicationId: e.MessageDeduplicationId });

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

export async function startLocalQueues(o: LocalQueuesOptions): Promise<LocalQueues> {
  const endpoint = `http://localhost:${o.port}`;
  const deadLetters = new DeadLetters(o.deadLetterDir, o.log);
  const queues = new Map<string, LocalQueue | undefined>();
  for (const [name, consumer] of Object.entries(o.consumers)) {
    queues.set(name, consumer && new LocalQueue(name, consumer, { ...o, deadLetters }));
  }

  /** Queues the messages (journaled before the sender gets their ids); a dead-letter queue's go to its file. */
  const enqueue = (name: string, entries: Outgoing[]): string[] => {
    const queue = queues.get(name);
    if (queue) return queue.send(entries);
    for (const e of entries) deadLetters.write(name, { source: 'aws:sqs', condition: 'Sent', body: parsedBody(e.body) });
    return entries.map(() => randomUUID());
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
        const [id] = enqueue(name, [outgoing(input)]);
        return reply(200, { MessageId: id, MD5OfMessageBody: md5(input.MessageBody) });
      }
      if (target === 'AmazonSQS.SendMessageBatch') {
        const entries = input.Entries;
        const ids = enqueue(name, entries.map(outgoing));
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
  for (const q of queues.values()) q?.start();

  return {
    endpoint,
    stop: async () => {
      await Promise.all([...queues.values()].map((q) => q?.stop() ?? Promise.resolve()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
