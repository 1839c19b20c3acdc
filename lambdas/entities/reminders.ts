// A chat's unread reminder item (flows/reminders.ts): which burst of replies is due, and whether it fired and
// with which replies. Its writes are conditional, so a redelivered record or job never gives a second reminder.
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, conditionMet, dynamo, isConditionFailed, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys } from './keys';

/** The reminder item (`entity: reminder`, one per chat). */
export interface ReminderItem {
  /** The burst's first reply: its id and time. */
  burst: string;
  burst_at: string;
  user_id: string;
  bot_id: string;
  due_at: string;
  ttl: number;
  /** When its job claimed it, and which queue message did (a redelivery of that message may claim it again). */
  fired_at?: string;
  fired_by?: string;
  /** The replies the firing carried. */
  included?: string[];
}

/** The codec: a reminder item as DynamoDB returns it. */
export const reminderFromItem = (raw: RawItem): ReminderItem => {
  const item = raw as Stored<ReminderItem>;
  return {
    burst: item.burst,
    burst_at: item.burst_at,
    user_id: item.user_id,
    bot_id: item.bot_id,
    due_at: item.due_at,
    ttl: item.ttl,
    ...optional(item, 'fired_at', 'fired_by', 'included'),
  };
};

/**
 * Puts the chat's reminder for a new burst, if the one there allows it (the condition: flows/reminders.ts
 * scheduleReminder says when). Refused, it returns the reminder that stays.
 */
export async function putReminder(
  chatId: string,
  item: ReminderItem,
  since: { lastRead: string; staleBefore: string },
): Promise<{ written: boolean; old?: ReminderItem }> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.reminder(chatId), entity: 'reminder', ...item },
        ConditionExpression:
          'attribute_not_exists(pk) OR (burst = :id AND attribute_not_exists(fired_at)) OR ' +
          '(burst_at < :at AND (burst_at <= :read OR (attribute_exists(included) AND NOT contains(included, :id)) OR ' +
          '(attribute_not_exists(included) AND fired_at < :at) OR due_at < :stale))',
        ExpressionAttributeValues: { ':id': item.burst, ':at': item.burst_at, ':read': since.lastRead, ':stale': since.staleBefore },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { written: true };
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    const old = conditionFailedItem(err);
    return { written: false, ...(old && { old: reminderFromItem(old) }) };
  }
}

/** Claims the burst's reminder for queue message `token`: false when it is another burst's, or claimed by another message. */
export function claimReminder(chatId: string, burst: string, token: string): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.reminder(chatId),
        // The first claim's time stays (SQS redelivering the same message claims it again).
        UpdateExpression: 'SET fired_at = if_not_exists(fired_at, :now), fired_by = :token',
        ConditionExpression: 'burst = :burst AND (attribute_not_exists(fired_at) OR fired_by = :token)',
        ExpressionAttributeValues: { ':burst': burst, ':now': new Date().toISOString(), ':token': token },
      }),
    ),
  );
}

/** Records the replies the claimed reminder carries (only while the claim is `token`'s). */
export async function recordIncluded(chatId: string, burst: string, token: string, ids: string[]): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.reminder(chatId),
      UpdateExpression: 'SET included = :ids',
      ConditionExpression: 'burst = :burst AND fired_by = :token',
      ExpressionAttributeValues: { ':ids': ids, ':burst': burst, ':token': token },
    }),
  );
}
