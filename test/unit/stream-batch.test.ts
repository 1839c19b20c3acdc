// The stream consumers' batch rule (lambdas/aws/stream-batch.ts): records of one lane (a user) in stream order,
// lanes side by side; a record that keeps failing goes aside with its lane's later records and the rest of the
// batch succeeds; a lane already held goes aside whole; without a place to set records aside they are reported.
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { processStreamBatch, RECORD_TRIES, type SetAside } from '../../lambdas/aws/stream-batch';

/** A record of the given lane; `seq` is its sequence number. */
const rec = (seq: string, lane: string): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { SequenceNumber: seq, NewImage: { lane: { S: lane } } } });
const event = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const laneOf = (r: DynamoDBRecord) => r.dynamodb!.NewImage!.lane.S!;
const seqOf = (r: DynamoDBRecord) => r.dynamodb!.SequenceNumber!;
const batch = [rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b'), rec('5', 'c')];

/** A place to set records aside, in memory: what went there, by lane; `held` lanes are already there. */
function redo(held: string[] = [], refuse = false) {
  const aside: Record<string, string[]> = {};
  const setAside: SetAside = {
    held: (lanes) => Promise.resolve(new Set(lanes.filter((l) => held.includes(l)))),
    put: (lane, records) => {
      if (refuse) return Promise.reject(new Error('queue down'));
      (aside[lane] ??= []).push(...records.map(seqOf));
      return Promise.resolve();
    },
  };
  return { aside, setAside };
}

/** Runs a batch whose step fails for `fail` (every try, or the first `tries` of them); what ran, in order. */
async function run(records: DynamoDBRecord[], o: { fail?: string[]; tries?: number; setAside?: SetAside } = {}) {
  const ran: string[] = [];
  const logged: string[] = [];
  const tried = new Map<string, number>();
  const response = await processStreamBatch(event(...records), {
    lane: laneOf,
    step: async (r) => {
      // The first record of lane a is slow: the other lanes must not wait for it, its own next record must.
      if (seqOf(r) === '1') await new Promise((resolve) => setImmediate(resolve));
      const n = (tried.get(seqOf(r)) ?? 0) + 1;
      tried.set(seqOf(r), n);
      if (o.fail?.includes(seqOf(r)) && n <= (o.tries ?? Infinity)) throw new Error('post failed');
      ran.push(seqOf(r));
    },
    logFailure: (r) => logged.push(seqOf(r)),
    setAside: o.setAside,
  });
  return { ran, logged, failed: response.batchItemFailures.map((f) => f.itemIdentifier), tried: Object.fromEntries(tried) };
}

test('records of one lane run in stream order, other lanes do not wait for them; nothing failed', async () => {
  const { ran, failed } = await run(batch);
  expect(ran).toEqual(['2', '5', '4', '1', '3']);
  expect(failed).toEqual([]);
});

test('a record that fails a try is tried again at once, within the invocation: nothing goes aside', async () => {
  const r = redo();
  const out = await run(batch, { fail: ['1'], tries: RECORD_TRIES - 1, setAside: r.setAside });
  expect(out.ran.filter((s) => ['1', '3'].includes(s))).toEqual(['1', '3']);
  expect(out.tried['1']).toBe(RECORD_TRIES);
  expect([out.failed, out.logged, r.aside]).toEqual([[], [], {}]);
});

test('a record that keeps failing goes aside with its lane\'s later records; the batch succeeds for every other lane', async () => {
  const r = redo();
  const out = await run(batch, { fail: ['1'], setAside: r.setAside });
  expect(out.ran.sort()).toEqual(['2', '4', '5']);
  expect(r.aside).toEqual({ a: ['1', '3'] });
  // Only the record that failed is logged, after its last try; the one behind it never ran.
  expect(out.logged).toEqual(['1']);
  expect(out.tried).toMatchObject({ 1: RECORD_TRIES });
  expect(out.tried['3']).toBeUndefined();
  expect(out.failed).toEqual([]);
});

test('a lane with records already aside sends every record of this batch after them, running none', async () => {
  const r = redo(['b']);
  const out = await run(batch, { setAside: r.setAside });
  expect(out.ran.sort()).toEqual(['1', '3', '5']);
  expect(r.aside).toEqual({ b: ['2', '4'] });
  expect(out.failed).toEqual([]);
});

test('nowhere to set them aside (or the redo queue refuses): the failed lane\'s records are reported, in stream order', async () => {
  expect((await run(batch, { fail: ['1'] })).failed).toEqual(['1', '3']);
  const out = await run(batch, { fail: ['4'], setAside: redo([], true).setAside });
  expect(out.failed).toEqual(['4']);
  expect(out.ran.sort()).toEqual(['1', '2', '3', '5']);
});
