// The bench's AWS latency allowances along an invocation's calls (bin/bench/cost-model.ts allowanceMs): calls made
// one after another add up, calls in flight together overlap, and a call started after another ended waits for it.
import type { CallSpan, Invocation } from '../../lib/local/handlers';
import { ALLOWANCE_MS, VCPU_MEMORY_MB, allowanceMs, billedMs, streamBatchMs } from '../../bin/bench/cost-model';

const inv = (spans: [string, number, number?][], endedAt = 100): Invocation => ({
  entry: 'x',
  event: {},
  counters: {},
  startedAt: 0,
  endedAt,
  spans: spans.map(([service, startedAt, ended]): CallSpan => ({ service, startedAt, ...(ended !== undefined && { endedAt: ended }) })),
});
const { dynamodb: db, connections: post } = ALLOWANCE_MS;

test('calls one after another add up; calls in flight together add the longest', () => {
  expect(allowanceMs(inv([]))).toBe(0);
  expect(allowanceMs(inv([['dynamodb', 0, 5], ['dynamodb', 5, 9], ['connections', 10, 12]]))).toBe(db + db + post);
  // A fan-out: three posts side by side.
  expect(allowanceMs(inv([['connections', 0, 3], ['connections', 1, 6], ['connections', 1, 4]]))).toBe(post);
});

test('a call beside a chain of two (the chat update beside the history put and the position): the chain counts', () => {
  // The emulator answers one at a time, so the lone call ends last; the chain still waits twice on AWS.
  const spans: [string, number, number?][] = [['dynamodb', 0, 3], ['dynamodb', 3, 10], ['dynamodb', 3, 6], ['dynamodb', 6, 15], ['connections', 16, 18]];
  expect(allowanceMs(inv(spans))).toBe(db + db + db + post);
});

test('a call never seen to end ends with the invocation; an unknown service is an error; the bill adds the allowance', () => {
  expect(allowanceMs(inv([['dynamodb', 0], ['dynamodb', 50, 60]]))).toBe(db);
  expect(() => allowanceMs(inv([['carrier-pigeon', 0, 1]]))).toThrow(/carrier-pigeon/);
  expect(billedMs(inv([['dynamodb', 0, 5], ['dynamodb', 5, 9]], 20.2))).toBe(Math.ceil(20.2 + 2 * db));
});

test("a stream batch waits for all its lanes' CPU on the function's share of a vCPU, and one lane's waits", () => {
  // 100 records at 5 ms of CPU each, at 256 MB, with a lane waiting 55 ms on AWS: the lanes share one thread.
  const scale = VCPU_MEMORY_MB / 256;
  expect(streamBatchMs({ cpuMs: 500, cpuScale: scale, allowanceMs: 55 })).toBeCloseTo(500 * 6.91 + 55, 0);
  // At a whole vCPU the CPU runs as measured; the waits do not shrink.
  expect(streamBatchMs({ cpuMs: 500, cpuScale: 1, allowanceMs: 55 })).toBe(555);
});
