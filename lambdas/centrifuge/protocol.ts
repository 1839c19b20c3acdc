// The subset of the Centrifuge client protocol (JSON) that the `centrifuge` client needs: connect,
// subscribe, unsubscribe, pongs. One frame holds commands joined by "\n"; replies are joined the same way.
// A command that fails throws; protocolError (./errors.ts) turns what happened into the client's code.
import { openBotOfToken } from '../domain/bots';
import { UnauthenticatedError } from '../shared/errors';
import { verifyToken, type TokenClaims } from '../domain/tokens';
import { assertNotRevoked } from '../domain/revocation';
import { bindConnection, subscribe, unsubscribe } from './hub';
import { CODES, protocolError } from './errors';

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

/** What the commands of one frame share: the user a connect earlier in the frame bound (no second read). */
interface FrameState {
  connectionId: string;
  connectedUser?: string;
}

async function connect(state: FrameState, token: unknown): Promise<Reply> {
  if (typeof token !== 'string' || token === '') throw new UnauthenticatedError('token required');
  const claims: TokenClaims = await verifyToken('realtime', token);
  await Promise.all([openBotOfToken('realtime', claims.botId), assertNotRevoked(claims.userId)]);
  await bindConnection(state.connectionId, claims);
  state.connectedUser = claims.userId;
  return { connect: { client: state.connectionId, version: SERVER_VERSION } };
}

/** One command's reply body ({connect: …}, {subscribe: {}}, …); a failure throws. */
async function run(state: FrameState, cmd: Command, method: string): Promise<Reply> {
  switch (method) {
    case 'connect':
      return connect(state, cmd.connect?.token);
    case 'subscribe': {
      // Not a string (a number, an object): no channel of anyone's, refused as one (String() of an object can throw).
      const channel = cmd.subscribe?.channel;
      await subscribe(state.connectionId, typeof channel === 'string' ? channel : '', state.connectedUser);
      return { subscribe: {} };
    }
    case 'unsubscribe': {
      const channel = cmd.unsubscribe?.channel;
      if (typeof channel === 'string' && channel.length <= 200) await unsubscribe(state.connectionId, channel);
      return { unsubscribe: {} };
    }
    default:
      return { error: { code: CODES.methodNotFound, message: `method not found: ${method.slice(0, 50)}` } };
  }
}

/** Runs every command of one frame in order and returns the reply frame ('' when nothing to say). */
export async function handleFrame(connectionId: string, frame: string): Promise<string> {
  if (Buffer.byteLength(frame) > MAX_FRAME_BYTES) {
    return JSON.stringify(error(undefined, CODES.badRequest, `bad request: frames are at most ${MAX_FRAME_BYTES} bytes`));
  }
  const lines = frame.split('\n').filter((l) => l.trim() !== '');
  const replies: Reply[] = [];
  const state: FrameState = { connectionId };
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
    // The method the client means: the first of those we know, else the first it sent.
    const method = ['connect', 'subscribe', 'unsubscribe'].find((m) => cmd[m] !== undefined) ?? methods[0];
    try {
      replies.push({ id, ...(await run(state, cmd, method)) });
    } catch (err) {
      replies.push({ id, error: protocolError(err) });
    }
  }
  return replies.map((r) => JSON.stringify(r)).join('\n');
}
