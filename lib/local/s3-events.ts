// S3 event notifications, locally: the emulator's object events (forwarded by lib/local/s3.ts) invoke the
// function the stack subscribes to them, as S3 invokes it on AWS: asynchronously, with Lambda's retries
// (ASYNC_DELIVERY), then the event written to the dead-letter folder.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Event } from 'aws-lambda';
import { ASYNC_DELIVERY, type UPLOAD_COMPLETER } from '../consumers';
import { handlerLoader } from './handlers';

type S3Handler = (event: S3Event) => Promise<void>;

export interface S3Notifications {
  /** Called with each event the emulator emits; returns at once (the invocation runs on its own). */
  deliver(event: S3Event): void;
  /** Resolves when every invocation started so far has ended (a stop waits for them). */
  idle(): Promise<void>;
}

export function s3Notifications(o: { root: string; def: typeof UPLOAD_COMPLETER; deadLetterDir: string; log: (line: string) => void; retryDelayMs?: number }): S3Notifications {
  const running = new Set<Promise<void>>();
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
  return {
    deliver(event) {
      // A prefix filter matches the key as the event carries it (URL-encoded; `bots/` reads the same either way).
      const wanted = event.Records.filter((r) => r.eventName === o.def.events.eventName && r.s3.object.key.startsWith(o.def.events.prefix));
      if (!wanted.length) return;
      const run = invoke({ Records: wanted }).finally(() => running.delete(run));
      running.add(run);
    },
    idle: async () => {
      await Promise.all([...running]);
    },
  };
}
