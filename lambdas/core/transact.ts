// One TransactWriteItems whose failed conditions come back as data: the index of the first item whose
// condition failed (items are ordered by which failure should win), or -1 when everything was written.
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { dynamo } from './aws';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export async function transactWrite(items: TransactItem[]): Promise<number> {
  try {
    await dynamo().send(new TransactWriteCommand({ TransactItems: items }));
    return -1;
  } catch (err) {
    if (!(err instanceof TransactionCanceledException)) throw err;
    const index = (err.CancellationReasons ?? []).findIndex((r) => r.Code === 'ConditionalCheckFailed');
    if (index < 0) throw err; // cancelled for another reason (a conflict, throttling): not ours to interpret
    return index;
  }
}
