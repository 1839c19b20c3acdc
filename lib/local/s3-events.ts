// S3 event notifications, locally: the emulator's object events (forwarded by lib/local/s3.ts) invoke the
// function the stack subscribes to them, as S3 invokes it on AWS: asynchronously, run by the event-source runner
// (event-source.ts: Lambda's two retries, then the invocation record to the on-failure destination, a dead-letter
// file). The emulator journals each event (DATA_DIR/queues/s3-events.jsonl) before it answers the request; it
// is marked done once its invocation ends (or at once when no function takes it): a restart invokes again those
// a crash cut.
import { join } from 'node:path';
import type { S3Event } from 'aws-lambda';
import { ASYNC_DELIVERY, type UPLOAD_COMPLETER } from '../consumers';
import { DeadLetters } from './dead-letters';
import { EventSource } from './event-source';
import { Journal } from './journal';

export interface S3Notifications {
  /** The journal the emulator writes each event to, before it is delivered. */
  journalFile: string;
  /** Called with each event the emulator emits; returns at once (the invocation runs on its own). */
  deliver(id: string, event: S3Event): void;
  /** Invokes again the events whose invocation a crash or stop cut short (once S3 and DynamoDB are up). */
  resume(): void;
  /** Resolves when every invocation started so far has ended (a stop waits for them). */
  idle(): Promise<void>;
}

export function s3Notifications(o: {
  root: string;
  def: typeof UPLOAD_COMPLETER;
  deadLetterDir: string;
  journalDir: string;
  log: (line: string) => void;
  retryDelayMs?: number;
}): S3Notifications {
  const running = new Set<Promise<void>>();
  const journalFile = join(o.journalDir, 's3-events.jsonl');
  const journal = new Journal<S3Event>(journalFile, true);
  const cut = journal.pending();
  const source = new EventSource(o.def, o.root, new DeadLetters(o.deadLetterDir, o.log), o.log);
  // Lambda waits about a minute before the first retry and two before the second; locally a second, then two.
  const policy = { ...ASYNC_DELIVERY, retryDelayMs: (retry: number) => (o.retryDelayMs ?? 1000) * (retry + 1) };
  const invoke = (event: S3Event) => source.runAsync(event, o.def.id, policy);
  const start = (id: string, event: S3Event) => {
    const run = invoke(event)
      .then(() => journal.done(id))
      .finally(() => running.delete(run));
    running.add(run);
  };
  // A prefix filter matches the key as the event carries it (URL-encoded; `bots/` reads the same either way).
  const wanted = (event: S3Event): S3Event => ({
    Records: event.Records.filter((r) => r.eventName === o.def.events.eventName && r.s3.object.key.startsWith(o.def.events.prefix)),
  });
  const take = (id: string, event: S3Event) => {
    const mine = wanted(event);
    if (mine.Records.length) start(id, mine);
    else journal.done(id);
  };
  return {
    journalFile,
    deliver(id, event) {
      journal.adopt(id, event);
      take(id, event);
    },
    resume() {
      if (cut.length) o.log(`S3 events: ${cut.length} not handled before the last stop, delivered again`);
      for (const [id, event] of cut.splice(0)) take(id, event);
    },
    idle: async () => {
      await Promise.all([...running]);
    },
  };
}
