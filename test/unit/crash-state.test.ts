// What the local stack keeps in its data folder across a restart: the stream consumers' checkpoints and the
// journal of pending queue messages and S3 events, read back as a new process would after a crash.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../../lib/local/journal';
import { StreamCheckpoints } from '../../lib/local/stream-checkpoints';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'crash-state-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the journal gives back, oldest first, what was added and not done; the file then holds only that', () => {
  const file = join(dir, 'queues', 'webhooks.jsonl');
  const first = new Journal<{ body: string }>(file);
  first.add([
    { id: 'a', value: { body: 'A' } },
    { id: 'b', value: { body: 'B' } },
  ]);
  first.add([{ id: 'c', value: { body: 'C' } }]);
  first.done('b');
  first.done('b'); // twice: no second line
  first.done('unknown');
  // A new process on the same file (the first one never stopped: as after SIGKILL).
  const second = new Journal<{ body: string }>(file);
  expect(second.pending()).toEqual([
    ['a', { body: 'A' }],
    ['c', { body: 'C' }],
  ]);
  expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  second.done('a');
  second.done('c');
  expect(new Journal(file).pending()).toEqual([]);
  expect(readFileSync(file, 'utf8')).toBe('');
});

test('checkpoints: a first start skips what the stream holds; a restart resumes after the slowest consumer, per shard', () => {
  const file = join(dir, 'stream-checkpoints.json');
  const arn = 'arn:stream/1';
  const first = new StreamCheckpoints(file, arn, ['publisher', 'dispatcher']);
  expect(first.resumed).toBe(false);
  // Nothing is written before the start-up took its positions: a crash meanwhile is a first start again.
  first.prune(new Set(['s1']));
  expect(new StreamCheckpoints(file, arn, ['publisher', 'dispatcher']).resumed).toBe(false);
  // The poller seeds every consumer at the shard's last record so far.
  first.seed('s1', '000000000000000000090');
  expect(first.startOf('s1')).toEqual({ type: 'AFTER_SEQUENCE_NUMBER', seq: '000000000000000000090' });
  first.advance('publisher', new Map([['s1', '000000000000000000120']]));
  first.advance('dispatcher', new Map([['s1', '000000000000000000095']]));
  first.advance('publisher', new Map([['s2', '7']]));
  // Never backwards: a batch finished out of order does not move a checkpoint back.
  first.advance('publisher', new Map([['s1', '000000000000000000100']]));

  const after = new StreamCheckpoints(file, arn, ['publisher', 'dispatcher']);
  expect(after.resumed).toBe(true);
  expect(after.of('publisher', 's1')).toBe('000000000000000000120');
  expect(after.startOf('s1')).toEqual({ type: 'AFTER_SEQUENCE_NUMBER', seq: '000000000000000000095' });
  // The dispatcher finished nothing in s2: it is read from its start. A shard made while down likewise.
  expect(after.startOf('s2')).toEqual({ type: 'TRIM_HORIZON' });
  expect(after.startOf('s3')).toEqual({ type: 'TRIM_HORIZON' });
  // Sequence numbers compare as numbers, whatever their length.
  after.advance('dispatcher', new Map([['s1', '1000000000000000000000']]));
  expect(after.startOf('s1')).toEqual({ type: 'AFTER_SEQUENCE_NUMBER', seq: '000000000000000000120' });
  after.prune(new Set(['s2']));
  expect(new StreamCheckpoints(file, arn, ['publisher', 'dispatcher']).startOf('s1')).toEqual({ type: 'TRIM_HORIZON' });
});

test('checkpoints of another stream (the table made again) count for nothing: the new stream is read from its start', () => {
  const file = join(dir, 'stream-checkpoints.json');
  new StreamCheckpoints(file, 'arn:stream/1', ['publisher']).advance('publisher', new Map([['s1', '5']]));
  const other = new StreamCheckpoints(file, 'arn:stream/2', ['publisher']);
  expect(other.of('publisher', 's1')).toBeUndefined();
  expect(other.startOf('s1')).toEqual({ type: 'TRIM_HORIZON' });
});
