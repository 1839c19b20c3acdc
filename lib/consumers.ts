// The functions no route calls: the stream consumers (publisher, webhook dispatcher) and the webhook queue's
// deliverer, with how their events reach them. CDK and the local stream poller and SQS read the same entries.
import { NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef } from './routes';
import { REDO_MAX_RECEIVES } from '../lambdas/aws/stream-batch';
import { INTERACTIVE_TYPES } from '../lambdas/entities/interactive';

/**
 * Stream consumers and the events they take. The filter is the Lambda event-source filter pattern on AWS,
 * and the local stream poller applies the same patterns before calling the handler.
 */
export interface StreamConsumerDef extends FunctionDef {
  filters: Record<string, unknown>[];
  /** Records per invocation in the local poller; on AWS the stage's streamBatchSize (lib/stack-config.ts), this by default. */
  batchSize: number;
  /**
   * How long records may be gathered before an invocation with fewer than batchSize of them
   * (MaximumBatchingWindowInSeconds, on AWS and locally); none by default: records go out as soon as they are read.
   */
  batchingWindowSeconds?: number;
  /**
   * Room for a lane's slowest record and the set-aside after it: a lane starts no record once less than one try at
   * its slowest is left (lambdas/aws/stream-batch.ts), and its rest goes to the redo queue, in order.
   */
  timeoutSeconds: number;
  /**
   * Where the mapping starts reading when it is created or replaced: LATEST skips what was written meanwhile;
   * TRIM_HORIZON (the stream's last 24 h, records past maxRecordAgeSeconds going to the dead-letter queue)
   * loses nothing, for a consumer whose repeats are harmless.
   */
  startingPosition: 'LATEST' | 'TRIM_HORIZON';
  /**
   * The environment variable naming its FIFO redo queue (lambdas/flows/stream-redo.ts): where a user's records go
   * once one keeps failing, so the batch goes on without them; the same function consumes it.
   */
  redoQueueEnv: 'PUBLISHER_REDO_QUEUE_URL' | 'DISPATCHER_REDO_QUEUE_URL';
  /**
   * The message of the log line the handler writes each time it reports a batch item failure: a metric
   * filter counts them for an alarm (Lambda counts a batch that reports failures as a success, not an error).
   */
  failureLog: string;
}

/**
 * Records per stream batch by default. A batch's users run side by side (one lane each, lambdas/aws/stream-batch.ts),
 * so a batch waits on AWS's answers about as long as one user's records; its CPU adds up (docs/benchmarks.md).
 */
export const STREAM_BATCH_SIZE = 100;

/** Delivery settings shared by the stream consumers: the event source mapping on AWS, the local poller here. */
export const STREAM_DELIVERY = {
  /** Retries of a failing batch suffix before its records go to the dead-letter destination. */
  retryAttempts: 5,
  /** A batch whose function throws is split in two and each half retried: a poison record ends up alone. */
  bisectBatchOnFunctionError: true,
  maxRecordAgeSeconds: 3600,
  /**
   * One batch at a time per shard. More would reorder a channel's publications: AWS keeps order with a
   * higher ParallelizationFactor only per item (partition and sort key), and one user's channel gets
   * records of many items. Concurrency comes from inside the batch instead: larger batches, grouped by user.
   */
  parallelizationFactor: 1,
};

/**
 * What the publisher calls for its holds: read with the channel's sockets (Query), set (UpdateItem) and released
 * (DeleteItem); and a redone record too large for SQS read again (GetItem).
 */
const HOLD_CALLS = ['Query', 'GetItem', 'UpdateItem', 'DeleteItem'] as const;

export const PUBLISHER: StreamConsumerDef = {
  id: 'publisher',
  entry: 'lambdas/realtime/publish.ts',
  // GetItem: the bot (cached), whose client interface must still be open for a publication to go out, and the
  // channel's stream read again when its position moved; DeleteItem: a gone socket's records; UpdateItem: the
  // chat's counters, the channel's position and a gone socket's entry; PutItem: a publication's history item; and
  // HOLD_CALLS.
  dynamodb: ['Query', 'GetItem', 'DeleteItem', 'UpdateItem', 'PutItem'],
  redoQueueEnv: 'PUBLISHER_REDO_QUEUE_URL',
  s3: ['s3:GetObject'],
  manageConnections: true,
  // Its CPU per record (the AWS SDK's, some 4.5 calls a record) bounds a shard's throughput; a stage that needs
  // more per shard sets streamConsumerMemorySize (docs/sizing.md), cheaper per exchange at this one (docs/cost.md).
  memorySize: 256,
  // A user's records go out one after another, each at worst the chat's update in up to three writes (a read
  // or an older message raced it), the bot's read, a Query of the channel's sockets, then the posts (in
  // parallel): 6 calls, 42 s at AWS_CALL_SECONDS; a lane past the time left sets its rest aside.
  batchSize: STREAM_BATCH_SIZE,
  timeoutSeconds: 300,
  // Chats' counters and activity follow from its records (entities/chat-activity.ts countMessage): none may be skipped
  // when the mapping is (re)created. Repeats are harmless: a message is counted once per sequence number, and
  // a client drops a publication whose id it has.
  startingPosition: 'TRIM_HORIZON',
  failureLog: 'publish failed; the record will be retried',
  filters: [
    // A new message, incoming or outcoming.
    { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['message'] } } } },
    // A new version of a message the bot side edited.
    { eventName: ['MODIFY'], dynamodb: { NewImage: { entity: { S: ['message'] }, is_edited: { BOOL: [true] } } } },
    // An interactive message changed (answered: the publisher sends it when edited_at moved, lambdas/realtime/publish.ts).
    { eventName: ['MODIFY'], dynamodb: { NewImage: { entity: { S: ['message'] }, content_type: { S: [...INTERACTIVE_TYPES] } } } },
    // The bot side typing (written at most every 2 s per chat and sender; TTL removals are not published).
    { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { entity: { S: ['typing'] } } } },
    // A direct upload settled (uploaded, or rejected with its reason): the page waiting on it learns at once.
    // Only the settling write (from pending): a sent file's new expiry or a retention task's is no news.
    {
      eventName: ['MODIFY'],
      dynamodb: { NewImage: { entity: { S: ['file'] }, status: { S: ['uploaded', 'rejected'] } }, OldImage: { status: { S: ['pending'] } } },
    },
    // A chat marked read (mark-read sets last_event = "read"; a new message sets it to "message").
    { eventName: ['MODIFY'], dynamodb: { NewImage: { entity: { S: ['chat'] }, last_event: { S: ['read'] } } } },
  ],
};

/**
 * The publisher of a stack with realtime off: no sockets to publish to, but chats' activity and unread counters
 * still follow from new messages (countMessage), so it takes only those records and calls only what they need (the chat's counters, the holds).
 */
export const publisherFor = (realtime: boolean): StreamConsumerDef =>
  realtime ? PUBLISHER : { ...PUBLISHER, dynamodb: [...HOLD_CALLS], s3: [], manageConnections: false, filters: [PUBLISHER.filters[0]] };

/**
 * The bot side's stream consumer. Webhooks, step 1: every new user message of a bot with a webhook becomes a
 * job on the webhook queue, and so does every answer to the bot's interactive messages. A file's object lives as long as its record: a removed file record (a direct
 * upload that never completed, expired by TTL after 24 h, or by its bot's retention) has its object deleted.
 * A message that attaches uploaded files makes them sent: kept as its bot's retention says, and given back to
 * the user's storage quota (an unsent file's bytes go back when its record is removed). And a change of a bot's retention starts the task that re-dates what the bot has stored.
 */
export const WEBHOOK_DISPATCHER: StreamConsumerDef = {
  id: 'webhook_dispatcher',
  entry: 'lambdas/bot/webhook-dispatch.ts',
  // GetItem: the bot (cached) and, for a reminder, the chat; PutItem: the chat's reminder item, a retention task,
  // a removed file's quota release marker; UpdateItem: a sent file's sent_at and ttl, a user's storage quota
  // (both in one TransactWriteItems when the bytes go back); and GetItem: a redone record too large for SQS read again.
  dynamodb: ['GetItem', 'PutItem', 'UpdateItem'],
  s3: ['s3:DeleteObject'],
  // Each job on its bot's lane (GetItem: the bot's slow mark, cached).
  queues: ['webhooks', 'webhooks_slow', 'tasks'],
  redoQueueEnv: 'DISPATCHER_REDO_QUEUE_URL',
  memorySize: 256,
  // Per record at worst a reminder's three calls (the chat read, the reminder's put, its delayed job), beside
  // which a message's files are kept (at most two calls, in parallel with them), or a bot read (cached), or a
  // removed file's object deletions (in parallel) and its quota release; a lane past the time left sets its rest
  // aside; then per 10 jobs one SendMessageBatch.
  batchSize: STREAM_BATCH_SIZE,
  timeoutSeconds: 300,
  // A replayed record queues its job again: the event keeps its id (X-Webhook-Id, the message id), and
  // receivers dedupe by it (docs/bot-api.md "Webhooks"); deleting an object twice is harmless. Nothing
  // written while the mapping is (re)created is lost.
  startingPosition: 'TRIM_HORIZON',
  failureLog: 'a stream record failed; the batch will be retried from it',
  filters: [
    // Incoming messages of bots with a webhook (create-message marks them from the bot's settings).
    {
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['message'] }, sender_type: { S: ['incoming'] }, webhook: { BOOL: [true] } } },
    },
    // Replies of bots with a webhook and unread reminders (bot create-message marks them): their reminders.
    {
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['message'] }, sender_type: { S: ['outcoming'] }, webhook: { BOOL: [true] } } },
    },
    // Messages that attach uploaded files (create-message marks them): the files are kept as their bot's
    // retention says, no longer as unsent uploads.
    { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['message'] }, attaches: { BOOL: [true] } } } },
    // A file record removed (TTL, or deleted), or an export's item expired: its object goes too.
    { eventName: ['REMOVE'], dynamodb: { OldImage: { entity: { S: ['file', 'export'] } } } },
    // An interactive message changed: when newly answered (the old image without submitted_values), the bot's
    // message.response job (lambdas/bot/webhook-dispatch.ts); an edit or a retention re-date, nothing.
    { eventName: ['MODIFY'], dynamodb: { NewImage: { entity: { S: ['message'] }, content_type: { S: [...INTERACTIVE_TYPES] } } } },
    // A bot's settings changed (rare): a moved retention_set_at (the retention set) re-dates its messages and files.
    { eventName: ['MODIFY'], dynamodb: { NewImage: { entity: { S: ['bot'] } } } },
  ],
};

/**
 * How a stream consumer's FIFO redo queue feeds it back (SQS event source on AWS, the local queue here). Its
 * visibility timeout is the consumer's timeout, the least Lambda takes: a message that failed blocks its user's
 * group until it shows again, so the wait is kept short; past maxReceiveCount it goes to the redo dead-letter queue.
 */
export const REDO_QUEUE = {
  // One message per invocation: a FIFO receive that returned the messages behind a failing one would count a
  // receive against each, and send them to the dead-letter queue with it.
  batchSize: 1,
  visibilityTimeoutSeconds: 300,
  maxReceiveCount: REDO_MAX_RECEIVES,
};

/** Webhooks, step 2: an SQS consumer that signs and POSTs each job, requeues failures, dead-letters the rest. */
export const WEBHOOK_DELIVERER: FunctionDef = {
  id: 'webhook_deliverer',
  entry: 'lambdas/bot/webhook-deliver.ts',
  // A reminder: its claim (UpdateItem) and the chat's unread replies (Query) besides the reads of an event;
  // GetItem and PutItem: the bot's slow mark, read before a fast-lane POST and written on a timeout.
  dynamodb: ['GetItem', 'BatchGetItem', 'UpdateItem', 'Query', 'PutItem'],
  s3: ['s3:GetObject'],
  queues: ['webhooks', 'webhooks_slow', 'webhooks_dlq'],
  // Waits on the bot's server most of its time: billed per GB-second of that wait.
  memorySize: 256,
  // Jobs run in parallel, each at worst a reminder's first attempt: a bot read, the claim, the chat and user
  // read, the Query of its replies, the POST (WEBHOOK_TIMEOUT_MS, 5 s) and maybe a requeue: 5 ×
  // AWS_CALL_SECONDS + 5 = 40 s. Below the queue's visibility timeout.
  timeoutSeconds: 50,
};

/**
 * Deliverer invocations at once (the SQS event source's maximum concurrency, 2 to 1,000; each takes a batch of up
 * to 10 jobs, posted in parallel): per-stage settings (lib/stack-config.ts), the local queues' too. The fast lane
 * stays well under the account's 1,000 concurrent executions, so a flood of webhooks cannot throttle the APIs;
 * 100 × 10 jobs in flight keep up with thousands of webhooks/s to receivers that answer in a few hundred ms.
 * The slow lane (bots whose receiver timed out, lambdas/flows/webhook-lanes.ts) is small: 10 × 10 jobs of
 * up to WEBHOOK_TIMEOUT_MS (5 s) each, 20 such webhooks/s across every slow bot.
 */
export const WEBHOOK_CONCURRENCY = { fast: 100, slow: 10, min: 2, max: 1000 };

/** How each webhook queue (both lanes) feeds the deliverer (SQS event source on AWS, the local queue here). */
export const WEBHOOK_QUEUE = {
  batchSize: 10,
  /**
   * A job our own code failed on (not the receiver) is redelivered after this, up to maxReceiveCount. Six
   * times the deliverer's timeout, as AWS asks of a queue feeding Lambda: a receive that found the function
   * throttled counts towards maxReceiveCount too, and the longer wait leaves room for Lambda's retries.
   */
  visibilityTimeoutSeconds: 300,
  maxReceiveCount: 5,
};

/**
 * Direct uploads, step 2: S3 invokes it (asynchronously) when a browser's POST has put an object under
 * bots/; it reads the object's size and first bytes and settles the file (uploaded, or rejected and deleted).
 */
export const UPLOAD_COMPLETER: FunctionDef & { events: { prefix: string; eventName: 'ObjectCreated:Post' } } = {
  id: 'upload_completer',
  entry: 'lambdas/storage/complete-upload.ts',
  dynamodb: ['GetItem', 'UpdateItem'],
  // CopyObject (s3:GetObject of the upload key, s3:PutObject of its sealed copy), a ranged GET of the copy, and
  // the deletion of the upload key (and of a copy that lost to another completion).
  s3: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  memorySize: 256,
  // One object per event: a read, the copy (3 attempts of up to 60 s each: COPY_REQUEST_TIMEOUT_MS, for objects
  // of up to 5 GB), a ranged GET, the bot's settings (cached), the update, two deletes: 180 s + 6 ×
  // AWS_CALL_SECONDS at worst.
  timeoutSeconds: 240,
  // Only browser POSTs: the small-file upload's own PutObject settles its file itself.
  events: { prefix: 'bots/', eventName: 'ObjectCreated:Post' },
};

/** How S3 invokes the upload completer: Lambda's retries of an asynchronous event, then its dead-letter queue. */
export const ASYNC_DELIVERY = { retryAttempts: 2, maxEventAgeSeconds: 6 * 3600 };

/**
 * The Bot API's background tasks (erase a user, export one, re-date a bot's messages and files to a new retention):
 * an SQS consumer that runs one task at a time until done or nearly out of time, then queues the rest of it
 * (lambdas/bot/task-worker.ts).
 */
export const TASK_WORKER: FunctionDef = {
  id: 'task_worker',
  entry: 'lambdas/bot/task-worker.ts',
  // Query: the partitions of the user, its chats and rate windows; BatchWriteItem: their deletion, 25 at a time;
  // DeleteItem: the user item, only if still this user's. An export: BatchGetItem (the files), PutItem (its
  // expiring item), s3:PutObject (the file), s3:GetObject (the files' presigned URLs in it). A retention
  // change: the bot's chats (Queries of gsi2's shards, and of gsi1 while chats move), their messages (Query), each
  // ttl (UpdateItem), the bot's objects (s3:ListBucket) and their files (BatchGetItem). The data move
  // (flows/migrate.ts): Scan of the table, each user moved in a TransactWriteItems (PutItem, DeleteItem), each
  // chat's list entry in an UpdateItem.
  dynamodb: ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'UpdateItem', 'PutItem', 'BatchWriteItem', 'DeleteItem'],
  index: true,
  s3: ['s3:ListBucket', 's3:DeleteObject', 's3:PutObject', 's3:GetObject'],
  closeConnections: true,
  queues: ['tasks'],
  memorySize: 256,
  // A task stops between steps once less than 30 s is left and queues its rest: no step is ever cut short.
  timeoutSeconds: 300,
};

/** How the task queue feeds the worker (SQS event source on AWS, the local queue here). */
export const TASK_QUEUE = {
  batchSize: 1,
  /** Six times the worker's timeout (WEBHOOK_QUEUE says why): a task's job is never received twice at once. */
  visibilityTimeoutSeconds: 1800,
  /** TASK_MAX_RECEIVES (lambdas/entities/tasks.ts) runs, then a receive that marks the task failed. */
  maxReceiveCount: 6,
};

/** Every function the stack deploys (CDK's own custom-resource handlers aside), in the order of the tables. */
export const ALL_FUNCTIONS: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, UPLOAD_COMPLETER, TASK_WORKER, NOT_FOUND];
