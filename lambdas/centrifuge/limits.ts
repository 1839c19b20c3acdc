// Per-user and per-socket realtime limits (docs/realtime.md "Limits"): a user's sockets past the newest
// MAX_SOCKETS_PER_USER are closed, oldest first, with 3504; a socket sending more than
// RATE_SOCKET_COMMANDS_PER_MINUTE commands is closed with 3013.
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../aws/dynamo';
import { connectionRefs, type SocketItem } from '../entities/connections';
import { keys } from '../entities/keys';
import { consumeRate } from '../policies/rate';
import { config } from '../shared/config';
import { RateLimitedError } from '../shared/errors';
import { disconnectSocket } from './hub';
import { DISCONNECTS, DisconnectError } from './errors';

/**
 * The user's sockets, oldest first: the references $connect wrote (removed by $disconnect, by a post that finds
 * the socket gone, and here). One strongly consistent Query (a few hundred bytes: one read unit); none when the
 * cap is off.
 */
export async function userSockets(userId: string): Promise<string[]> {
  if (config().limits.socketsPerUser <= 0) return [];
  const at = (r: SocketItem) => `${r.created_at ?? ''}#${r.connection_id}`;
  return (await connectionRefs(userId, 'connection_id, created_at')).sort((a, b) => at(a).localeCompare(at(b))).map((r) => r.connection_id);
}

/**
 * After a connect: the user's sockets (`sockets`, read beside the bind) past the newest MAX_SOCKETS_PER_USER get
 * the Disconnect push 3504 and are closed. Closing the oldest rather than refusing the newest: the socket a
 * user just opened is the one in use, and a socket that died without $disconnect (a phone that lost its
 * network; API Gateway may not notice for minutes) can never lock its user out, it is simply the oldest. Each
 * is closed by the one connect that deletes its reference, so connects at the same moment do not close a
 * socket twice. Throws DisconnectError when this socket is itself among them (newer ones opened meanwhile).
 */
export async function enforceSocketCap(userId: string, connectionId: string, sockets: string[]): Promise<void> {
  const cap = config().limits.socketsPerUser;
  if (cap <= 0 || sockets.length <= cap) return;
  const excess = sockets.slice(0, sockets.length - cap);
  await Promise.all(
    excess
      .filter((id) => id !== connectionId)
      .map(async (id) => {
        const claimed = await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.connectionRef(userId, id), ReturnValues: 'ALL_OLD' }));
        if (claimed.Attributes) await disconnectSocket(id, DISCONNECTS.connectionLimit, userId);
      }),
  );
  if (excess.includes(connectionId)) throw new DisconnectError(DISCONNECTS.connectionLimit);
}

/**
 * Counts a frame's commands (at least one: a frame is an invocation) against its socket's budget for this
 * minute: one conditional UpdateItem, one write unit. Past the budget the frame is not run and the socket is
 * closed with 3013 (DisconnectError).
 */
export async function meterCommands(connectionId: string, commands: number): Promise<void> {
  const perMinute = config().limits.socketCommandsPerMinute;
  if (perMinute <= 0) return;
  const cost = Math.max(1, commands);
  if (cost > perMinute) throw new DisconnectError(DISCONNECTS.tooManyRequests);
  try {
    await consumeRate({ name: 'socket_commands', subject: connectionId, perMinute, cost });
  } catch (err) {
    if (err instanceof RateLimitedError) throw new DisconnectError(DISCONNECTS.tooManyRequests);
    throw err;
  }
}
