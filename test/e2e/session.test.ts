// POST /api/client/session: bot lookup, bot switches, origin rules, and the errors of each.
import { botItems, call, newBot } from '../support/api';

const session = (json: unknown, headers: Record<string, string> = {}) =>
  call('POST', '/api/client/session', { json, headers });

describe('origin check', () => {
  test('no allowed_origins: any origin, and no Origin at all, may create sessions', async () => {
    const { bot } = await newBot();
    expect((await session({ client_key: bot.client_key })).status).toBe(200);
    expect((await session({ client_key: bot.client_key }, { origin: 'https://anything.example' })).status).toBe(200);
  });

  test('allowed_origins set: a listed origin passes; unlisted, missing or look-alike origins get 403', async () => {
    const { bot } = await newBot({ allowed_origins: ['https://shop.example', 'http://localhost:5173'] });
    expect((await session({ client_key: bot.client_key }, { origin: 'https://shop.example' })).status).toBe(200);
    expect((await session({ client_key: bot.client_key }, { origin: 'http://localhost:5173' })).status).toBe(200);
    const before = await botItems(bot.id);
    for (const origin of [undefined, 'https://evil.example', 'https://shop.example.evil.example', 'http://shop.example', 'https://shop.example/', 'null']) {
      const res = await session({ client_key: bot.client_key, external_id: 'x' }, origin ? { origin } : {});
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
      expect(typeof res.body.error).toBe('string');
    }
    expect(await botItems(bot.id)).toEqual(before);
  });
});

describe('bot lookup and switches', () => {
  test('missing client_key → 400; unknown → 404', async () => {
    const missing = await session({ external_id: 'x' });
    expect(missing).toMatchObject({ status: 400, body: { error: expect.stringMatching(/client_key/) } });
    const unknown = await session({ client_key: 'cli_doesnotexist0000' });
    expect(unknown).toMatchObject({ status: 404, body: { error: expect.stringMatching(/bot/i) } });
  });

  test('bot turned off → 403; client interface disabled → 403; nothing written', async () => {
    const { bot: off } = await newBot({ enabled: false });
    const before = await botItems(off.id);
    expect(await session({ client_key: off.client_key, external_id: 'u' })).toMatchObject({
      status: 403,
      body: { error: expect.stringMatching(/turned off/) },
    });
    expect(await botItems(off.id)).toEqual(before);
    const { bot: noClient } = await newBot({ client_api_enabled: false });
    expect(await session({ client_key: noClient.client_key })).toMatchObject({
      status: 403,
      body: { error: expect.stringMatching(/client interface/) },
    });
  });
});

describe('field validation', () => {
  test.each([
    ['client_key not a string', { client_key: 42 }],
    ['external_id empty', { external_id: '' }],
    ['external_id too long', { external_id: 'x'.repeat(257) }],
    ['external_id not a string', { external_id: { $ne: null } }],
    ['first_name not a string', { first_name: ['a'] }],
    ['last_name too long', { last_name: 'y'.repeat(201) }],
  ])('%s → 400 with {error}, nothing written', async (_name, patch) => {
    const { bot } = await newBot();
    const before = await botItems(bot.id);
    const res = await session({ client_key: bot.client_key, ...patch });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect(await botItems(bot.id)).toEqual(before);
  });
});
