// The subset of the Centrifuge client protocol (JSON) that the `centrifuge` client needs: connect,
// subscribe, unsubscribe, pongs. One frame holds commands joined by "\n"; replies are joined the same way.
import { assertClientApiOpen, getBot } from './bots';
import { UnauthorizedError } from './errors';
import { verifyToken, type TokenClaims } from './tokens';
import { bindConnection, subscribe, unsubscribe } from './realtime';

/** Centrifugo error codes the client acts on (docs/realtime.md). */
export const CODES = {
  internal: 100, // < 100 or temporary → the client retries
  unauthorized: 101, // the client stops
  permissionDenied: 103, // the subscription fails, the connection stays
  methodNotFound: 104,
  badRequest: 107,
  tokenExpired: 109, // the client gets a new token and reconnects
} as const;

export const SERVER_VERSION = 'nexus-1';
/** Bounds the work one frame can cause. (API Gateway itself closes sockets sending frames over 128 KB with 1009.) */
export const MAX_COMMANDS_PER_FRAME = 20;
export const MAX_FRAME_BYTES = 16 * 1024;

type Reply = Record<string, unknown>;

const error = (id: number | undefined, code: number, message: string): Reply => ({
  ...(id !== undefined && { id }),
  error: { code, message },
});

interface Command {
  id?: number;
  connect?: { token?: unknown };
  subscribe?: { channel?: unknown };
  unsubscribe?: { channel?: unknown };
  [method: string]: unknown;
}

async function connect(connectionId: string, id: number | undefined, token: unknown): Promise<[Reply, TokenClaims?]> {
  if (typeof token !== 'string' || token === '') return [error(id, CODES.unauthorized, 'unauthorized: token required')];
  let claims: TokenClaims;
  try {
    claims = await verifyToken('realtime', token);
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
    const expired = /expired/.test(err.message);
    return [error(id, expired ? CODES.tokenExpired : CODES.unauthorized, expired ? 'token expired' : 'unauthorized')];
  }
  try {
    assertClientApiOpen(await getBot(claims.botId));
  } catch {
    return [error(id, CODES.unauthorized, 'unauthorized: bot unavailable')];
  }
  if (!(await bindConnection(connectionId, claims))) {
    return [error(id, CODES.unauthorized, 'unauthorized: connection belongs to another user')];
  }
  return [{ id, connect: { client: connectionId, version: SERVER_VERSION } }, claims];
}

/** Runs every command of one frame in order and returns the reply frame ('' when nothing to say). */
export async function handleFrame(connectionId: string, frame: string): Promise<string> {
  if (Buffer.byteLength(frame) > MAX_FRAME_BYTES) {
    return JSON.stringify(error(undefined, CODES.badRequest, `bad request: frames are at most ${MAX_FRAME_BYTES} bytes`));
  }
  const lines = frame.split('\n').filter((l) => l.trim() !== '');
  const replies: Reply[] = [];
  // A connect earlier in the same frame tells later commands who the user is without another read.
  let connectedUser: string | undefined;
  for (const [index, line] of lines.entries()) {
    if (index >= MAX_COMMANDS_PER_FRAME) {
      replies.push(error(undefined, CODES.badRequest, `at most ${MAX_COMMANDS_PER_FRAME} commands per frame`));
      break;
    }
    let cmd: Command;
    try {
      cmd = JSON.parse(line) as Command;
    } catch {
      replies.push(error(undefined, CODES.badRequest, 'bad request: not JSON'));
      continue;
    }
    if (typeof cmd !== 'object' || cmd === null || Array.isArray(cmd)) {
      replies.push(error(undefined, CODES.badRequest, 'bad request: a command is a JSON object'));
      continue;
    }
    const id = Number.isInteger(cmd.id) && (cmd.id as number) > 0 ? (cmd.id as number) : undefined;
    const methods = Object.keys(cmd).filter((k) => k !== 'id');
    if (methods.length === 0) continue; // {} is a pong
    if (id === undefined) {
      replies.push(error(undefined, CODES.badRequest, 'bad request: command without id'));
      continue;
    }
    if (cmd.connect !== undefined) {
      const [reply, claims] = await connect(connectionId, id, cmd.connect?.token);
      if (claims) connectedUser = claims.userId;
      replies.push(reply);
    } else if (cmd.subscribe !== undefined) {
      const result = await subscribe(connectionId, String(cmd.subscribe?.channel ?? ''), connectedUser);
      replies.push(
        result === 'ok'
          ? { id, subscribe: {} }
          : result === 'forbidden'
            ? error(id, CODES.permissionDenied, 'permission denied')
            : error(id, CODES.unauthorized, 'unauthorized: connect first'),
      );
    } else if (cmd.unsubscribe !== undefined) {
      const channel = cmd.unsubscribe?.channel;
      if (typeof channel === 'string' && channel.length <= 200) await unsubscribe(connectionId, channel);
      replies.push({ id, unsubscribe: {} });
    } else {
      replies.push(error(id, CODES.methodNotFound, `method not found: ${methods[0].slice(0, 50)}`));
    }
  }
  return replies.map((r) => JSON.stringify(r)).join('\n');
}
