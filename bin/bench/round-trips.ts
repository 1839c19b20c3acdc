// Phase 1: DynamoDB round trips and consumed capacity per invocation of every function.
// Counted by meters.ts; the phase also keeps the first event each function got (replayed for its cold start).
import WebSocket from 'ws';
import { installMeters } from './meters';
import { NOT_FOUND, ROUTES, WS_ROUTES } from '../../lib/routes';
import { PUBLISHER, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { options } from './options';
import { median, round } from './stats';
import { pollUntil, request, type Api, type LiveSession } from './http';
import { userCosts, type Measured } from './users';

/** Per endpoint (or per message / job for the stream consumers): median round trips and capacity units. */
export interface RoundTripFigures {
  round_trips: Record<string, number>;
  /** As DynamoDB Local reports them (reads and writes together). */
  capacity_units: Record<string, number>;
  /** The same split as AWS bills them (meters.ts: with the corrections where DynamoDB Local differs). */
  read_units: Record<string, number>;
  write_units: Record<string, number>;
  /** What an unread reminder costs where it happens (AWS units), and a reply with reminders off. */
  reminder: {
    dispatcher_per_burst: CallUnits;
    deliverer_per_reminder: CallUnits;
    /** Dispatcher invocations for a reply of a bot with a webhook and reminders off (the stream filter's doing). */
    dispatcher_invocations_per_reply_reminders_off: number;
  };
}

/** One invocation's DynamoDB round trips and billed units, and its SQS requests. */
export interface CallUnits {
  round_trips: number;
  read_units: number;
  write_units: number;
  sqs_requests: number;
}

/** Phase 1. `firstEvents`: per function entry, the first event it got (cold init replays it). */
export async function roundTrips(
  apiUrl: string,
  demo: { client_key: string; secret_key: string },
  webhookUrl: string,
): Promise<{ figures: RoundTripFigures; firstEvents: Map<string, unknown> }> {
  const firstEvents = new Map<string, unknown>();
  const { seen, uninstall } = await installMeters(firstEvents);
  const runs = options.quick ? 3 : 7;
  const http = <T = unknown,>(method: string, path: string, opts: { token?: string; json?: unknown; form?: FormData; bot?: boolean } = {}) =>
    request<T>(apiUrl, method, path, { ...opts, token: opts.bot ? demo.secret_key : opts.token });
  /** Runs `act` (once to warm up, then `runs` times) and returns the median calls and capacity of `entry`. */
  const measure = async (entry: string, act: (i: number) => Promise<unknown>) => {
    await act(-1);
    const calls: number[] = [];
    const capacity: number[] = [];
    const reads: number[] = [];
    const writes: number[] = [];
    for (let i = 0; i < runs; i++) {
      seen.length = 0;
      await act(i);
      await new Promise((r) => setTimeout(r, 5));
      const inv = seen.find((s) => s.entry === entry);
      if (!inv) throw new Error(`${entry} was not invoked`);
      calls.push(inv.counters.calls ?? 0);
      capacity.push(inv.counters.capacity ?? 0);
      reads.push(inv.counters.read_units ?? 0);
      writes.push(inv.counters.write_units ?? 0);
    }
    return { calls: median(calls), capacity: round(median(capacity), 2), reads: round(median(reads), 2), writes: round(median(writes), 2) };
  };
  const entry = (id: string) => [...ROUTES, ...WS_ROUTES].find((r) => r.id === id)!.entry;
  const trips: Record<string, number> = {};
  const units: Record<string, number> = {};
  const [readUnits, writeUnits]: Record<string, number>[] = [{}, {}];
  const record = (key: string, m: Measured) => {
    trips[key] = m.calls;
    units[key] = m.capacity;
    readUnits[key] = m.reads;
    writeUnits[key] = m.writes;
  };

  let n = 0;
  record('create_session_new', await measure(entry('create_session'), () => http('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: `bench-${n++}` } })));
  record('create_session_returning', await measure(entry('create_session'), () => http('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: 'bench-returning' } })));
  const s = await http<LiveSession>('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: 'bench-user' } });
  const token = s.session_token;
  const chat = await http<Api['Chat']>('POST', '/api/client/chats', { token, json: { name: 'bench' } });
  record('list_chats', await measure(entry('list_chats'), () => http('GET', '/api/client/chats', { token })));
  record('create_chat', await measure(entry('create_chat'), () => http('POST', '/api/client/chats', { token, json: { name: 'more' } })));
  record('create_message', await measure(entry('create_message'), () => http('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'hello' } })));
  record('list_messages', await measure(entry('list_messages'), () => http('GET', `/api/client/chats/${chat.id}/messages`, { token })));
  record('mark_read', await measure(entry('mark_read'), () => http('POST', `/api/client/chats/${chat.id}/read`, { token })));
  const form = () => {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.alloc(1024, 1)], { type: 'image/png' }), 'b.png');
    return fd;
  };
  record('upload_file', await measure(entry('upload_file'), () => http('POST', '/api/client/files', { token, form: form() })));
  record('bot_list_chats', await measure(entry('bot_list_chats'), () => http('GET', '/api/bot/chats?limit=20', { bot: true })));
  record('bot_list_messages', await measure(entry('bot_list_messages'), () => http('GET', `/api/bot/chats/${chat.id}/messages`, { bot: true })));
  record('bot_create_message', await measure(entry('bot_create_message'), () => http('POST', `/api/bot/chats/${chat.id}/messages`, { bot: true, json: { content: 'hi' } })));
  record('bot_mark_read', await measure(entry('bot_mark_read'), () => http('POST', `/api/bot/chats/${chat.id}/read`, { bot: true })));
  // A streamed answer: the typing indicator (calls within 2 s of the last publication are refused writes),
  // then edits of one message.
  record('bot_typing', await measure(entry('bot_typing'), () => http('POST', `/api/bot/chats/${chat.id}/typing`, { bot: true, json: {} })));
  const streamed = await http<Api['Message']>('POST', `/api/bot/chats/${chat.id}/messages`, { bot: true, json: { content: 'Once' } });
  let edits = 0;
  record('bot_edit_message', await measure(entry('bot_edit_message'), () =>
    http('PATCH', `/api/bot/chats/${chat.id}/messages/${streamed.id}`, { bot: true, json: { content: `Once upon a time ${edits++}` } }),
  ));
  // The visitor answers a bot's quick replies (each run a new question: an answered one takes no second answer).
  record('answer_message', await measure(entry('answer_message'), async () => {
    const asked = await http<Api['Message']>('POST', `/api/bot/chats/${chat.id}/messages`, { bot: true, json: { content: 'Which?', content_type: 'input_select', content_attributes: { items: [{ title: 'This one', value: 'this' }] } } });
    return http('POST', `/api/client/chats/${chat.id}/messages/${asked.id}/response`, { token, json: { value: 'this' } });
  }));
  // An unknown path: the default route's 404 { error} (no DynamoDB at all).
  record('not_found', await measure(NOT_FOUND.entry, () => fetch(`${apiUrl}/api/client/nope`).then((r) => r.text())));
  record('bot_upload_file', await measure(entry('bot_upload_file'), () => {
    const fd = form();
    fd.append('chat_id', chat.id);
    return http('POST', '/api/bot/files', { bot: true, form: fd });
  }));
  // Direct uploads: the ticket (client and bot), the browser's POST to S3 that runs the completer, the file's status.
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2048, 1)]);
  const declared = { name: 'b.png', size: png.length, mime_type: 'image/png' };
  record('create_upload', await measure(entry('create_upload'), () => http('POST', '/api/client/files/uploads', { token, json: declared })));
  record('bot_create_upload', await measure(entry('bot_create_upload'), () => http('POST', '/api/bot/files/uploads', { bot: true, json: { ...declared, chat_id: chat.id } })));
  let uploaded = '';
  record('upload_completer_per_upload', await measure(UPLOAD_COMPLETER.entry, async () => {
    const ticket = await http<Api['UploadTicket']>('POST', '/api/client/files/uploads', { token, json: declared });
    const fd = new FormData();
    for (const [k, v] of Object.entries(ticket.upload.fields)) fd.append(k, v);
    fd.append('file', new Blob([png], { type: 'image/png' }), 'b.png');
    seen.length = 0;
    const res = await fetch(ticket.upload.url, { method: 'POST', body: fd });
    if (!res.ok) throw new Error(`the upload POST was refused: ${res.status} ${await res.text()}`);
    await pollUntil(() => seen.some((x) => x.entry === UPLOAD_COMPLETER.entry));
    uploaded = ticket.file.id;
  }));
  record('get_file', await measure(entry('get_file'), () => http('GET', `/api/client/files/${uploaded}`, { token })));

  // Realtime: $connect (no token in the URL), then $default with connect + subscribe in one frame, recoverable
  // as the client package subscribes (its channel then has a stream: each publication is positioned).
  const rt = s.realtime;
  const sockets: WebSocket[] = [];
  record('ws_connect', await measure(entry('ws_connect'), async () => {
    const ws = new WebSocket(rt.url);
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
  }));
  record('ws_default', await measure(entry('ws_default'), async (i) => {
    const ws = sockets[i + 1];
    const reply = new Promise((r) => ws.once('message', r));
    ws.send(`${JSON.stringify({ id: 1, connect: { token: rt.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: rt.channel, recoverable: true } })}`);
    await reply;
    // The reply comes before the frame's invocation ends (the subscribe hands over to live publications after it).
    await pollUntil(() => seen.some((x) => x.entry === entry('ws_default')));
  }));
  /** Waits until `e` has been invoked since `seen` was last cleared. */
  const waitFor = (e: string, tries?: number) => pollUntil(() => seen.some((x) => x.entry === e), tries);
  // The publisher, per message (the sockets above are subscribers of this channel).
  const published = await measure(PUBLISHER.entry, async () => {
    seen.length = 0;
    await http('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'fan-out' } });
    await waitFor(PUBLISHER.entry, 200);
  });
  record('publisher_per_message', published);
  for (const ws of sockets) ws.close();

  // Webhooks, on a bot of their own (its settings are cached from its first request, as on Lambda): the
  // stream dispatcher per user message, and the deliverer per job (a local receiver answers 200).
  const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
  const hooked = await createBot({ name: 'bench webhooks' });
  await updateBot(hooked.bot.id, { webhook_url: webhookUrl });
  const hs = await http<LiveSession>('POST', '/api/client/session', { json: { client_key: hooked.bot.client_key, external_id: 'bench-webhooks' } });
  const hchat = await http<Api['Chat']>('POST', '/api/client/chats', { token: hs.session_token, json: { name: 'hooks' } });
  const sendHooked = async (e: string) => {
    seen.length = 0;
    await http('POST', `/api/client/chats/${hchat.id}/messages`, { token: hs.session_token, json: { content: 'hook' } });
    await waitFor(e);
  };
  record('webhook_dispatcher_per_message', await measure(WEBHOOK_DISPATCHER.entry, () => sendHooked(WEBHOOK_DISPATCHER.entry)));
  record('webhook_deliverer_per_job', await measure(WEBHOOK_DELIVERER.entry, () => sendHooked(WEBHOOK_DELIVERER.entry)));
  const reminder = await reminderCosts(apiUrl, webhookUrl, seen, waitFor);
  await userCosts(apiUrl, demo, measure, record, seen);
  // $disconnect's event, for its cold start (the sockets closed above).
  await pollUntil(() => firstEvents.has(entry('ws_disconnect')));
  uninstall();
  return { figures: { round_trips: trips, capacity_units: units, read_units: readUnits, write_units: writeUnits, reminder }, firstEvents };
}

type Seen = Awaited<ReturnType<typeof installMeters>>['seen'];

/**
 * Unread reminders, on bots of their own: per burst the dispatcher's scheduling (a user read, then a reply
 * starts a burst), per reminder the deliverer's firing (1 s later), and a reply of a bot with reminders off.
 */
async function reminderCosts(apiUrl: string, webhookUrl: string, seen: Seen, waitFor: (e: string, tries?: number) => Promise<void>): Promise<RoundTripFigures['reminder']> {
  const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
  const chatOf = async (reminderSeconds: number | null) => {
    const b = await createBot({ name: 'bench reminders' });
    await updateBot(b.bot.id, { webhook_url: webhookUrl, unread_reminder_seconds: reminderSeconds });
    const s = await request<LiveSession>(apiUrl, 'POST', '/api/client/session', { json: { client_key: b.bot.client_key, external_id: `bench-reminders-${reminderSeconds}` } });
    const c = await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { token: s.session_token, json: { name: 'reminders' } });
    return {
      read: () => request(apiUrl, 'POST', `/api/client/chats/${c.id}/read`, { token: s.session_token }),
      reply: () => request(apiUrl, 'POST', `/api/bot/chats/${c.id}/messages`, { token: b.secretKey, json: { content: 'are you still there?' } }),
    };
  };
  const unitsOf = (entry: string): CallUnits => {
    const c = seen.find((x) => x.entry === entry)!.counters;
    return { round_trips: c.calls ?? 0, read_units: c.read_units ?? 0, write_units: (c.write_units ?? 0) + (c.refused_writes ?? 0), sqs_requests: c.sqs ?? 0 };
  };
  const on = await chatOf(1);
  const samples: { dispatcher: CallUnits; deliverer: CallUnits }[] = [];
  for (let i = 0; i < (options.quick ? 1 : 3); i++) {
    await on.read();
    seen.length = 0;
    await on.reply();
    await waitFor(WEBHOOK_DISPATCHER.entry);
    const dispatcher = unitsOf(WEBHOOK_DISPATCHER.entry);
    await waitFor(WEBHOOK_DELIVERER.entry, 400);
    samples.push({ dispatcher, deliverer: unitsOf(WEBHOOK_DELIVERER.entry) });
  }
  const medianOf = (pick: (x: (typeof samples)[number]) => CallUnits): CallUnits => {
    const keys = ['round_trips', 'read_units', 'write_units', 'sqs_requests'] as const;
    return Object.fromEntries(keys.map((k) => [k, round(median(samples.map((x) => pick(x)[k])), 2)])) as unknown as CallUnits;
  };
  const off = await chatOf(null);
  seen.length = 0;
  await off.reply();
  await new Promise((r) => setTimeout(r, 500)); // the stream poller's pace: a marked reply would have been dispatched by now
  return {
    dispatcher_per_burst: medianOf((x) => x.dispatcher),
    deliverer_per_reminder: medianOf((x) => x.deliverer),
    dispatcher_invocations_per_reply_reminders_off: seen.filter((x) => x.entry === WEBHOOK_DISPATCHER.entry).length,
  };
}
