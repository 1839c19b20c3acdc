// End users of a bot: found or created by external id in one conditional upsert (one round trip either way).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../aws/dynamo';
import { keys } from './keys';
import { newUuid } from '../shared/ids';

export interface User {
  id: string;
  external_id: string;
  bot_id: string;
  first_name: string;
  last_name: string;
  image_url: string | null;
  status: 'active';
}

export interface UserNames {
  first_name?: string;
  last_name?: string;
}

/**
 * Creates the user when the external id is new, otherwise returns it; given names overwrite the stored ones.
 * `if_not_exists` makes concurrent first sessions of one external id agree on a single user id.
 */
export async function findOrCreateUser(botId: string, externalId: string, names: UserNames): Promise<User> {
  const now = new Date().toISOString();
  const nameExpr = (field: 'first_name' | 'last_name') =>
    names[field] !== undefined ? `${field} = :${field}` : `${field} = if_not_exists(${field}, :empty)`;
  const out = await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.user(botId, externalId),
      UpdateExpression: [
        'SET entity = :entity',
        'id = if_not_exists(id, :id)',
        'external_id = :ext',
        'bot_id = :bot',
        nameExpr('first_name'),
        nameExpr('last_name'),
        'image_url = if_not_exists(image_url, :null)',
        '#status = if_not_exists(#status, :active)',
        'created_at = if_not_exists(created_at, :now)',
        'last_seen_at = :now',
      ].join(', '),
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':entity': 'user',
        ':id': newUuid(),
        ':ext': externalId,
        ':bot': botId,
        ...((names.first_name === undefined || names.last_name === undefined) && { ':empty': '' }),
        ':null': null,
        ':active': 'active',
        ':now': now,
        ...(names.first_name !== undefined && { ':first_name': names.first_name }),
        ...(names.last_name !== undefined && { ':last_name': names.last_name }),
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const item = out.Attributes as Record<string, unknown>;
  return {
    id: item.id as string,
    external_id: item.external_id as string,
    bot_id: item.bot_id as string,
    first_name: item.first_name as string,
    last_name: item.last_name as string,
    image_url: (item.image_url as string | null) ?? null,
    status: 'active',
  };
}
