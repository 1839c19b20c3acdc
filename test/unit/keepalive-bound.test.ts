// The keepalive's bound (lambdas/centrifuge/keepalive.ts): per socket, one empty `send` per
// SOCKET_KEEPALIVE_FREE_EVERY_MS (60 s by default) skips the command budget; any more is metered like a command.
import { isKeepalive, takeFreeKeepalive } from '../../lambdas/centrifuge/keepalive';

test('one keepalive a minute per socket goes free; one sooner is metered; another socket has its own minute', () => {
  const t = 1_000_000;
  expect([takeFreeKeepalive('sock-a', t), takeFreeKeepalive('sock-a', t + 59_999), takeFreeKeepalive('sock-b', t + 1), takeFreeKeepalive('sock-a', t + 60_000)]).toEqual([true, false, true, true]);
});

test('only the empty async message is a keepalive', () => {
  expect(['{"send":{"data":{}}}', '{"send":{"data":{"x":1}}}', '{"send":{}}', '{"id":1,"send":{"data":{}}}', '[]', 'x'].map(isKeepalive)).toEqual([true, false, false, false, false, false]);
});
