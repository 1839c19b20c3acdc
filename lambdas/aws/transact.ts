// One TransactWriteItems whose failed conditions come back as data: the index of the first item whose
// condition failed (items are ordered by which failure should win), or -1 when everything was written.
// The SDK gives each call a ClientRequestToken and keeps it across its retries, so a transaction that
// committed but whose reply was lost is not applied twice.
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from './dynamo';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export async function transactWrite(items: TransactItem[]): Promise<number> {
  try {
    await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
    return -1;
  } catch (err) {
    if (!(err instanceof TransactionCanceledException)) throw err;
    const index = (err.CancellationReasons ?? []).findIndex((r) => r.Code === 'ConditionalCheckFailed');
    if (index < 0) throw err; // cancelled for another reason (a conflict, throttling): not ours to interpret
    return index;
  }
}
