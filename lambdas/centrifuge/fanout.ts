// Fan-out: a publication posted to the sockets of its channel through the @connections API, a positioned one to
// those whose live publications start below its offset (recovery.ts hands a socket over to them).
import { config } from '../shared/config';
import { postToConnection } from '../aws/connections';
import { PENDING_STALE_SECONDS, dropSubscriber, type Positioned } from '../entities/channel-stream';
import { disconnectSocket, removeConnection, unsubscribe, type Audience } from './hub';
import { channelUser } from './channels';
import { DISCONNECTS, disconnectFrame } from './errors';

const EXPIRED_FRAME = disconnectFrame(DISCONNECTS.tokenExpired);

/** A Centrifuge publication frame for a channel; a positioned one carries its offset. */
export const publicationFrame = (channel: string, data: unknown, offset?: number): string =>
  JSON.stringify({ push: { channel, pub: { data, ...(offset !== undefined && { offset }) } } });

const LIMIT_FRAME = disconnectFrame(DISCONNECTS.connectionLimit);

type Socket = Audience['sockets'][number];

/**
 * Who gets a positioned publication live: each socket whose live publications start below its offset (the
 * stream as its position moved says so, entities/channel-stream.ts). Not a socket whose subscribe reply is still
 * on its way (it recovers the publication, or its subscribe sends it after the reply), nor one whose reply
 * carried it. A subscription made before streams were kept has no entry and gets every publication. Sockets
 * subscribed since the audience was read come first (the newest); `stale` are subscribes that never finished.
 */
function liveTargets(sockets: Socket[], at: Positioned): { all: Socket[]; targets: Socket[]; stale: string[] } {
  const { from } = at.stream;
  const known = new Set(sockets.map((s) => s.id));
  const now = Math.floor(Date.now() / 1000);
  const newer: Socket[] = [...from.keys()].filter((id) => !known.has(id)).map((id) => ({ id, positioned: true }));
  const all = [...newer, ...sockets];
  const [targets, stale]: [Socket[], string[]] = [[], []];
  for (const s of all) {
    const start = from.get(s.id);
    if (start === undefined ? !s.positioned : start >= 0 && start < at.offset) targets.push(s);
    else if (start !== undefined && start < 0 && now + start > PENDING_STALE_SECONDS) stale.push(s.id);
  }
  return { all, targets, stale };
}

/**
 * Posts a publication to every socket of the channel's audience (channelAudienceOf) in parallel (a positioned one
 * to those liveTargets picks), and returns the sockets still subscribed. A gone socket (410) is removed and is not
 * an error; any other failure is thrown after all posts settle, so the record is retried.
 */
export async function publish(channel: string, audience: Socket[], data: unknown, at?: Positioned): Promise<Socket[]> {
  const { all, targets: sockets, stale } = at ? liveTargets(audience, at) : { all: audience, targets: audience, stale: [] };
  const owner = channelUser(channel);
  // A subscribe that died between its reply and its activation: the socket reconnects, and recovers.
  await Promise.all(stale.map((id) => disconnectSocket(id, DISCONNECTS.insufficientState, owner)));
  if (!sockets.length) {
    await forgetEntries(channel, new Set(stale), audience, at);
    return all.filter((s) => !stale.includes(s.id));
  }
  const frame = Buffer.from(publicationFrame(channel, data, at?.offset));
  const now = Math.floor(Date.now() / 1000);
  // A message goes to at most MAX_SOCKETS_PER_USER sockets, the newest subscribed: more are subscribed only
  // while connects of the same moment close the oldest (limits.ts).
  const cap = config().limits.socketsPerUser;
  const results = await Promise.allSettled(
    sockets.map(async ({ id, exp }, newest): Promise<boolean> => {
      // Its token expired without a refresh: told so instead (it reconnects with a new one), and unsubscribed.
      // Past the cap: told 3504 instead (the client stays disconnected), and unsubscribed.
      const expired = exp !== undefined && exp <= now;
      const over = cap > 0 && newest >= cap;
      if (!(await postToConnection(id, over ? LIMIT_FRAME : expired ? EXPIRED_FRAME : frame))) await removeConnection(id, owner);
      else if (expired || over) await unsubscribe(id, channel);
      else return true;
      return false;
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const left = new Set([...stale, ...sockets.filter((_, i) => !(results[i] as PromiseFulfilledResult<boolean>).value).map((s) => s.id)]);
  await forgetEntries(channel, left, audience, at);
  return all.filter((s) => !left.has(s.id));
}

/**
 * The stream entries of sockets that left, where removeConnection did not drop them: it does so only through a
 * positioned subscription read with the audience, and an entry can outlive one (expired, or made again without
 * positions).
 */
async function forgetEntries(channel: string, left: Set<string>, audience: Socket[], at: Positioned | undefined): Promise<void> {
  if (!at) return;
  const dropped = new Set(audience.filter((s) => s.positioned).map((s) => s.id));
  await Promise.all([...left].filter((id) => at.stream.from.has(id) && !dropped.has(id)).map((id) => dropSubscriber(channel, id)));
}
