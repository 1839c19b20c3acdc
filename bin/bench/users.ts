// Phase 1, the Bot API's users: finding one, exporting and erasing one (the request and the task worker's whole
// run), a task's state. Measured like the other endpoints (round-trips.ts); the worker's run is per erased user of one chat
// with a few messages both ways and one file.
import { ROUTES } from '../../lib/routes';
import { TASK_WORKER } from '../../lib/consumers';
import type { installMeters } from './meters';
import { pollUntil, request, type Api, type LiveSession } from './http';

type Seen = Awaited<ReturnType<typeof installMeters>>['seen'];
/** One request's median DynamoDB round trips and units: as DynamoDB Local reports them, and as AWS bills reads and writes. */
export interface Measured {
  calls: number;
  capacity: number;
  reads: number;
  writes: number;
}
type Measure = (entry: string, act: (i: number) => Promise<unknown>) => Promise<Measured>;

/** What a user's erasure counts, recorded under each function's key. */
export async function userCosts(
  apiUrl: string,
  demo: { client_key: string; secret_key: string },
  measure: Measure,
  record: (key: string, m: Measured) => void,
  seen: Seen,
): Promise<void> {
  const entry = (id: string) => ROUTES.find((r) => r.id === id)!.entry;
  const bot = { token: demo.secret_key };
  let n = 0;
  /** A user with one chat, three messages each way and one file. */
  const user = async () => {
    const s = await request<LiveSession>(apiUrl, 'POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: `bench-erase-${n++}` } });
    const c = await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { token: s.session_token, json: { name: 'erase' } });
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.alloc(512, 1)], { type: 'image/png' }), 'e.png');
    const file = await request<Api['UploadedFile']>(apiUrl, 'POST', '/api/client/files', { token: s.session_token, form: fd });
    await request(apiUrl, 'POST', `/api/client/chats/${c.id}/messages`, { token: s.session_token, json: { content: '', content_type: 'photo', files: [file.id] } });
    for (let i = 0; i < 2; i++) await request(apiUrl, 'POST', `/api/client/chats/${c.id}/messages`, { token: s.session_token, json: { content: `m${i}` } });
    for (let i = 0; i < 3; i++) await request(apiUrl, 'POST', `/api/bot/chats/${c.id}/messages`, { ...bot, json: { content: `r${i}` } });
    return s.user;
  };
  const found = await user();
  record('bot_find_user', await measure(entry('bot_find_user'), () => request(apiUrl, 'GET', `/api/bot/users?external_id=${found.external_id}`, bot)));
  record('bot_get_user', await measure(entry('bot_get_user'), () => request(apiUrl, 'GET', `/api/bot/users/${found.id}`, bot)));
  let task = '';
  record('bot_delete_user', await measure(entry('bot_delete_user'), async () => {
    const u = await user();
    seen.length = 0;
    task = (await request<Api['Task']>(apiUrl, 'DELETE', `/api/bot/users/${u.id}`, bot)).task_id;
  }));
  record('bot_get_task', await measure(entry('bot_get_task'), () => request(apiUrl, 'GET', `/api/bot/tasks/${task}`, bot)));
  record('bot_export_user', await measure(entry('bot_export_user'), () => request(apiUrl, 'POST', `/api/bot/users/${found.id}/export`, bot)));
  // The worker's export of that user (one chat, six messages, one file), written to S3.
  record('task_worker_per_export', await measure(TASK_WORKER.entry, async () => {
    await request(apiUrl, 'POST', `/api/bot/users/${found.id}/export`, bot);
    seen.length = 0;
    await pollUntil(() => seen.some((x) => x.entry === TASK_WORKER.entry), 400);
  }));
  record('task_worker_per_erase', await measure(TASK_WORKER.entry, async () => {
    const u = await user();
    await request(apiUrl, 'DELETE', `/api/bot/users/${u.id}`, bot);
    seen.length = 0;
    await pollUntil(() => seen.some((x) => x.entry === TASK_WORKER.entry), 400);
  }));
}
