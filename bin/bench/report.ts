// The benchmark's tables on stdout, one per phase as it ends (none with --json: main prints the JSON object).
// Each is drawn from the figures its phase returned.
import { options } from './options';
import { BUNDLE_TARGET_KB, CLIENT_PACKAGE_TARGET_KB, coldTarget, type Target } from './targets';
import type { RoundTripFigures } from './round-trips';
import type { RealtimeFigures } from './realtime';
import type { ThroughputFigures } from './throughput';
import type { ColdInitFigures } from './cold-init';
import type { CostFigures } from './cost';
import type { ScaleFigures } from './scale';
import { UNIT_KEYS } from './cost-model';

/** A line of the tables (stdout); with --json only the JSON is printed. */
export const out = (line: string): void => {
  if (!options.json) console.log(line);
};

export function reportRoundTrips({ round_trips: trips, capacity_units: units, read_units: reads, write_units: writes, reminder }: RoundTripFigures): void {
  out('\nDynamoDB round trips (HTTP requests, SDK retries included) and consumed capacity per request (median, bot settings cached): as Local reports it, and as AWS bills it');
  out(`${'endpoint'.padEnd(32)}${'round trips'.padStart(12)}${'capacity'.padStart(10)}${'read units'.padStart(11)}${'write units'.padStart(12)}`);
  for (const k of Object.keys(trips)) out(`${k.padEnd(32)}${String(trips[k]).padStart(12)}${String(units[k]).padStart(10)}${String(reads[k]).padStart(11)}${String(writes[k]).padStart(12)}`);
  out('\nUnread reminders (AWS units, median)');
  out(`${'step'.padEnd(32)}${'round trips'.padStart(12)}${'read units'.padStart(11)}${'write units'.padStart(12)}${'SQS'.padStart(5)}`);
  for (const [k, u] of [['dispatcher, per burst', reminder.dispatcher_per_burst], ['deliverer, per reminder', reminder.deliverer_per_reminder]] as const) {
    out(`${k.padEnd(32)}${String(u.round_trips).padStart(12)}${String(u.read_units).padStart(11)}${String(u.write_units).padStart(12)}${String(u.sqs_requests).padStart(5)}`);
  }
  out(`a reply with reminders off: ${reminder.dispatcher_invocations_per_reply_reminders_off} dispatcher invocations`);
}

export function reportScale(s: ScaleFigures): void {
  out(`\nScale: one bot, ${s.conversations} conversations; the hottest key value they share, units per exchange or session on it (most on one value)`);
  out(`${'window'.padEnd(20)}${'index'.padEnd(7)}${'writes on'.padEnd(24)}${'WCU'.padStart(8)}${'(most)'.padStart(8)}  ${'reads on'.padEnd(24)}${'RCU'.padStart(8)}${'(most)'.padStart(8)}`);
  const cell = (k: { key: string; units: number; max_units: number } | null) => (k ? `${k.key.padEnd(24)}${String(k.units).padStart(8)}${String(k.max_units).padStart(8)}` : `${'-'.padEnd(24)}${''.padStart(16)}`);
  for (const [name, w] of [['exchange', s.per_exchange], ['session, new', s.per_session_new], ['session, returning', s.per_session_returning], ['typing', s.per_typing]] as const) {
    for (const [target, k] of Object.entries(w.keys)) out(`${name.padEnd(20)}${target.padEnd(7)}${cell(k.write)}  ${cell(k.read)}`);
  }
  out(`max exchanges/s per bot: ${s.max_exchanges_per_s_per_bot ?? 'no shared key'} (${s.exchanges_limited_by}); max sessions/s per bot: ${s.max_sessions_per_s_per_bot ?? 'no shared key'} (${s.sessions_limited_by}); max typing events/s per bot: ${s.max_typing_per_s_per_bot ?? 'no shared key'}`);
}

export function reportCost(c: CostFigures): void {
  out(`\nCost on AWS (${c.prices.region}, ${c.prices.architecture}, list prices of ${c.prices.as_of}): ${c.exchanges} exchanges in ${c.conversations} conversations`);
  out(`${'unit'.padEnd(26)}${'per exchange'.padStart(14)}${'USD per 1M'.padStart(12)}${'per conversation'.padStart(18)}`);
  for (const k of UNIT_KEYS) {
    out(`${k.padEnd(26)}${String(c.exchange_units[k]).padStart(14)}${c.usd_per_1m_exchanges_by_unit[k].toFixed(2).padStart(12)}${String(c.overhead_units[k]).padStart(18)}`);
  }
  out(`${'websocket_connection_minutes'.padEnd(52)}${String(c.overhead_units.websocket_connection_minutes).padStart(18)}`);
  out(`USD per million exchanges: ${c.usd_per_1m_exchanges}; per million conversations, their overhead: ${c.usd_per_1m_conversations_overhead}`);
  out(`${'per exchange, by function'.padEnd(26)}${'invocations'.padStart(12)}${'billed ms'.padStart(11)}${'GB-s'.padStart(10)}${'write units'.padStart(13)}${'read units'.padStart(12)}${'CPU ms'.padStart(8)}`);
  for (const [id, f] of Object.entries(c.exchange_functions)) {
    out(`${id.padEnd(26)}${String(f.invocations).padStart(12)}${String(f.billed_ms).padStart(11)}${String(f.gb_seconds).padStart(10)}${String(f.dynamodb_write_units).padStart(13)}${String(f.dynamodb_read_units).padStart(12)}${f.cpu_ms.toFixed(1).padStart(8)}`);
  }
  const i = c.idle_socket_hour;
  out(
    `An idle socket-hour: ${i.reconnects_per_hour} reconnects (${i.reconnect_units.lambda_invocations} invocations, ${i.reconnect_units.websocket_messages} messages, ${i.reconnect_units.dynamodb_write_units + i.reconnect_units.dynamodb_read_units} DynamoDB units each)` +
      ` $${(i.without_keepalive_usd * 1e6).toFixed(2)} per million; with ${i.keepalives_per_hour} keepalives (${i.keepalive_units.lambda_invocations} invocation, ${i.keepalive_units.websocket_messages} message, ${i.keepalive_units.dynamodb_write_units + i.keepalive_units.dynamodb_read_units} DynamoDB units each)` +
      ` $${(i.with_keepalive_usd * 1e6).toFixed(2)} per million: ratio ${i.ratio}`,
  );
  const [p, r] = [c.position, c.recoverable];
  out(
    `Subscribed recoverable (the client package, ${r.exchanges} exchanges): $${r.usd_per_1m_exchanges} per million exchanges, $${r.usd_per_1m_conversations_overhead} per million conversations' overhead.` +
      ` Of it, stream positions: ${p.publications_per_exchange} publications positioned per exchange, each ${p.write_units_per_publication} write units and` +
      ` ${p.read_units_per_publication} read units, kept ${p.history_ttl_hours} h (TTL deletes are free): $${p.usd_per_1m_exchanges} per million exchanges`,
  );
  const b = c.cpu_share_bound;
  out(`With the stream consumers at a whole vCPU (1,769 MB: stream.ts's figures at 1 vCPU): $${c.usd_per_1m_exchanges_consumers_at_1_vcpu} per million exchanges`);
  out(`Not in the bill: that CPU (${b.cpu_ms_per_exchange} ms per exchange, at most) run on the functions' share of a vCPU would add up to ${b.gb_seconds_per_exchange} GB-s, $${b.usd_per_1m_exchanges} per million exchanges`);
}

export function reportRealtime(r: RealtimeFigures): void {
  // As many messages to the 50 subscribers as to the one (one shuffled order of both kinds).
  out(
    `\nRealtime delivery, POST returned → publication (${r.messages} messages): median ${r.median} ms, p99 ${r.p99} ms;` +
      ` 50 subscribers (interleaved, ${r.messages} messages), slowest of them: median ${r.fanout50_median} ms, p99 ${r.fanout50_p99} ms` +
      ` (each subscriber's delivery: median ${r.fanout50_each_median} ms)` +
      `${r.cpu_steal_pct === undefined ? '' : `; CPU stolen by the host meanwhile: ${r.cpu_steal_pct}%`}`,
  );
}

export function reportThroughput({ rps, load_latency_ms: latency, rss_mb: rss }: ThroughputFigures, seconds: number): void {
  out(`\nThroughput: 10 users, one connection each, ${seconds} s, from a second process (autocannon)`);
  for (const id of Object.keys(rps)) out(`${id.padEnd(32)}${`${rps[id]} req/s`.padStart(12)}   p50 ${latency[id].p50} ms, p99 ${latency[id].p99} ms`);
  out(`\nResident memory (MB)${''.padEnd(13)}${Object.keys(rss.at_rest).map((k) => k.padStart(16)).join('')}`);
  out(`${'at rest'.padEnd(33)}${Object.values(rss.at_rest).map((v) => String(v).padStart(16)).join('')}`);
  out(`${'under load (peak)'.padEnd(33)}${Object.values(rss.under_load).map((v) => String(v).padStart(16)).join('')}`);
}

export function reportColdInit(r: ColdInitFigures, runs: number): void {
  const { before, first_request_touches: touches, bundle_kb: kb, cold_init_ms: cold } = r;
  const arrow = (id: string, was: Record<string, number> | undefined, is: Record<string, number>) => (before ? `${was?.[id] ?? '-'} → ${is[id]}` : String(is[id]));
  out(
    `\nBundles and cold init per function: a fresh Node process with NODE_OPTIONS=--enable-source-maps (as deployed) loads the bundle and` +
      ` handles the event the function got earlier in this run (median of ${runs}; load = require() alone)` +
      (before ? `; before = ${before.ref} (${before.commit.slice(0, 12)}), measured interleaved with this code` : ''),
  );
  out(
    `${'function'.padEnd(20)}${'first request'.padEnd(22)}${`bundle KB${before ? ' (before → now)' : ''}`.padStart(24)}${`cold init ms${before ? ' (before → now)' : ''}`.padStart(28)}` +
      `${'load ms'.padStart(10)}${'no maps'.padStart(10)}${'target'.padStart(8)}`,
  );
  for (const id of Object.keys(kb)) {
    out(
      `${id.padEnd(20)}${(touches[id].join(' + ') || '-').padEnd(22)}${arrow(id, r.bundle_kb_before, kb).padStart(24)}${arrow(id, r.cold_init_ms_before, cold).padStart(28)}` +
        `${String(r.cold_load_ms[id]).padStart(10)}${String(r.cold_load_no_source_maps_ms[id]).padStart(10)}${String(coldTarget(touches[id])).padStart(8)}`,
    );
  }
  out(`\nThe client package (packages/client) without centrifuge, minified and gzipped: ${r.client_package_gzip_kb} KB (target ≤ ${CLIENT_PACKAGE_TARGET_KB} KB)`);
  const heavy = Object.keys(kb).filter((id) => kb[id] > BUNDLE_TARGET_KB || cold[id] > coldTarget(touches[id]));
  if (heavy.length) {
    out(`\nOver target: the largest parts of their bundles (KB in the minified output)`);
    for (const id of heavy) out(`${id.padEnd(20)}${Object.entries(r.bundle_parts_kb[id]).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
}

export function reportTargets(t: Record<string, Target>): void {
  const missed = Object.entries(t).filter(([, x]) => !x.met);
  out(`\nTargets: ${Object.keys(t).length - missed.length} of ${Object.keys(t).length} met${missed.length ? '; not met:' : ''}`);
  for (const [name, x] of missed) out(`  ${name}: ${x.value} (target ${x.target})`);
}

export function reportSteal(pct: number | undefined): void {
  if (pct !== undefined) out(`\nCPU stolen by the host over the whole run: ${pct}%`);
}
