// One flow per function: requests that make every AWS call the function makes, with the statuses a working
// function answers; here the realtime functions and the stream and queue consumers (the HTTP API's in
// api-flows.ts, the Bot API users' and the task worker's in user-flows.ts). A flow uses the other functions
// (their own users, full policies) for what it needs first, so it runs again on its own with a changed policy
// for the function under test.
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PUBLISHER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { sqsEvent, wsEvent } from './events';
import { keys } from '../../lambdas/entities/keys';
import { ApiFlows } from './api-flows';
import { PNG, type BatchResult } from './flow-base';
import type { DynamoDBRecord } from 'aws-lambda';
import { firstFileUrl, present } from '../support/contract';

export class CoreFlows extends ApiFlows {
  async ws_connect(): Promise<void> {
    const conn = randomUUID();
    const ok = await this.ws('ws_connect', wsEvent('$connect', conn, { query: { token: this.realtime().token } }));
    if (ok.statusCode !== 200) throw new Error(`$connect: ${ok.statusCode} ${ok.body ?? ''}`);
    if (!(await this.item(`CONN#${conn}`, 'CONN'))) throw new Error('$connect recorded nothing');
    const refused = await this.ws('ws_connect', wsEvent('$connect', randomUUID(), { query: {} }));
    if (refused.statusCode !== 401) throw new Error(`$connect without a token: ${refused.statusCode}`);
    // Past MAX_SOCKETS_PER_USER (10): the user's oldest socket gets the Disconnect push 3504, then DeleteConnection.
    const s = await this.session(`moto-cap-${randomUUID()}`);
    const sockets: string[] = [];
    for (let i = 0; i < 11; i++) {
      sockets.push(randomUUID());
      const r = await this.ws('ws_connect', wsEvent('$connect', sockets[i], { query: { token: this.realtime(s).token } }));
      if (r.statusCode !== 200) throw new Error(`$connect ${i + 1}: ${r.statusCode} ${r.body ?? ''}`);
      // The oldest subscribed recoverable: closing it also drops its entry in the channel's stream.
      if (i === 0) {
        const { token, channel } = this.realtime(s);
        const body = `${JSON.stringify({ id: 1, connect: { token } })}\n${JSON.stringify({ id: 2, subscribe: { channel, recoverable: true } })}`;
        if ((await this.ws('ws_default', wsEvent('$default', sockets[0], { body }))).statusCode !== 200) throw new Error('subscribe of the oldest socket');
      }
    }
    const closed = sockets.filter((id) => (this.hx.rec.frames.get(id) ?? []).some((f) => f.includes('"code":3504')));
    if (closed.length !== 1 || closed[0] !== sockets[0]) throw new Error(`${closed.length} sockets got the Disconnect push 3504, not the oldest alone`);
  }

  async ws_default(): Promise<void> {
    await this.socket(false, false); // subscribe in its own frame: the transaction that checks the connection; no stream
    await this.socket(true); // connect and subscribe in one frame: a plain put
    // Another user's channel: refused (103), after the transaction's check failed and a read told why.
    const conn = await this.socket(false);
    const channel = this.realtime().channel;
    const other = `${channel.replace(/#.*/, '')}#${randomUUID()}`;
    const r = await this.ws('ws_default', wsEvent('$default', conn, { body: JSON.stringify({ id: 3, subscribe: { channel: other } }) }));
    if (!String(r.body).includes('"code":103')) throw new Error(`a foreign channel: ${String(r.body)}`);
    // Recovery: a subscribe from a position the channel's history covers reads it (one positioned publication,
    // written here as the publisher writes it).
    const stream = await this.item<{ epoch: string }>(keys.channelStream(channel).pk, keys.channelStream(channel).sk);
    if (!stream) throw new Error('subscribe made no stream position');
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.channelHistory(channel, stream.epoch, 1), entity: 'channel_history', data: { type: 'action' } } }));
    await this.admin.send(new UpdateCommand({ TableName: this.hx.stack.tableName, Key: keys.channelStream(channel), UpdateExpression: 'SET #o = :one', ExpressionAttributeNames: { '#o': 'offset' }, ExpressionAttributeValues: { ':one': 1 } }));
    await this.ws('ws_default', wsEvent('$default', conn, { body: JSON.stringify({ id: 5, subscribe: { channel, recoverable: true, recover: true, epoch: stream.epoch } }) }));
    const recovered = this.framesOf(conn).find((f) => f.id === 5)?.subscribe as { recovered?: boolean; publications?: unknown[] } | undefined;
    if (!recovered?.recovered || recovered.publications?.length !== 1) throw new Error(`recovery: ${JSON.stringify(recovered)}`);
    const u = await this.ws('ws_default', wsEvent('$default', conn, { body: JSON.stringify({ id: 4, unsubscribe: { channel } }) }));
    if (!String(u.body).includes('"unsubscribe"')) throw new Error(`unsubscribe: ${String(u.body)}`);
    if (await this.item(`SUB#${channel}`, `CONN#${conn}`)) throw new Error('unsubscribe left the subscription');
    // A command flood: past the socket's budget (RATE_SOCKET_COMMANDS_PER_MINUTE, 30) the Disconnect push 3013,
    // then DeleteConnection, and the socket's records deleted.
    const flood = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: 10 + i, presence: {} })).join('\n');
    await this.ws('ws_default', wsEvent('$default', conn, { body: flood }));
    const cut = await this.ws('ws_default', wsEvent('$default', conn, { body: flood }));
    if (cut.body !== undefined) throw new Error(`a frame past the budget was answered: ${cut.body}`);
    if (!(this.hx.rec.frames.get(conn) ?? []).some((f) => f.includes('"code":3013'))) throw new Error('no Disconnect push 3013');
    if (await this.item(`CONN#${conn}`, 'CONN')) throw new Error('the flooding socket\'s connection was kept');
  }

  async ws_disconnect(): Promise<void> {
    const conn = await this.socket(true);
    const r = await this.ws('ws_disconnect', wsEvent('$disconnect', conn));
    if (r.statusCode !== 200) throw new Error(`$disconnect: ${r.statusCode}`);
    if (await this.item(`CONN#${conn}`, 'CONN')) throw new Error('$disconnect left the connection');
    if (await this.item(`SUB#${this.realtime().channel}`, `CONN#${conn}`)) throw new Error('$disconnect left the subscription');
  }

  async publisher(): Promise<void> {
    await this.hx.readStream();
    // Each run replays the same stream records: the channel's stream is made anew (by the subscribe below), or
    // every record would count as redelivered (positioned already) and go to no socket.
    const stream = keys.channelStream(this.realtime().channel);
    await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: stream }));
    const live = await this.socket(true);
    try {
      await this.publishTo(live);
    } finally {
      // Closed as API Gateway's $disconnect does: the user's channel keeps no socket of an earlier run, so each run
      // (the flow and every variant of it) posts to the sockets of its own.
      await this.ws('ws_disconnect', wsEvent('$disconnect', live));
    }
  }

  private async publishTo(live: string): Promise<void> {
    const gone = await this.socket(true);
    this.hx.rec.gone.add(gone);
    const event = this.hx.streamEvent(PUBLISHER);
    if (!event.Records.some((r) => r.eventName === 'MODIFY')) throw new Error('no read action in the stream');
    const out = await this.hx.invoke<BatchResult>(this.fn('publisher'), event);
    if (out.batchItemFailures.length) throw new Error(`publisher failed ${out.batchItemFailures.length} records`);
    const sent = this.need('photo');
    const frames = this.framesOf(live);
    const photo = frames.find((f) => f.push?.pub?.data?.data?.id === sent.message.id)?.push?.pub?.data?.data;
    if (!photo) throw new Error(`the photo message was not published (${frames.length} frames)`);
    if (!frames.some((f) => f.push?.pub?.data?.type === 'action')) throw new Error('the read action was not published');
    await this.download(firstFileUrl(photo), sent.bytes, 'published file url');
    // The gone socket: its connection and subscription removed.
    if (await this.item(`CONN#${gone}`, 'CONN')) throw new Error('a gone connection was kept');
    if (await this.item(`SUB#${this.realtime().channel}`, `CONN#${gone}`)) throw new Error('a gone subscription was kept');
    // A record that keeps failing (its files unreadable) goes to the redo queue; redone, it publishes.
    await this.redo('publisher', 'PublisherRedoQueue', ...brokenAndFixed(event.Records));
  }

  async webhook_dispatcher(): Promise<void> {
    // A direct upload whose bytes landed but never completed, its record then removed (as TTL does). Made
    // directly (the upload route's per-user rate would refuse the flow's repeats).
    const id = randomUUID();
    const botA = this.need('botA');
    const stale = { id, key: `bots/${botA.id}/users/${this.need('user').userId}/files/${id}` };
    await this.withAdminS3((s3) => s3.send(new PutObjectCommand({ Bucket: this.hx.stack.bucket, Key: stale.key, Body: PNG, ContentType: 'image/png' })));
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.file(stale.id), entity: 'file', id: stale.id, s3_key: stale.key, status: 'pending' } }));
    await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: keys.file(stale.id) }));
    // Bot A's retention changed (as the bot CLI's update does): its retention task is started.
    const days = 1 + Math.floor(Math.random() * 3650);
    await this.admin.send(
      new UpdateCommand({
        TableName: this.hx.stack.tableName,
        Key: keys.bot(botA.id),
        UpdateExpression: 'SET retention_days = :days, retention_set_at = :at, updated_at = :at',
        ExpressionAttributeValues: { ':days': days, ':at': new Date().toISOString() },
      }),
    );
    await this.hx.readStream();
    const event = this.hx.streamEvent(WEBHOOK_DISPATCHER);
    const inserts = event.Records.filter((r) => r.eventName === 'INSERT');
    const messages = inserts.filter((r) => r.dynamodb?.NewImage?.sender_type?.S === 'incoming').length;
    if (!messages) throw new Error('no user message for the dispatcher');
    if (messages === inserts.length) throw new Error('no bot reply (with reminders on) for the dispatcher');
    if (!event.Records.some((r) => r.eventName === 'REMOVE')) throw new Error('no removed file for the dispatcher');
    // Bot A marked slow (its receiver timed out lately): a user message's job goes to the slow lane's queue.
    const plain = event.Records.filter((r) => r.eventName === 'INSERT' && r.dynamodb?.NewImage?.sender_type?.S === 'incoming' && r.dynamodb.NewImage.bot_id?.S === botA.id && !r.dynamodb.NewImage.attaches);
    if (!plain.length) throw new Error("no user message of bot A without files for the slow lane");
    await this.withSlowMark(botA.id, async () => {
      const slow = await this.hx.invoke<BatchResult>(this.fn('webhook_dispatcher'), { Records: plain });
      const moved = await this.receive('webhooks_slow');
      if (slow.batchItemFailures.length) throw new Error('the dispatcher failed the slow lane\'s batch');
      if (!moved.length || moved.some((j) => this.jobOf(j).lane !== 'slow')) throw new Error(`${moved.length} jobs on the slow lane`);
    });
    const out = await this.hx.invoke<BatchResult>(this.fn('webhook_dispatcher'), event);
    // A record that keeps failing (its files unreadable) goes to the redo queue; redone, it queues its job.
    if (!out.batchItemFailures.length) await this.redo('webhook_dispatcher', 'WebhookDispatcherRedoQueue', ...brokenAndFixed(inserts));
    // Taken off the queue first, even from a failed batch: a job left there would reach the deliverer's flow.
    const jobs = await this.receive('webhooks');
    if (out.batchItemFailures.length) throw new Error('the dispatcher failed the batch');
    const reminders = jobs.filter((j) => this.jobOf(j).kind === 'reminder');
    if (jobs.length - reminders.length < messages) throw new Error(`${jobs.length - reminders.length} jobs queued for ${messages} messages`);
    if (reminders.length !== 1) throw new Error(`${reminders.length} reminders queued for the replies' burst`);
    this.ctx.jobs = jobs;
    await this.expectNoObject(stale.key, "a removed file's object was kept");
    const tasks = await Promise.all((await this.receive('tasks')).map((j) => this.item(keys.task(present(this.jobOf(j).task_id, 'a task job\'s task id')).pk, 'TASK')));
    if (!tasks.some((t) => t?.kind === 'retention' && t.bot_id === botA.id && t.retention_days === days)) throw new Error('no retention task queued');
  }

  /** Runs `during` with the bot marked slow (as a delivery's timeout leaves it), then removes the mark. */
  private async withSlowMark(botId: string, during: () => Promise<void>): Promise<void> {
    const until = Math.floor(Date.now() / 1000) + 600;
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.slowWebhooks(botId), entity: 'slow_webhooks', bot_id: botId, until, ttl: until } }));
    try {
      await during();
    } finally {
      await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: keys.slowWebhooks(botId) }));
    }
  }

  async webhook_deliverer(): Promise<void> {
    const arn = this.queueArn('WebhookQueue');
    // Jobs another flow left queued (a dispatcher refused halfway stops before it takes its jobs off) are taken off
    // first: each count below is of what this run queued.
    await Promise.all((['webhooks', 'webhooks_slow', 'webhooks_dlq'] as const).map((q) => this.receive(q)));
    // The photo message's job: its event carries presigned file URLs.
    const jobs = this.need('jobs');
    const sent = this.need('photo');
    const job = jobs.find((j) => this.jobOf(j).message?.id === sent.message.id);
    if (!job) throw new Error('no webhook job for the photo message');
    // Delivered: the receiver gets the signed event.
    const hooks = this.hx.webhooks;
    hooks.status = 200;
    const before = hooks.received.length;
    let out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
    if (out.batchItemFailures.length) throw new Error('the deliverer failed a job');
    const got = hooks.received.slice(before);
    if (got.length !== 1 || !got[0].headers['x-webhook-signature']) throw new Error(`the receiver got ${got.length} deliveries`);
    const files = JSON.stringify(JSON.parse(got[0].body)).match(/"url":"([^"]+)"/);
    if (!files) throw new Error(`no file URL in the webhook event: ${got[0].body.slice(0, 300)}`);
    await this.download(files[1], sent.bytes, 'webhook file url');
    // The replies' reminder, due: claimed, the chat's unread replies read, the signed event delivered.
    const reminder = present(jobs.find((j) => this.jobOf(j).kind === 'reminder'), 'the reminder job');
    // Due and not fired yet, as the dispatcher left it (each run of this flow fires it afresh).
    const due = this.jobOf(reminder);
    const marker = { ...keys.reminder(present(due.chat_id, "the reminder's chat")), entity: 'reminder', burst: due.burst, burst_at: due.burst_at, user_id: due.user_id, bot_id: due.bot_id };
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: marker }));
    const sentBefore = hooks.received.length;
    out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, [reminder]));
    if (out.batchItemFailures.length) throw new Error('the deliverer failed the reminder');
    const reminded = hooks.received.slice(sentBefore);
    if (reminded.length !== 1 || !String(reminded[0].headers['x-webhook-id']).startsWith('reminder:')) throw new Error(`the receiver got ${reminded.length} reminders`);
    // The receiver hanging: the delivery times out, marks the bot slow and queues its retry on the slow lane; then
    // a job of the bot still on the fast lane moves there without being posted.
    const botId = present(this.jobOf(job).bot_id, "the job's bot");
    hooks.status = 'hang';
    try {
      out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
      if (out.batchItemFailures.length) throw new Error('the deliverer failed a job that timed out');
      const [retry, ...more] = await this.receive('webhooks_slow');
      if (!retry || more.length || this.jobOf(retry).attempt !== 1) throw new Error('no retry on the slow lane after a timeout');
      if (!(await this.item(keys.slowWebhooks(botId).pk, keys.slowWebhooks(botId).sk))) throw new Error('the bot was not marked slow');
      const posted = hooks.received.length;
      out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
      const moved = await this.receive('webhooks_slow');
      if (out.batchItemFailures.length || moved.length !== 1 || hooks.received.length !== posted) throw new Error('the fast lane\'s job did not move to the slow lane');
    } finally {
      hooks.status = 200;
      await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: keys.slowWebhooks(botId) }));
    }
    // The receiver failing: queued again for the retry, then (the last retry failing) dead-lettered.
    hooks.status = 500;
    try {
      out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
      if (out.batchItemFailures.length) throw new Error('the deliverer failed a job it should requeue');
      const retries = await this.receive('webhooks');
      if (retries.length !== 1 || this.jobOf(retries[0]).attempt !== 1) throw new Error(`${retries.length} retries queued`);
      out = await this.hx.invoke<BatchResult>(this.fn('webhook_deliverer'), sqsEvent(arn, retries));
      if (out.batchItemFailures.length) throw new Error('the deliverer failed the last retry');
      const dead = await this.receive('webhooks_dlq');
      if (dead.length !== 1) throw new Error(`${dead.length} jobs dead-lettered`);
    } finally {
      hooks.status = 200;
    }
  }
}

/** The core functions' flows, in an order where each finds what it needs (user-flows.ts adds the rest). */
export const CORE_FLOW_ORDER = [
  'create_session',
  'create_chat',
  'list_chats',
  'upload_file',
  'create_upload',
  'upload_completer',
  'get_file',
  'create_message',
  'list_messages',
  'mark_read',
  'bot_list_chats',
  'bot_upload_file',
  'bot_create_upload',
  'bot_create_message',
  'bot_list_messages',
  'bot_edit_message',
  'answer_message',
  'bot_typing',
  'bot_mark_read',
  'not_found',
  'ws_connect',
  'ws_default',
  'ws_disconnect',
  'publisher',
  'webhook_dispatcher',
  'webhook_deliverer',
] as const;

/** A user message's record made unreadable (its files not a list), with a new id, beside the record as it was. */
function brokenAndFixed(records: DynamoDBRecord[]): [DynamoDBRecord, DynamoDBRecord] {
  const fixed = records.find((r) => r.eventName === 'INSERT' && r.dynamodb?.NewImage?.sender_type?.S === 'incoming');
  if (!fixed?.dynamodb?.NewImage) throw new Error('no user message to break');
  const broken = { ...fixed, eventID: randomUUID(), dynamodb: { ...fixed.dynamodb, NewImage: { ...fixed.dynamodb.NewImage, files: { S: 'not a list' }, attaches: { BOOL: true } } } };
  return [broken, fixed];
}

