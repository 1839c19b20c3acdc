// After a crash, the local WebSocket gateway restarts empty and every socket must reconnect (on AWS a crash of
// the functions leaves API Gateway's sockets open). Before the stream poller publishes the backlog, this waits
// for each channel that had subscribers to have one again, at most `maxMs`: their publications then find them.

/** Resolves once every channel subscribed before the restart has a socket of this gateway again, or after maxMs. */
export async function socketsBack(o: { liveConnections: Map<string, unknown>; maxMs: number; log: (line: string) => void; stopped: () => boolean }): Promise<void> {
  // Imported here, after applyLocalEnv: the handlers' config then sees the local endpoints.
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo, tableName } = await import('../../lambdas/aws/dynamo');
  const { channelSubscribers } = await import('../../lambdas/centrifuge/hub');
  const { keys } = await import('../../lambdas/entities/keys');
  const prefix = keys.subscribers('');
  const now = Date.now() / 1000;
  const waiting = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'begins_with(pk, :sub)',
        ExpressionAttributeValues: { ':sub': prefix },
        ProjectionExpression: 'pk, connection_id, #ttl',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      // A subscription past its expiry is a socket long gone, not one coming back.
      if (typeof item.ttl === 'number' && item.ttl < now) continue;
      if (!o.liveConnections.has(item.connection_id as string)) waiting.add((item.pk as string).slice(prefix.length));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  if (waiting.size === 0) return;
  const total = waiting.size;
  o.log(`stream poller: waiting up to ${o.maxMs} ms for the sockets of ${total} channel(s) to reconnect (LOCAL_STREAM_RESUME_WAIT_MS)`);
  const deadline = Date.now() + o.maxMs;
  while (waiting.size && Date.now() < deadline && !o.stopped()) {
    for (const channel of [...waiting]) {
      if ((await channelSubscribers(channel)).some((id) => o.liveConnections.has(id))) waiting.delete(channel);
    }
    if (waiting.size) await new Promise((r) => setTimeout(r, 100));
  }
  o.log(
    waiting.size
      ? `stream poller: ${total - waiting.size} of ${total} channel(s) have a socket again; reading on without the rest`
      : `stream poller: every socket is back (${total} channel(s))`,
  );
}
