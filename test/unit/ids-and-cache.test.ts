// Message ids sort by time and never repeat within a process; the bot settings cache honours its TTL.
import { byCodeUnits, isMessageId, isUuid, newMessageId, newUuid } from '../../lambdas/shared/ids';
import { TtlCache } from '../../lambdas/shared/cache';

test('message ids: 19 digits, strictly increasing, even within one millisecond', () => {
  const now = Date.now();
  const ids = Array.from({ length: 2000 }, () => newMessageId(now));
  for (const id of ids) expect(isMessageId(id)).toBe(true);
  for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
  expect(newMessageId(now + 1) > ids[ids.length - 1]).toBe(true);
  // The leading 13 digits are the millisecond.
  expect(newMessageId(now + 5000).slice(0, 13)).toBe(String(now + 5000));
});

test('byCodeUnits sorts as DynamoDB sorts keys: by code unit, not by locale', () => {
  expect(['1795263517621807861', '0995263517621807860', '1795263517621807859'].sort(byCodeUnits)).toEqual([
    '0995263517621807860',
    '1795263517621807859',
    '1795263517621807861',
  ]);
  expect(['2026-11-21T10:00:00.001Z', '2026-11-21T09:59:59.999Z', '2026-11-21T10:00:00.000Z'].sort(byCodeUnits)).toEqual([
    '2026-11-21T09:59:59.999Z',
    '2026-11-21T10:00:00.000Z',
    '2026-11-21T10:00:00.001Z',
  ]);
  // A locale collation puts 'a' before 'B'; DynamoDB's byte order does not.
  expect(['a', 'B', '-', '0'].sort(byCodeUnits)).toEqual(['-', '0', 'B', 'a']);
  expect(byCodeUnits('x', 'x')).toBe(0);
});

test('uuid check accepts only lower-case canonical UUIDs', () => {
  expect(isUuid(newUuid())).toBe(true);
  for (const bad of ['', 'x', newUuid().toUpperCase(), `${newUuid()} `, 1, null]) expect(isUuid(bad)).toBe(false);
});

test('TtlCache: one load per TTL; TTL 0 always loads', async () => {
  let ttl = 50;
  const cache = new TtlCache<number>(() => ttl);
  let loads = 0;
  const load = () => Promise.resolve(++loads);
  expect(await cache.get('k', load)).toBe(1);
  expect(await cache.get('k', load)).toBe(1);
  await new Promise((r) => setTimeout(r, 60));
  expect(await cache.get('k', load)).toBe(2);
  ttl = 0;
  expect(await cache.get('k', load)).toBe(3);
  expect(await cache.get('k', load)).toBe(4);
});

test('TtlCache evicts the oldest entry past its size bound', async () => {
  const cache = new TtlCache<string>(() => 60_000, 2);
  let loads = 0;
  const load = (v: string) => () => (loads++, Promise.resolve(v));
  await cache.get('a', load('a'));
  await cache.get('b', load('b'));
  await cache.get('c', load('c'));
  expect(loads).toBe(3);
  await cache.get('c', load('c'));
  await cache.get('b', load('b'));
  expect(loads).toBe(3);
  await cache.get('a', load('a'));
  expect(loads).toBe(4);
});
