// POST /api/client/session: find or create the user by external_id and hand out a session token.
import { scoped } from '../http/scoped';
import { parse } from '../http/validate';
import { SessionBody } from '../http/params';
import { assertClientApiOpen, assertIdentity } from '../policies/bot-access';
import { getBotByClientKey } from '../entities/bots';
import { ForbiddenError } from '../shared/errors';
import { findOrCreateUser } from '../entities/users';
import { signToken } from '../adapters/tokens';
import { realtimeBlock } from '../centrifuge/channels';
import { config } from '../shared/config';
import { newUuid } from '../shared/ids';
import { consumeRate } from '../policies/rate';

// Public: the client key names the bot; its switches, origins and identity rules are checked here.
export const handler = scoped('public', async (_scope, _input, req) => {
  const body = parse(SessionBody, req.json());
  // Per IP, before any check that could be guessed at (client keys, identity hashes).
  await consumeRate({ name: 'sessions', subject: req.sourceIp(), perMinute: config().limits.sessionsPerIpPerMinute });
  const bot = assertClientApiOpen(await getBotByClientKey(body.client_key));
  if (bot.allowed_origins.length > 0) {
    const origin = req.header('origin');
    if (!origin) throw new ForbiddenError('This bot only accepts sessions from its allowed origins; the request has no Origin');
    if (!bot.allowed_origins.includes(origin)) throw new ForbiddenError(`Origin ${origin} is not allowed for this bot`);
  }
  assertIdentity(bot, body.external_id ?? undefined, body.external_id_hash ?? undefined);
  const user = await findOrCreateUser(bot.id, body.external_id ?? `visitor_${newUuid()}`, {
    first_name: body.first_name ?? undefined,
    last_name: body.last_name ?? undefined,
  });
  Object.assign(req.logKeys, { bot_id: bot.id, user_id: user.id });
  const expiresAt = new Date(Date.now() + config().sessionTtlSeconds * 1000);
  const claims = { userId: user.id, botId: bot.id, externalId: user.external_id };
  return {
    status: 200,
    body: {
      session_token: await signToken('session', claims, expiresAt),
      expires_at: expiresAt.toISOString(),
      user,
      realtime: await realtimeBlock(claims, expiresAt),
      widget: bot.widget,
    },
  };
});
