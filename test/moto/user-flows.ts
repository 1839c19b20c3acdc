// The flows of the Bot API's users (find, erase, a task's state) and of the task worker (retention, export, erasure,
// the data move): each makes its own user (a chat, a photo message, an open socket), so it runs again on its own
// with a changed policy.
import { randomUUID } from 'node:crypto';
import { CoreFlows, CORE_FLOW_ORDER } from './flows';
import { PNG, type BatchResult } from './flow-base';
import { present, type Chat, type FileInfo, type Schemas, type User } from '../support/contract';
import type { Message as QueuedMessage } from '@aws-sdk/client-sqs';
import { json, multipart, sqsEvent, wsEvent } from './events';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys, LAYOUT_VERSION } from '../../lambdas/entities/keys';
import type { TaskRecord } from '../../lambdas/entities/tasks';

/** A line of an export's file, as far as the flow reads it (a file line carries the file). */
interface ExportLine {
  type: string;
  file?: { url: string };
}

/** Lambda's context as the task worker reads it: the time left before its timeout. */
const contextWith = (ms: number) => ({ awsRequestId: randomUUID(), getRemainingTimeInMillis: () => ms });

export class Flows extends CoreFlows {
  /** A user of bot A with a chat, a photo message, a reply and a socket; erased by the flows below. */
  private async userToErase(): Promise<{ id: string; externalId: string; chatId: string; fileKey: string }> {
    const externalId = `moto-erase-${randomUUID()}`;
    const s = await this.session(externalId);
    const headers = this.auth(s.token);
    const chat = this.expectStatus<Chat>(await this.http('create_chat', { ...json({ name: 'erase me' }), headers }), 201, 'create chat');
    const file = this.expectStatus<FileInfo>(await this.http('upload_file', { ...multipart('p.png', 'image/png', PNG), headers }), 201, 'upload');
    const photo = { content: '', content_type: 'photo', files: [file.id] };
    this.expectStatus(await this.http('create_message', { ...json(photo), headers, params: { chat_id: chat.id } }), 201, 'send');
    const open = await this.ws('ws_connect', wsEvent('$connect', randomUUID(), { query: { token: this.realtime(s).token } }));
    if (open.statusCode !== 200) throw new Error(`$connect: ${open.statusCode}`);
    return { id: s.userId, externalId, chatId: chat.id, fileKey: new URL(present(file.url, "the upload's url")).pathname.split('/').slice(2).join('/') };
  }

  async bot_find_user(): Promise<void> {
    const ext = `moto-find-${randomUUID()}`;
    const s = await this.session(ext);
    const found = this.expectStatus<User>(await this.http('bot_find_user', { headers: this.botAuth, query: { external_id: ext } }), 200, 'find user');
    if (found.id !== s.userId) throw new Error('found another user');
    this.expectStatus(await this.http('bot_find_user', { headers: this.botAuth, query: { external_id: `nobody-${randomUUID()}` } }), 404, 'unknown user');
  }

  async bot_get_user(): Promise<void> {
    const s = await this.session(`moto-get-${randomUUID()}`);
    const user = this.expectStatus<User>(await this.http('bot_get_user', { headers: this.botAuth, params: { user_id: s.userId } }), 200, 'get user');
    if (user.id !== s.userId || user.status !== 'active') throw new Error(`got ${JSON.stringify(user)}`);
  }

  /** DELETE: the tokens revoked, the socket closed (a push, then DeleteConnection), the job queued. */
  async bot_delete_user(): Promise<void> {
    const u = await this.userToErase();
    const task = this.expectStatus<Schemas['Task']>(await this.http('bot_delete_user', { headers: this.botAuth, params: { user_id: u.id } }), 202, 'erase');
    if (task.status !== 'pending') throw new Error(`task ${JSON.stringify(task)}`);
    const jobs = await this.receive('tasks');
    if (!jobs.some((j) => this.jobOf(j).task_id === task.task_id)) throw new Error('no erase job queued');
    this.ctx.eraseTask = task.task_id;
  }

  /** The queued job of this task (a flow refused halfway may have left another task's job behind). */
  private async taskJob(taskId: string): Promise<QueuedMessage> {
    const job = (await this.receive('tasks')).find((j) => this.jobOf(j).task_id === taskId);
    if (!job) throw new Error(`no job queued for task ${taskId}`);
    return job;
  }

  async bot_export_user(): Promise<void> {
    const u = await this.userToErase();
    const task = this.expectStatus<Schemas['Task']>(await this.http('bot_export_user', { headers: this.botAuth, params: { user_id: u.id } }), 202, 'export');
    const jobs = await this.receive('tasks');
    if (!jobs.some((j) => this.jobOf(j).task_id === task.task_id)) throw new Error('no export job queued');
  }

  /** An export run by the worker (its full policy), then read as the task: its download URL serves the file. */
  private async exported(user?: { id: string }): Promise<{ task: Schemas['Task']; lines: ExportLine[] }> {
    const u = user ?? (await this.userToErase());
    const started = this.expectStatus<Schemas['Task']>(await this.http('bot_export_user', { headers: this.botAuth, params: { user_id: u.id } }), 202, 'export');
    const job = await this.taskJob(started.task_id);
    const out = await this.hx.invoke<BatchResult>(this.fn('task_worker'), sqsEvent(this.queueArn('TaskQueue'), [job]), contextWith(200_000));
    if (out.batchItemFailures.length) throw new Error('the worker failed the export');
    const id = present(this.jobOf(job).task_id, "the export job's task id");
    const task = this.expectStatus<Schemas['Task']>(await this.http('bot_get_task', { headers: this.botAuth, params: { task_id: id } }), 200, 'task');
    if (task.status !== 'completed' || !task.download_url) throw new Error(`export task ${JSON.stringify(task)}`);
    const res = await fetch(task.download_url);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the export's download URL answered ${res.status} ${text.slice(0, 300)}`);
    return { task, lines: text.trim().split('\n').map((l) => JSON.parse(l) as ExportLine) };
  }

  async bot_get_task(): Promise<void> {
    const task = this.expectStatus<Schemas['Task']>(await this.http('bot_get_task', { headers: this.botAuth, params: { task_id: this.need('eraseTask') } }), 200, 'task');
    if (task.kind !== 'erase') throw new Error(`task ${JSON.stringify(task)}`);
    await this.exported();
  }

  /** A task put as it is started, its job run by the worker (its full policy, unless changed) to the task's completion. */
  private async runTask(fields: Pick<TaskRecord, 'kind' | 'bot_id' | 'created_at' | 'retention_days'>): Promise<void> {
    const taskId = randomUUID();
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.task(taskId), entity: 'task', task_id: taskId, status: 'pending', ...fields } }));
    const job = { MessageId: randomUUID(), ReceiptHandle: randomUUID(), Body: JSON.stringify({ task_id: taskId }) };
    const out = await this.hx.invoke<BatchResult>(this.fn('task_worker'), sqsEvent(this.queueArn('TaskQueue'), [job]), contextWith(200_000));
    if (out.batchItemFailures.length) throw new Error(`the worker failed the ${fields.kind} task`);
    const task = await this.item(keys.task(taskId).pk, 'TASK');
    if (task?.status !== 'completed') throw new Error(`${fields.kind} task ${JSON.stringify(task)}`);
  }

  /** The data move (a `migrate` task) on a table not yet moved: the worker scans it, moves a user still at its
   * legacy key, and writes the layout marker. */
  private async migration(): Promise<void> {
    await this.withoutLayoutMarker(async () => {
      const legacy = await this.legacyUser();
      await this.runTask({ kind: 'migrate', bot_id: '', created_at: new Date().toISOString() });
      await this.expectMoved(legacy, 'the data move');
      const marker = await this.item(keys.layout().pk, keys.layout().sk);
      if (marker?.version !== LAYOUT_VERSION) throw new Error(`the data move left the layout marker ${JSON.stringify(marker)}`);
    });
  }

  /** A retention task for bot A's setting run by the worker: the flow's photo message and its file then expire. */
  private async retention(): Promise<void> {
    const table = this.hx.stack.tableName;
    const botA = this.need('botA');
    const bot = await this.admin.send(
      new UpdateCommand({ TableName: table, Key: keys.bot(botA.id), UpdateExpression: 'SET retention_days = :d', ExpressionAttributeValues: { ':d': 3650 }, ReturnValues: 'ALL_NEW' }),
    );
    await this.runTask({ kind: 'retention', bot_id: botA.id, retention_days: 3650, created_at: present(bot.Attributes?.updated_at as string | undefined, "bot A's updated_at") });
    const photo = this.need('photo').message;
    const message = await this.admin.send(new GetCommand({ TableName: table, Key: keys.message(this.need('user').userId, photo.chat_id, photo.id) }));
    const file = await this.item(keys.file(present(present(photo.files, "the photo message's files")[0]?.id, 'its file id')).pk, 'FILE');
    if (typeof message.Item?.ttl !== 'number' || typeof file?.ttl !== 'number') throw new Error('the retention task dated neither the message nor its file');
  }

  /** The worker: an export (its files' URLs, signed by the worker, serving their bytes); then the same user's erasure,
   * cut short after the files (it queues the rest), then run again to the end; the data move; last, bot A's retention
   * applied to what it stored (its chats from gsi2 and gsi1, their messages, its files). The retention last: it walks
   * every chat of bot A (the whole run's), and a variant refused before it stops there (Harness.stopOnceRefused). */
  async task_worker(): Promise<void> {
    const u = await this.userToErase();
    const { lines } = await this.exported(u);
    const file = lines.find((l) => l.type === 'file')?.file;
    if (!file) throw new Error(`no file in the export: ${JSON.stringify(lines).slice(0, 300)}`);
    const res = await fetch(file.url);
    if (res.status !== 200) throw new Error(`an exported file's URL answered ${res.status}`);
    const erase = this.expectStatus<Schemas['Task']>(await this.http('bot_delete_user', { headers: this.botAuth, params: { user_id: u.id } }), 202, 'erase');
    // A socket that opened in the moment before the DELETE answered: the worker closes it too.
    const late = randomUUID();
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.connectionRef(u.id, late), entity: 'connection_ref', connection_id: late } }));
    const arn = this.queueArn('TaskQueue');
    const job = await this.taskJob(erase.task_id);
    let out = await this.hx.invoke<BatchResult>(this.fn('task_worker'), sqsEvent(arn, [job]), contextWith(1000));
    if (out.batchItemFailures.length) throw new Error('the worker failed its first run');
    await this.expectNoObject(u.fileKey, "an erased user's file was kept");
    const rest = await this.taskJob(erase.task_id);
    out = await this.hx.invoke<BatchResult>(this.fn('task_worker'), sqsEvent(arn, [rest]), contextWith(200_000));
    if (out.batchItemFailures.length) throw new Error('the worker failed its second run');
    for (const [pk, sk] of [keys.chatPointer(u.chatId), keys.userRef(u.id), keys.user(this.need('botA').id, u.externalId), keys.connectionRef(u.id, late)].map((k) => [k.pk, k.sk])) {
      if (await this.item(pk, sk)) throw new Error(`${pk} ${sk} was kept`);
    }
    const task = await this.item(keys.task(erase.task_id).pk, 'TASK');
    if (task?.status !== 'completed' || task.user_id) throw new Error(`task ${JSON.stringify(task)}`);
    await this.migration();
    await this.retention();
  }
}

/** Every function's flow, in an order where each finds what it needs (run for the functions routes.ts has). */
export const FLOW_ORDER = [...CORE_FLOW_ORDER, 'bot_find_user', 'bot_get_user', 'bot_delete_user', 'bot_export_user', 'bot_get_task', 'task_worker'] as const;
