// CORS preflights on the local HTTP gateway, which answers them from lib/routes.ts CORS as API Gateway does
// from the same constant: every route, every method, and each header a browser client sends (the token,
// the body's type, a send's Idempotency-Key) is allowed, so no browser request fails its preflight.
import { apiUrl, call, userWithChat } from '../support/api';
import { ROUTES } from '../../lib/routes';

/** The headers a browser client sends that need a preflight (docs/api.md "Retrying a send safely" for the last). */
const CLIENT_HEADERS = ['authorization', 'content-type', 'idempotency-key'];
const ORIGIN = 'https://shop.example';

const preflight = (path: string, method: string, headers: string) =>
  fetch(apiUrl() + path, {
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
const list = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

test.each(CLIENT_HEADERS)('a preflight asking for %s is allowed on every route', async (header) => {
  for (const route of ROUTES) {
    const path = route.path.replace('{chat_id}', 'c0ffee');
    const res = await preflight(path, route.method, header);
    expect({ route: route.id, status: res.status }).toEqual({ route: route.id, status: 204 });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(res.headers.get('access-control-allow-methods'))).toContain(route.method.toLowerCase());
    expect({ route: route.id, allowed: list(res.headers.get('access-control-allow-headers')) }).toEqual({
      route: route.id,
      allowed: expect.arrayContaining([header]),
    });
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  }
});

test('a preflight asking for all of them at once (as a browser sends a retried message) is allowed', async () => {
  const res = await preflight('/api/client/chats/c0ffee/messages', 'POST', CLIENT_HEADERS.join(','));
  expect(res.status).toBe(204);
  expect(list(res.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(CLIENT_HEADERS));
});

test('the request after the preflight: a send with Idempotency-Key from another origin gets its CORS header', async () => {
  const { token, chatId } = await userWithChat();
  const headers = { origin: ORIGIN, 'idempotency-key': 'cors-retry-1' };
  const first = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hi' }, headers });
  expect(first.status).toBe(201);
  expect(first.headers.get('access-control-allow-origin')).toBe('*');
  // The page may read a 429's or a 503's Retry-After (not a header browsers show another origin by default).
  expect(list(first.headers.get('access-control-expose-headers'))).toEqual(['retry-after']);
  const again = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hi' }, headers });
  expect([again.status, again.body.id]).toEqual([200, first.body.id]);
});
