// The local stream poller's pace: quick right after a handler ran, backing off to a rare poll when idle, and
// woken at once by the next invocation (so an idle `npm start` costs almost nothing and a write is read at once).
// Margins are wide: timers may run late on a loaded machine, never early.
import { PollPacer } from '../../lib/local/poll-pacer';

const timed = async (fn: () => Promise<void>): Promise<number> => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};

test('idle: the pause doubles up to the maximum', async () => {
  const pacer = new PollPacer(100, 400, 0);
  pacer.wake(); // from the shortest pause
  const sleeps: number[] = [];
  for (let i = 0; i < 4; i++) sleeps.push(await timed(() => pacer.rest(0)));
  expect(sleeps.map((ms) => ms >= 99)).toEqual([true, true, true, true]);
  expect([sleeps[1] >= 199, sleeps[2] >= 399, sleeps[3] >= 399]).toEqual([true, true, true]);
});

test('a wake cuts a long sleep short, and polls stay quick for a while after it', async () => {
  const pacer = new PollPacer(5, 5000, 3000);
  const long = pacer.rest(0); // nothing happened yet: 5 s
  setTimeout(() => pacer.wake(), 50);
  expect(await timed(() => long)).toBeLessThan(2500);
  expect(await timed(() => pacer.rest(0))).toBeLessThan(500); // busy: 5 ms
  expect(await timed(() => pacer.rest(0))).toBeLessThan(500);
});

test('records keep it quick: a round that read some does not sleep', async () => {
  const pacer = new PollPacer(100, 5000, 0);
  expect(await timed(() => pacer.rest(3))).toBeLessThan(90);
});

describe('LOCAL_STREAM_POLL_MS: the pause while busy, from the environment (lib/local/settings.ts)', () => {
  const saved = process.env.LOCAL_STREAM_POLL_MS;
  afterEach(() => (saved === undefined ? delete process.env.LOCAL_STREAM_POLL_MS : (process.env.LOCAL_STREAM_POLL_MS = saved)));
  const read = async (value: string | undefined) => {
    if (value === undefined) delete process.env.LOCAL_STREAM_POLL_MS;
    else process.env.LOCAL_STREAM_POLL_MS = value;
    const { localSettings } = await import('../../lib/local/settings');
    return localSettings().streamPollMs;
  };

  test('10 ms unless set; a whole number of ms at least 1 when set', async () => {
    expect(await read(undefined)).toBe(10);
    expect(await read('25')).toBe(25);
    for (const bad of ['0', '2.5', 'fast']) await expect(read(bad)).rejects.toThrow(`LOCAL_STREAM_POLL_MS must be a whole number of ms, 1 or more, got "${bad}"`);
  });
});
