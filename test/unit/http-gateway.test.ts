// The local gateway builds the same API Gateway HTTP API payload v2 events the cloud sends.
import type { IncomingMessage } from 'node:http';
import { buildHttpEvent, matchRoute } from '../../lib/local/http-gateway';
import { ROUTES } from '../../lib/routes';
import { toRequest } from '../../lambdas/http/http';

const fakeReq = (headers: Record<string, string>) =>
  ({ headers, httpVersion: '1.1', socket: { remoteAddress: '::ffff:10.0.0.7' } }) as unknown as IncomingMessage;

test('every route of the table matches its own method and path, and nothing else', () => {
  for (const r of ROUTES) {
    const path = r.path.replace('{chat_id}', 'abc');
    expect(matchRoute(ROUTES, r.method, path)?.route.id).toBe(r.id);
  }
  expect(matchRoute(ROUTES, 'DELETE', '/api/client/chats')).toBeUndefined();
  expect(matchRoute(ROUTES, 'GET', '/api/client/chats/')).toBeUndefined();
  expect(matchRoute(ROUTES, 'GET', '/api/client/chats//messages')).toBeUndefined();
  expect(matchRoute(ROUTES, 'GET', '/api/client/chats/a%20b/messages')?.params).toEqual({ chat_id: 'a b' });
});

test('payload v2: routeKey, headers, joined query values, path parameters, base64 for binary bodies', () => {
  const match = matchRoute(ROUTES, 'GET', '/api/client/chats/c1/messages')!;
  const event = buildHttpEvent(
    fakeReq({ host: 'localhost:3000', 'content-type': 'image/png', 'user-agent': 'ua', cookie: 'a=1; b=2' }),
    Buffer.from([0, 1, 2, 255]),
    match,
    '/api/client/chats/c1/messages',
    'limit=5&a=1&a=2',
  );
  expect(event).toMatchObject({
    version: '2.0',
    routeKey: 'GET /api/client/chats/{chat_id}/messages',
    rawPath: '/api/client/chats/c1/messages',
    rawQueryString: 'limit=5&a=1&a=2',
    cookies: ['a=1', 'b=2'],
    queryStringParameters: { limit: '5', a: '1,2' },
    pathParameters: { chat_id: 'c1' },
    isBase64Encoded: true,
    requestContext: { http: { method: 'GET', sourceIp: '10.0.0.7', userAgent: 'ua' }, stage: '$default' },
  });
  expect(event.headers.cookie).toBeUndefined();
  expect(toRequest(event).rawBody()).toEqual(Buffer.from([0, 1, 2, 255]));

  const json = buildHttpEvent(fakeReq({ 'content-type': 'application/json' }), Buffer.from('{"a":1}'), match, '/x', '');
  expect(json.isBase64Encoded).toBe(false);
  expect(toRequest(json).json()).toEqual({ a: 1 });
  expect(json.queryStringParameters).toBeUndefined();
});
