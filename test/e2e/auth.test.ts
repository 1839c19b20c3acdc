// Session tokens on every authenticated endpoint: missing, malformed, tampered, expired, wrong algorithm or type → 401.
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { call, clientEndpoints, userWithChat } from '../support/api';
import { untilExpired } from '../support/wait';
import { updateBot } from '../../lambdas/flows/bot-admin';

const key = () => new TextEncoder().encode(readFileSync(process.env.JWT_SECRET_FILE as string, 'utf8').trim());

/** Signs a token like the server does, with one thing changed. */
async function forge(sub: string, bot: string, change: { alg?: string; typ?: string; aud?: string; iss?: string; exp?: number; nbf?: number; secret?: Uint8Array } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ bot })
    .setProtectedHeader({ alg: change.alg ?? 'HS256', typ: change.typ ?? 'nexus-session+jwt' })
    .setIssuer(change.iss ?? 'nexus')
    .setAudience(change.aud ?? 'nexus:client')
    .setSubject(sub)
    .setIssuedAt(now - 10)
    .setExpirationTime(change.exp ?? now + 3600);
  if (change.nbf) jwt.setNotBefore(change.nbf);
  return jwt.sign(change.secret ?? key());
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

test('every endpoint but session rejects bad tokens with 401 and {error}', async () => {
  const { token, userId, bot, chatId } = await userWithChat();
  const [h, p] = token.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const bad: Record<string, Record<string, string>> = {
    missing: {},
    'empty bearer': { authorization: 'Bearer ' },
    'basic scheme': { authorization: `Basic ${token}` },
    'no scheme': { authorization: token },
    garbage: { authorization: 'Bearer not.a.jwt' },
    tampered: { authorization: `Bearer ${h}.${b64({ ...claims, sub: '00000000-0000-4000-8000-000000000000' })}.${token.split('.')[2]}` },
    'alg none': { authorization: `Bearer ${b64({ alg: 'none', typ: 'nexus-session+jwt' })}.${p}.` },
    expired: { authorization: `Bearer ${await forge(userId, bot.id, { exp: now - 5 })}` },
    'not yet valid': { authorization: `Bearer ${await forge(userId, bot.id, { nbf: now + 600 })}` },
    'HS512 with the same key': { authorization: `Bearer ${await forge(userId, bot.id, { alg: 'HS512' })}` },
    'another key': { authorization: `Bearer ${await forge(userId, bot.id, { secret: new TextEncoder().encode('x'.repeat(64)) })}` },
    'another token type': { authorization: `Bearer ${await forge(userId, bot.id, { typ: 'nexus-realtime+jwt', aud: 'nexus:realtime' })}` },
    'wrong audience': { authorization: `Bearer ${await forge(userId, bot.id, { aud: 'nexus:other' })}` },
    'sub not a uuid': { authorization: `Bearer ${await forge('admin', bot.id)}` },
    'oversized': { authorization: `Bearer ${'a'.repeat(5000)}` },
  };
  for (const [method, path, json] of clientEndpoints(chatId)) {
    for (const [name, headers] of Object.entries(bad)) {
      const res = await call(method, path, { headers, json });
      expect({ name, method, path, status: res.status }).toEqual({ name, method, path, status: 401 });
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  }
  // The genuine token still works, and the expired one says so.
  expect((await call('GET', '/api/client/chats', { token })).status).toBe(200);
  const expired = await call('GET', '/api/client/chats', { headers: bad.expired });
  expect(expired.body.error).toMatch(/expired/);
});

test('a bot switched off or with its client interface disabled → 403 on every endpoint', async () => {
  const { token, bot, chatId } = await userWithChat();
  for (const change of [{ enabled: false }, { enabled: true, client_api_enabled: false }]) {
    await updateBot(bot.id, change);
    for (const [method, path, json] of clientEndpoints(chatId)) {
      const res = await call(method, path, { token, json });
      expect({ change, path, status: res.status }).toEqual({ change, path, status: 403 });
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  }
  await updateBot(bot.id, { enabled: true, client_api_enabled: true });
  expect((await call('GET', '/api/client/chats', { token })).status).toBe(200);
});

// Verified tokens are remembered by the instance (to skip the HMAC on a session's later requests); a token
// remembered while valid is still refused the moment it expires.
test('a token accepted while valid is refused once it expires, though it was verified before', async () => {
  const { userId, bot } = await userWithChat();
  // 3 s ahead: its three requests fit before it expires on a loaded machine; the wait below is computed from it.
  const exp = Math.floor(Date.now() / 1000) + 3;
  const token = await forge(userId, bot.id, { exp });
  for (let i = 0; i < 3; i++) expect((await call('GET', '/api/client/chats', { token })).status).toBe(200);
  await untilExpired(exp);
  const late = await call('GET', '/api/client/chats', { token });
  expect(late.status).toBe(401);
  expect(late.body.error).toMatch(/expired/);
  // A remembered token does not lend its verdict to a tampered copy.
  const [h, p, s] = token.split('.');
  const other = await call('GET', '/api/client/chats', { token: `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}` });
  expect(other.status).toBe(401);
});
