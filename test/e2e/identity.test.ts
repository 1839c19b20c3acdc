// Identity verification (opt-in per bot): a session for an external_id needs its HMAC; without the setting
// the contract's behaviour is unchanged.
import { createHmac } from 'node:crypto';
import { botItems, call, newBot } from '../support/api';
import { updateBot } from '../../lambdas/flows/bot-admin';

const hmac = (secret: string, externalId: string) => createHmac('sha256', secret).update(externalId).digest('hex');
const session = (json: Record<string, unknown>) => call('POST', '/api/client/session', { json });

test('with identity verification: the right hash opens a session; missing, wrong or foreign hashes get 403 and write nothing', async () => {
  const { bot: made } = await newBot();
  const { bot } = await updateBot(made.id, { identity_verification: true });
  const secret = bot.identity_secret as string;
  expect(secret).toMatch(/^idsec_[0-9a-f]{64}$/);
  const ck = bot.client_key;

  const ok = await session({ client_key: ck, external_id: 'crm-7', external_id_hash: hmac(secret, 'crm-7') });
  expect(ok.status).toBe(200);
  expect(ok.body.user.external_id).toBe('crm-7');
  expect((await session({ client_key: ck, external_id: 'crm-7', external_id_hash: hmac(secret, 'crm-7').toUpperCase() })).status).toBe(200);

  const before = await botItems(bot.id);
  const refused: Record<string, unknown>[] = [
    { external_id: 'crm-8' },
    { external_id: 'crm-8', external_id_hash: '' },
    { external_id: 'crm-8', external_id_hash: hmac(secret, 'crm-7') }, // another user's hash
    { external_id: 'crm-8', external_id_hash: hmac('idsec_wrong', 'crm-8') },
    { external_id: 'crm-8', external_id_hash: hmac(secret, 'crm-8').slice(0, 63) },
    { external_id: 'crm-8', external_id_hash: 'zz' + hmac(secret, 'crm-8').slice(2) },
    { external_id: 'crm-8', external_id_hash: hmac(secret, 'crm-8') + '00' },
  ];
  for (const extra of refused) {
    const res = await session({ client_key: ck, ...extra });
    expect({ extra, status: res.status }).toEqual({ extra, status: 403 });
    expect(res.body.error).toMatch(/external_id_hash/);
  }
  expect(await botItems(bot.id)).toEqual(before);

  // Anonymous visitors stay allowed unless the bot requires identity.
  expect((await session({ client_key: ck })).status).toBe(200);
  await updateBot(bot.id, { require_identity: true });
  const anon = await session({ client_key: ck });
  expect(anon.status).toBe(403);
  expect(anon.body.error).toMatch(/verified/);
  expect((await session({ client_key: ck, external_id: 'crm-7', external_id_hash: hmac(secret, 'crm-7') })).status).toBe(200);
});

test('without identity verification an external_id_hash is not needed (and ignored); turning it off drops the secret', async () => {
  const { bot } = await newBot();
  expect((await session({ client_key: bot.client_key, external_id: 'x' })).status).toBe(200);
  expect((await session({ client_key: bot.client_key, external_id: 'x', external_id_hash: 'nonsense' })).status).toBe(200);
  const on = await updateBot(bot.id, { identity_verification: true });
  expect((await session({ client_key: bot.client_key, external_id: 'x' })).status).toBe(403);
  const off = await updateBot(bot.id, { identity_verification: false });
  expect(on.bot.identity_secret).toBeDefined();
  expect(off.bot.identity_secret).toBeUndefined();
  expect((await session({ client_key: bot.client_key, external_id: 'x' })).status).toBe(200);
});
