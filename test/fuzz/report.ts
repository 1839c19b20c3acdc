// The fuzz report as text: the seed first (to replay a failure), per-operation counts, failures grouped, duration.
import type { FuzzReport } from './runner';

const statuses = (s: Record<string, number>) =>
  Object.entries(s)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');

export const replayHint = (seed: number, requests: number): string => `npm run fuzz -- --seed ${seed} --requests ${requests}`;

export function formatReport(r: FuzzReport): string {
  const lines = [`fuzz: seed ${r.seed} (replay: ${replayHint(r.seed, r.requests)})`, ''];
  const ops = Object.entries(r.perOperation).sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(10, ...ops.map(([k]) => k.length));
  lines.push(`${'operation'.padEnd(width)}  ${'sent'.padStart(5)}  statuses (valid requests alone)`);
  for (const [key, s] of ops) {
    const valid = Object.values(s.validStatuses).reduce((a, b) => a + b, 0);
    lines.push(`${key.padEnd(width)}  ${String(s.sent).padStart(5)}  ${statuses(s.statuses)}  (${valid} valid: ${statuses(s.validStatuses) || '-'})`);
  }
  const seconds = r.durationMs / 1000;
  lines.push('', `${r.requests} requests in ${seconds.toFixed(1)} s (${Math.round(r.requests / seconds)} per second, set-up and final checks included); ${r.acknowledged} messages acknowledged with 201 and looked for in history`);
  if (r.failureCount === 0) {
    lines.push('failures: none');
    return lines.join('\n');
  }
  lines.push(`failures: ${r.failureCount}`, '', 'by kind, operation, status and what the request had wrong:');
  for (const [group, n] of Object.entries(r.failureGroups).sort(([, a], [, b]) => b - a)) lines.push(`  ${String(n).padStart(5)} × ${group}`);
  lines.push('', `the first ${r.failures.length}:`, ...r.failures.map((f) => `  - ${f}`), '', `replay: ${replayHint(r.seed, r.requests)}`);
  return lines.join('\n');
}
