// S3 event notifications, locally: the emulator's object events (forwarded by lib/local/s3.ts) invoke the
// function the stack subscribes to them, as S3 invokes it on AWS: asynchronously, with Lambda's retries
// (ASYNC_DELIVERY), then the event written to the dead-letter folder. Each event is journaled
// (DATA_DIR/queues/<function>-events.jsonl) until its invocation ends: a restart invokes again those a crash cut.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Event } from 'aws-lambda';
import { ASYNC_DELIVERY, type UPLOAD_COMPLETER } from '../consumers';
import { handlerLoader } from './handlers';
import { Journal } from './journal';

type S3Handler = (event: S3Event) => Promise<void>;

export interface S3Notifications {
  /** Called with each event the emulator emits; returns at once (the invocation runs on its own). */
  deliver(event: S3Event): void;
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
  const journal = new Journal<S3Event>(join(o.journalDir, `${o.def.id}-events.jsonl`));
  const cut = journal.pending();
  const load = handlerLoader<S3Handler>(o.root);
  const invoke = async (event: S3Event): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await (await load(o.def.entry))(event);
      } catch (err) {
        if (attempt >= ASYNC_DELIVERY.retryAttempts) {
          mkdirSync(o.deadLetterDir, { recursive: true });
          const file = join(o.deadLetterDir, `${o.def.id}.jsonl`);
          appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), function: o.def.id, error: String(err), event }) + '\n');
          o.log(`${o.def.id}: gave up on an S3 event after ${attempt + 1} attempts; written to ${file}`);
          return;
        }
        await new Promise((r) => setTimeout(r, (o.retryDelayMs ?? 1000) * (attempt + 1)));
      }
    }
  };
  const start = (id: string, event: S3Event) => {
    const run = invoke(event)
      .then(() => journal.done(id))
      .finally(() => running.delete(run));
    running.add(run);
  };
  return {
    deliver(event) {
      // A prefix filter matches the key as the event carries it (URL-encoded; `bots/` reads the same either way).
      const wanted = event.Records.filter((r) => r.eventName === o.def.events.eventName && r.s3.object.key.startsWith(o.def.events.prefix));
      if (!wanted.length) return;
      const id = randomUUID();
      journal.add([{ id, value: { Records: wanted } }]);
      start(id, { Records: wanted });
    },
    resume() {
      if (cut.length) o.log(`${o.def.id}: ${cut.length} S3 event(s) not handled before the last stop, invoked again`);
      for (const [id, event] of cut.splice(0)) start(id, event);
    },
    idle: async () => {
      await Promise.all([...running]);
    },
  };
}
