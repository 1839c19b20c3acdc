// The local stack's one dead-letter format, for every event source (stream consumers, queues, S3's events): on
// AWS each dead-letter destination is an SQS queue; here it is a JSONL file, DATA_DIR/dead-letter/<name>.jsonl,
// one line per message that queue would hold (docs/configuration.md "Dead letters").
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';

/** Why a message is in a dead-letter queue: Lambda's condition where Lambda names one. */
export type DeadLetterCondition =
  /** A stream batch failed its last retry (MaximumRetryAttempts), or an async invocation its two retries. */
  | 'RetryAttemptsExhausted'
  | 'RetriesExhausted'
  /** A stream record older than MaximumRecordAgeInSeconds, or an async event older than MaximumEventAgeInSeconds. */
  | 'RecordAgeExceeded'
  | 'EventAgeExceeded'
  /** An SQS message received maxReceiveCount times without being deleted: the queue's redrive policy moved it. */
  | 'MaxReceiveCountExceeded'
  /** Sent to the dead-letter queue by our own code (SendMessage), as the webhook deliverer does after its retries. */
  | 'Sent';

/** One line of a dead-letter file. */
export interface DeadLetter {
  /** When it was written (ISO 8601). */
  at: string;
  /** The event source the message came from. */
  source: 'aws:dynamodb' | 'aws:sqs' | 'aws:s3';
  /** The function that failed it; absent for a message our code sent to the dead-letter queue itself. */
  consumer?: string;
  condition: DeadLetterCondition;
  /**
   * The message body, parsed, as AWS writes it to the dead-letter queue: for a stream, Lambda's invocation record
   * (requestContext, responseContext, DDBStreamBatchInfo: the shard and sequence range, not the records); for an
   * S3 event, Lambda's invocation record with the event (requestPayload); for a queue, the message's own body.
   */
  body: unknown;
  /** A queue's message only: its attributes when it was moved (ApproximateReceiveCount, SentTimestamp). */
  attributes?: Record<string, string>;
  /** Local only, for a stream batch: the records DDBStreamBatchInfo names (on AWS, read them from the stream). */
  records?: DynamoDBRecord[];
}

/** Appends dead letters to DATA_DIR/dead-letter/<name>.jsonl (a file per consumer's dead-letter queue). */
export class DeadLetters {
  constructor(
    readonly dir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** The file of dead-letter queue `name`. */
  file(name: string): string {
    return join(this.dir, `${name}.jsonl`);
  }

  write(name: string, letter: Omit<DeadLetter, 'at'>): void {
    mkdirSync(this.dir, { recursive: true });
    const line: DeadLetter = { at: new Date().toISOString(), ...letter };
    appendFileSync(this.file(name), JSON.stringify(line) + '\n');
    this.log(`${letter.consumer ?? name}: dead-lettered (${letter.condition}) → ${this.file(name)}`);
  }
}

/** A body as SQS hands it on: parsed when it is JSON (ours always is), else the text. */
export function parsedBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
