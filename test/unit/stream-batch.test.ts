// The stream consumers' batch rule (lambdas/aws/stream-batch.ts): records of one lane (a user) in stream order,
// lanes side by side; a record that keeps failing goes aside with its lane's later records and the rest of the
// batch succeeds; a lane whose step finds it held (LaneHeld) goes aside from there, untried again and unlogged;
// without a place to set records aside they are reported.
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LaneHeld, processStreamBatch, RECORD_TRIES, type SetAside } from '../../lambdas/aws/stream-batch';

/** A record of the given lane; `seq` is its sequence number. */
const rec = (seq: string, lane: string): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { SequenceNumber: seq, NewImage: { lane: { S: lane } } } });
const event = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const laneOf = (r: DynamoDBRecord) => r.dynamodb!.NewImage!.lane.S!;
const seqOf = (r: DynamoDBRecord) => r.dynamodb!.SequenceNumber!;
const batch = [rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b'), rec('5', 'c')];

/** A place to set records aside, in memory: what went there, by lane. */
function redo(refuse = false) {
  const aside: Record<string, string[]> = {};
  const setAside: SetAside = {
    put: (lane, records) => {
      if (refuse) return Promise.reject(new Error('queue down'));
      (aside[lane] ??= []).push(...records.map(seqOf));
      return Promise.resolve();
    },
  };
  return { aside, setAside };
}

/**
 * Runs a batch whose step fails for `fail` (every try, or the first `tries` of them), and finds the lanes of
 * `held` held from their record `heldFrom` on (their first by default); what ran, in order.
 */
async function run(records: DynamoDBRecord[], o: { fail?: string[]; tries?: number; setAside?: SetAside; held?: string[]; heldFrom?: string } = {}) {
  const ran: string[] = [];
  const logged: string[] = [];
  const tried = new Map<string, number>();
  const response = await processStreamBatch(event(...records), {
    lane: laneOf,
    step: async (r, path) => {
      expect(path).toBe('stream');
      if (o.held?.includes(laneOf(r)) && seqOf(r) >= (o.heldFrom ?? '')) {
        tried.set(seqOf(r), (tried.get(seqOf(r)) ?? 0) + 1);
        throw new LaneHeld(laneOf(r));
      }
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

test('a lane its first record finds held sends every record of this batch after the ones aside: tried once, none run, nothing logged', async () => {
  const r = redo();
  const out = await run(batch, { setAside: r.setAside, held: ['b'] });
  expect(out.ran.sort()).toEqual(['1', '3', '5']);
  expect(r.aside).toEqual({ b: ['2', '4'] });
  expect([out.failed, out.logged, out.tried['2'], out.tried['4']]).toEqual([[], [], 1, undefined]);
});

test('a lane found held at a later record keeps what ran before it and sends the rest after the ones aside', async () => {
  const r = redo();
  const out = await run(batch, { setAside: r.setAside, held: ['b'], heldFrom: '4' });
  expect(out.ran.sort()).toEqual(['1', '2', '3', '5']);
  expect(r.aside).toEqual({ b: ['4'] });
  expect([out.failed, out.logged]).toEqual([[], []]);
});

test('nowhere to set them aside (or the redo queue refuses): the failed lane\'s records are reported, in stream order', async () => {
  expect((await run(batch, { fail: ['1'] })).failed).toEqual(['1', '3']);
  const out = await run(batch, { fail: ['4'], setAside: redo(true).setAside });
  expect(out.failed).toEqual(['4']);
  expect(out.ran.sort()).toEqual(['1', '2', '3', '5']);
});
