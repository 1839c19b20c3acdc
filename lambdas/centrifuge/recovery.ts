// Centrifuge's stream positions and recovery on subscribe: the reply's position (offset, epoch), the publications
// a socket missed (`recover`), and the hand-over to live publications once the reply is sent, so that every
// positioned publication reaches the socket once, in order (docs/realtime.md "Recovery").
import { activateSubscriber, historyBetween, registerSubscriber, type ChannelStream } from '../entities/channel-stream';
import { InvalidInputError } from '../shared/errors';
import { postToConnection } from '../aws/connections';
import { publicationFrame } from './fanout';
import { DISCONNECTS, DisconnectError } from './errors';

/** What a subscribe command asks for, beyond its channel. */
export interface StreamRequest {
  /** The client wants positions (and recovery): `recoverable`, `positioned` or `recover`. */
  positions: boolean;
  /** Recover from this position (the client's last). */
  recover?: { offset: number; epoch: string };
}

const MAX_EPOCH_LENGTH = 64;

/** An offset as a client sends it: a non-negative integer, as a JSON number or a decimal string (a uint64 in protobuf's JSON). */
function offsetOf(v: unknown): number {
  if (v === undefined) return 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidInputError('offset must be a non-negative integer');
  return n;
}

/** The subscribe command's stream fields, checked: a wrong type is a bad request (107), never a crash. */
export function streamRequest(sub: Record<string, unknown>): StreamRequest {
  for (const flag of ['recover', 'recoverable', 'positioned'] as const) {
    if (sub[flag] !== undefined && typeof sub[flag] !== 'boolean') throw new InvalidInputError(`${flag} must be a boolean`);
  }
  const epoch = sub.epoch ?? '';
  if (typeof epoch !== 'string' || epoch.length > MAX_EPOCH_LENGTH) throw new InvalidInputError('epoch must be a string');
  const offset = offsetOf(sub.offset);
  const recover = sub.recover === true;
  return { positions: recover || sub.recoverable === true || sub.positioned === true, ...(recover && { recover: { offset, epoch } }) };
}

/** A publication as a subscribe reply or a push carries it. */
const pub = (p: { offset: number; data: unknown }) => ({ data: p.data, offset: p.offset });

/**
 * A positioned subscribe's reply fields, with the socket registered (no live publication yet: handOver starts them).
 * Recovered when the epoch matches (an empty one matches any, as Centrifuge has it) and every publication after
 * the client's offset up to the position is still kept; then the reply carries them, and the offset recovered from
 * (each publication moves the client's position on). Otherwise recovered is false, with no publications and the
 * current position: the client reloads its state (docs/realtime.md).
 */
export async function streamReply(connectionId: string, channel: string, req: StreamRequest): Promise<{ reply: Record<string, unknown>; stream: ChannelStream }> {
  const stream = await registerSubscriber(channel, connectionId);
  const position = { recoverable: true, positioned: true, epoch: stream.epoch };
  if (!req.recover) return { reply: { ...position, offset: stream.offset }, stream };
  const { offset, epoch } = req.recover;
  const missed = (epoch === '' || epoch === stream.epoch) && offset <= stream.offset ? await historyBetween(channel, stream.epoch, offset, stream.offset) : undefined;
  const recovered = missed !== undefined && missed.length === stream.offset - offset;
  return {
    reply: recovered
      ? { ...position, offset, recovered: true, was_recovering: true, ...(missed.length > 0 && { publications: missed.map(pub) }) }
      : { ...position, offset: stream.offset, recovered: false, was_recovering: true },
    stream,
  };
}

/** How many times a hand-over sends what came meanwhile before it gives up (a channel busier than its subscribe). */
const HAND_OVER_TRIES = 5;

/**
 * After the subscribe reply is sent: the socket gets live publications from the position the reply ended at. What
 * was positioned meanwhile is pushed first, from the history, then live publications start after it; a channel
 * that keeps moving, or whose history went (an erasure), closes the socket with 3010: it reconnects and recovers.
 */
export async function handOver(connectionId: string, channel: string, stream: ChannelStream): Promise<void> {
  let offset = stream.offset;
  for (let tries = 1; tries <= HAND_OVER_TRIES; tries++) {
    const now = await activateSubscriber(channel, connectionId, stream.epoch, offset);
    if (now === 'active' || now === 'gone') return;
    const meanwhile = await historyBetween(channel, stream.epoch, offset, now.offset);
    if (meanwhile.length !== now.offset - offset) break;
    const frame = meanwhile.map((p) => publicationFrame(channel, p.data, p.offset)).join('\n');
    if (!(await postToConnection(connectionId, Buffer.from(frame)))) return;
    offset = now.offset;
  }
  throw new DisconnectError(DISCONNECTS.insufficientState);
}
