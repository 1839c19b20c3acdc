// Phase 5: every figure against its target (its table: report.ts).
import { round } from './stats';

export const BUNDLE_TARGET_KB = 512;
/** The client package's own code, gzipped (its script-tag build without centrifuge). */
export const CLIENT_PACKAGE_TARGET_KB = 15;
/** Cold init: 200 ms for a function whose first request calls Secrets Manager or S3 (or presigns), else 150. */
export const coldTarget = (touches: string[]) => (touches.length ? 200 : 150);

export interface Target {
  /** null: nothing to measure (scale: no key shared by a bot's conversations). */
  value: number | null;
  target: string;
  met: boolean;
}

export function checkTargets(r: {
  round_trips: Record<string, number>;
  reminder: { dispatcher_invocations_per_reply_reminders_off: number };
  realtime_ms: { median: number; p99: number; fanout50_median: number };
  bundle_kb: Record<string, number>;
  client_package_gzip_kb: number;
  cold_init_ms: Record<string, number>;
  first_request_touches: Record<string, string[]>;
  cost: { usd_per_1m_exchanges: number; idle_socket_hour: { ratio: number } };
  scale: { max_exchanges_per_s_per_bot: number | null; max_sessions_per_s_per_bot: number | null };
}): Record<string, Target> {
  const t: Record<string, Target> = {};
  const check = (name: string, value: number, op: '=' | '<=', limit: number, shown = String(limit)) =>
    (t[name] = { value, target: `${op} ${shown}`, met: op === '=' ? value === limit : value <= limit });
  // A floor; null (no shared key, so no per-bot limit from DynamoDB) meets it.
  const atLeast = (name: string, value: number | null, limit: number) => (t[name] = { value, target: `>= ${limit}`, met: value === null || value >= limit });
  // Every client request also asks whether its user was erased (one GetItem): beside the read of a request that
  // only reads (list_chats, list_messages, get_file: no added wait), before the write of one that writes.
  for (const id of ['list_chats', 'create_chat', 'list_messages', 'mark_read', 'create_upload', 'get_file']) check(`round_trips.${id}`, r.round_trips[id], '=', 2);
  // The same check on the bot side before a write that could outlive an erasure, then the put.
  check('round_trips.bot_create_message', r.round_trips.bot_create_message, '=', 2);
  // A direct upload's completion: the file's record, then its settled status (and S3's copy to the sealed key,
  // the ranged GET of the copy, the upload key's delete).
  check('round_trips.upload_completer_per_upload', r.round_trips.upload_completer_per_upload, '=', 2);
  // A client send: the chat read (with the erasure check: one BatchGetItem), the rate counter (off in the
  // benchmark's stack), the put; no transaction.
  check('round_trips.create_message', r.round_trips.create_message, '<=', 3);
  // A visitor's answer: the chat read (with the erasure check), the message read, the conditional update.
  check('round_trips.answer_message', r.round_trips.answer_message, '=', 3);
  check('round_trips.create_session_returning', r.round_trips.create_session_returning, '<=', 2);
  check('round_trips.create_session_new', r.round_trips.create_session_new, '<=', 3);
  // The channel's sockets (and its stream position), the chat's activity and counter, then the position: the
  // history item and the offset.
  check('round_trips.publisher_per_message', r.round_trips.publisher_per_message, '=', 4);
  check('round_trips.webhook_dispatcher_per_message', r.round_trips.webhook_dispatcher_per_message, '=', 0);
  // A reply with reminders off costs nothing more: its record passes no filter of the dispatcher.
  check('reminder.dispatcher_invocations_per_reply_reminders_off', r.reminder.dispatcher_invocations_per_reply_reminders_off, '=', 0);
  const rt = r.realtime_ms;
  check('realtime_ms.median', rt.median, '<=', 60);
  check('realtime_ms.p99', rt.p99, '<=', 200);
  const fanLimit = round(2 * rt.median + 5);
  check('realtime_ms.fanout50_median', rt.fanout50_median, '<=', fanLimit, `2 × median + 5 = ${fanLimit}`);
  check('cost.usd_per_1m_exchanges', r.cost.usd_per_1m_exchanges, '<=', 14);
  // The page's keepalive: an idle socket-hour at most a third of what its reconnects at each idle timeout cost.
  check('cost.idle_socket_hour.ratio', r.cost.idle_socket_hour.ratio, '<=', round(1 / 3, 3), '1/3');
  // One bot's busiest day: no key its conversations share reaches DynamoDB's per-key limits first (scale.ts).
  atLeast('scale.max_exchanges_per_s_per_bot', r.scale.max_exchanges_per_s_per_bot, 5000);
  atLeast('scale.max_sessions_per_s_per_bot', r.scale.max_sessions_per_s_per_bot, 10000);
  check('client_package_gzip_kb', r.client_package_gzip_kb, '<=', CLIENT_PACKAGE_TARGET_KB);
  for (const [id, kb] of Object.entries(r.bundle_kb)) check(`bundle_kb.${id}`, kb, '<=', BUNDLE_TARGET_KB);
  for (const [id, ms] of Object.entries(r.cold_init_ms)) check(`cold_init_ms.${id}`, ms, '<=', coldTarget(r.first_request_touches[id]));
  return t;
}
