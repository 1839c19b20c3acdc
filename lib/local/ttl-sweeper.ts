// DynamoDB Local keeps items past their TTL; AWS deletes them (within a few days) and the stream carries each
// deletion as a REMOVE. The local stack does the same every `intervalMs`: a Scan for items whose `ttl` has
// passed, each deleted on the condition that it still has, so the stream poller hands the REMOVEs to the
// consumers as on AWS (an expired upload's or export's object is then deleted).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

export interface TtlSweeper {
  /** One sweep now (tests); resolves with how many items it deleted. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

export function startTtlSweeper(o: { endpoint: string; region: string; tableName: string; intervalMs: number; log: (line: string) => void }): TtlSweeper {
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: o.endpoint, region: o.region }));
  let running: Promise<number> | undefined;
  const sweep = (): Promise<number> =>
    (running ??= (async () => {
      const now = Math.floor(Date.now() / 1000);
      let deleted = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const page = await ddb.send(
          new ScanCommand({
            TableName: o.tableName,
            FilterExpression: '#ttl < :now',
            ProjectionExpression: 'pk, sk',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':now': now },
            ExclusiveStartKey: start,
          }),
        );
        for (const key of page.Items ?? []) {
          try {
            await ddb.send(
              new DeleteCommand({
                TableName: o.tableName,
                Key: key,
                ConditionExpression: '#ttl < :now',
                ExpressionAttributeNames: { '#ttl': 'ttl' },
                ExpressionAttributeValues: { ':now': now },
              }),
            );
            deleted++;
          } catch (err) {
            if (!(err instanceof ConditionalCheckFailedException)) throw err; // its TTL moved meanwhile
          }
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return deleted;
    })().finally(() => (running = undefined)));
  const timer = setInterval(() => {
    sweep().catch((err) => o.log(`ttl sweep failed (tried again in ${o.intervalMs} ms): ${(err as Error).message}`));
  }, o.intervalMs);
  timer.unref();
  return {
    sweep,
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => undefined);
      ddb.destroy();
    },
  };
}
