// The stream consumers' batch rule (lambdas/aws/stream-batch.ts over Powertools' BatchProcessor): records of one
// lane in stream order, lanes side by side, a failure holding back what follows it, only real failures logged.
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { processStreamBatch } from '../../lambdas/aws/stream-batch';

/** A record of the given lane; `seq` is its sequence number. */
const rec = (seq: string, lane: string): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { SequenceNumber: seq, NewImage: { lane: { S: lane } } } });
const event = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const laneOf = (r: DynamoDBRecord) => r.dynamodb!.NewImage!.lane.S!;
const seqOf = (r: DynamoDBRecord) => r.dynamodb!.SequenceNumber!;

/** Runs a batch whose second step fails for `failRun` and whose first fails for `failPrepare`; what ran, in order. */
async function run(records: DynamoDBRecord[], { failRun = [] as string[], failPrepare = [] as string[] } = {}) {
  const ran: string[] = [];
  const logged: string[] = [];
  const response = await processStreamBatch(event(...records), {
    prepare: (r) => (failPrepare.includes(seqOf(r)) ? Promise.reject(new Error('unreadable')) : Promise.resolve(r)),
    run: {
      lane: laneOf,
      step: async (r) => {
        // The first record of lane a is slow: the other lane must not wait for it, its own next record must.
        if (seqOf(r) === '1') await new Promise((resolve) => setImmediate(resolve));
        if (failRun.includes(seqOf(r))) throw new Error('post failed');
        ran.push(seqOf(r));
      },
    },
    logFailure: (r) => logged.push(seqOf(r)),
  });
  return { ran, logged, failed: response.batchItemFailures.map((f) => f.itemIdentifier) };
}

test('records of one lane run in stream order, another lane does not wait for them; nothing failed', async () => {
  expect(await run([rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b')])).toEqual({ ran: ['2', '4', '1', '3'], logged: [], failed: [] });
});

test('a failed record holds back the later records of its lane only; it alone is logged, they are reported for the retry', async () => {
  expect(await run([rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b')], { failRun: ['1'] })).toEqual({
    ran: ['2', '4'],
    logged: ['1'],
    failed: ['1', '3'],
  });
});

test('a record whose first step fails holds back every later record, of any lane', async () => {
  expect(await run([rec('1', 'a'), rec('2', 'b'), rec('3', 'a'), rec('4', 'b')], { failPrepare: ['2'] })).toEqual({
    ran: ['1'],
    logged: ['2'],
    failed: ['2', '3', '4'],
  });
});

test('every record failing is answered with the list (no error thrown: the batch is retried from the first)', async () => {
  expect(await run([rec('1', 'a'), rec('3', 'a')], { failRun: ['1'] })).toEqual({ ran: [], logged: ['1'], failed: ['1', '3'] });
});
