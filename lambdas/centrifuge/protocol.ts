// The subset of the Centrifuge client protocol (JSON) that the `centrifuge` client needs: connect,
// subscribe (with stream positions and recovery, recovery.ts), unsubscribe, refresh (a new token before the
// connection's expires), pongs, and an empty async message as the page's keepalive (keepalive.ts). One frame holds
// commands joined by "\n"; replies are joined the same way.
// A command that fails throws; protocolError (./errors.ts) turns what happened into the client's code.
import type { VerifiedClaims } from '../adapters/tokens';
import { realtimeScope } from '../access/realtime';
import { bindConnection, disconnectSocket, refreshConnection, subscribe, unsubscribe } from './hub';
import { CODES, DisconnectError, protocolError } from './errors';
import { meterCommands } from './limits';
import { isKeepalive, takeFreeKeepalive } from './keepalive';
import { handOver, streamReply, streamRequest } from './recovery';
import { postToConnection } from '../aws/connections';

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
  subscribe?: { channel?: unknown; [field: string]: unknown };
  unsubscribe?: { channel?: unknown };
  refresh?: { token?: unknown };
  [method: string]: unknown;
}

/** What the commands of one frame share: what a connect earlier in the frame bound (no second read). */
interface FrameState {
  connectionId: string;
  connected?: { userId: string; exp: number };
  /** What runs once the frame's replies are sent: each subscribe's hand-over to live publications (recovery.ts). */
  afterReplies: (() => Promise<void>)[];
}

/**
 * The protocol's commands and the scope each acts in: a connect or a refresh carries a realtime token, whose
 * scope (lambdas/access/realtime.ts) is built before it acts; a subscribe or an unsubscribe acts for the user its
 * connection was bound to by a connect (an erasure closes the connection and deletes its record). In the order a
 * command naming several is taken as (the first of these it names).
 */
export const COMMANDS = { connect: 'realtime', subscribe: 'connection', unsubscribe: 'connection', refresh: 'realtime' } as const;
type Method = keyof typeof COMMANDS;

/** A realtime token, checked as a connect and a refresh check it. */
const checkedToken = async (token: unknown): Promise<VerifiedClaims> => (await realtimeScope('realtime', token)).claims;

/** How long before its token expires a connection is asked to refresh (its getToken may take a session's round trip). */
const REFRESH_LEAD_SECONDS = 30;

/** The connection's lease: the client sends a refresh with a new token once `ttl` seconds have passed. */
const lease = (claims: VerifiedClaims) => ({ expires: true, ttl: Math.max(1, claims.exp - Math.floor(Date.now() / 1000) - REFRESH_LEAD_SECONDS) });

async function connect(state: FrameState, token: unknown): Promise<Reply> {
  const claims = await checkedToken(token);
  await bindConnection(state.connectionId, claims);
  state.connected = { userId: claims.userId, exp: claims.exp };
  return { connect: { client: state.connectionId, version: SERVER_VERSION, ...lease(claims) } };
}

async function refresh(state: FrameState, token: unknown): Promise<Reply> {
  const claims = await checkedToken(token);
  await refreshConnection(state.connectionId, claims);
  return { refresh: { client: state.connectionId, version: SERVER_VERSION, ...lease(claims) } };
}

/** One command's reply body ({connect: …}, {subscribe: {}}, …); a failure throws. */
async function run(state: FrameState, cmd: Command, method: string): Promise<Reply> {
  switch (method) {
    case 'connect':
      return connect(state, cmd.connect?.token);
    case 'subscribe': {
      const sub = typeof cmd.subscribe === 'object' && cmd.subscribe !== null ? cmd.subscribe : {};
      // Its recovery fields checked before anything is written.
      const req = streamRequest(sub);
      // Not a string (a number, an object): no channel of anyone's, refused as one (String() of an object can throw).
      const channel = typeof sub.channel === 'string' ? sub.channel : '';
      await subscribe(state.connectionId, channel, state.connected, req.positions);
      // Without positions asked for, the channel's stream is neither made nor read (no write, no hand-over).
      if (!req.positions) return { subscribe: {} };
      const { reply, stream } = await streamReply(state.connectionId, channel, req);
      state.afterReplies.push(() => handOver(state.connectionId, channel, stream));
      return { subscribe: reply };
    }
    case 'unsubscribe': {
      const channel = cmd.unsubscribe?.channel;
      if (typeof channel === 'string' && channel.length <= 200) await unsubscribe(state.connectionId, channel);
      return { unsubscribe: {} };
    }
    case 'refresh':
      return refresh(state, cmd.refresh?.token);
    default:
      return { error: { code: CODES.methodNotFound, message: `method not found: ${method.slice(0, 50)}` } };
  }
}

/**
 * Runs every command of one frame in order and returns the reply frame ('' when nothing to say). A frame past
 * the socket's command budget, or a connect past the user's socket cap, closes the socket with a Disconnect
 * push instead (limits.ts), and nothing more of the frame runs.
 */
export async function handleFrame(connectionId: string, frame: string): Promise<string> {
  try {
    return await runFrame(connectionId, frame);
  } catch (err) {
    if (!(err instanceof DisconnectError)) throw err;
    await disconnectSocket(connectionId, err.disconnect);
    return '';
  }
}

async function runFrame(connectionId: string, frame: string): Promise<string> {
  // The keepalive: no reply, no DynamoDB call (its bound is per instance, keepalive.ts). Metered past it, it is
  // then taken as an unknown command without id (refused below, as any other async message).
  if (isKeepalive(frame.trim()) && takeFreeKeepalive(connectionId)) return '';
  const oversized = Buffer.byteLength(frame) > MAX_FRAME_BYTES;
  const lines = oversized ? [] : frame.split('\n').filter((l) => l.trim() !== '');
  await meterCommands(connectionId, Math.min(lines.length, MAX_COMMANDS_PER_FRAME));
  if (oversized) {
    return JSON.stringify(error(undefined, CODES.badRequest, `bad request: frames are at most ${MAX_FRAME_BYTES} bytes`));
  }
  const replies: Reply[] = [];
  const state: FrameState = { connectionId, afterReplies: [] };
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
    const method = (Object.keys(COMMANDS) as Method[]).find((m) => cmd[m] !== undefined) ?? methods[0];
    try {
      replies.push({ id, ...(await run(state, cmd, method)) });
    } catch (err) {
      replies.push({ id, error: protocolError(err) });
    }
  }
  const frameOut = replies.map((r) => JSON.stringify(r)).join('\n');
  if (!state.afterReplies.length) return frameOut;
  // A subscribe's hand-over must follow its reply on the socket: the replies go through the @connections API
  // (a route response is sent only after the function returns), then the hand-overs run.
  if (!(await postToConnection(connectionId, Buffer.from(frameOut)))) return '';
  for (const after of state.afterReplies) await after();
  return '';
}
