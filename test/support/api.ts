// Test client for the running local stack: real HTTP to the gateway, real DynamoDB Local for set-up and checks.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { call } from './http';
import { until } from './wait';
import type { Chat, Message, Session } from './contract';
import { createBot, updateBot, type BotSettings } from '../../lambdas/flows/bot-admin';
import { tableName } from '../../lambdas/aws/dynamo';

export { apiUrl, call, ISO_UTC, UUID, type CallOptions, type Reply } from './http';

export async function newBot(settings: Omit<BotSettings, 'name'> & { name?: string } = {}) {
  const { name = 'test bot', allowed_origins, widget, ...later } = settings;
  const { bot, secretKey } = await createBot({ name, allowed_origins, widget });
  // Switches, webhooks and identity verification are set on an existing bot.
  if (Object.keys(later).length) return { bot: (await updateBot(bot.id, later)).bot, secretKey };
  return { bot, secretKey };
}

export async function newSession(clientKey: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Session> {
  const res = await call<Session>('POST', '/api/client/session', { json: { client_key: clientKey, ...extra }, headers });
  if (res.status !== 200) throw new Error(`session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A fresh bot, a user session and one chat: the starting point of most tests. */
export async function userWithChat(botSettings = {}) {
  const { bot, secretKey } = await newBot(botSettings);
  const session = await newSession(bot.client_key);
  const token = session.session_token;
  const chat = await call('POST', '/api/client/chats', { token, json: { name: 'Support' } });
  if (chat.status !== 201) throw new Error(`chat failed: ${chat.status} ${JSON.stringify(chat.body)}`);
  return { bot, secretKey, session, token, userId: session.user.id, chatId: chat.body.id };
}

/** Every authenticated Client API endpoint on one chat, with a valid body where one is needed. */
export function clientEndpoints(chatId: string): [method: string, path: string, json?: object][] {
  return [
    ['GET', '/api/client/chats'],
    ['POST', '/api/client/chats', { name: 'x' }],
    ['GET', `/api/client/chats/${chatId}/messages`],
    ['POST', `/api/client/chats/${chatId}/messages`, { content: 'x' }],
    ['POST', `/api/client/chats/${chatId}/read`],
    ['POST', '/api/client/files'],
  ];
}

/** What the stream moves on a chat after a message is written (the publisher, a moment after the send). */
const STREAM_OWNED = ['updated_at', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'last_event', 'counted_seq', 'unread_msg_by_user', 'unread_msg_by_operator'];

/**
 * Every item a bot's requests can have written, in a stable order (to prove a rejected request wrote nothing).
 * A chat's stream-moved attributes are left out: an earlier message's count may land between two snapshots,
 * and a refused request writes no message for the stream to count (a message it wrote would show itself).
 */
export async function botItems(botId: string): Promise<Record<string, unknown>[]> {
  const items = await scanBotItems(botId);
  return items.map((i) => (i.entity === 'chat' ? Object.fromEntries(Object.entries(i).filter(([k]) => !STREAM_OWNED.includes(k))) : i));
}

async function scanBotItems(botId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  // The SDK's own client reads what the service wrote: the check does not go through the code under test.
  const sdk = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: process.env.AWS_REGION }));
  do {
    const out = await sdk.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'bot_id = :b OR id = :b',
        ExpressionAttributeValues: { ':b': botId },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  sdk.destroy();
  return items.sort((a, b) => `${String(a.pk)}|${String(a.sk)}`.localeCompare(`${String(b.pk)}|${String(b.sk)}`));
}

/**
 * Rate limits count in fixed one-minute windows: a burst that must land in one window starts early in a minute
 * (waits for the next one when fewer than 60 - `latestSecond` seconds are left of this one).
 */
export async function startOfRateWindow(latestSecond: number): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (intoMinute > latestSecond) await new Promise((r) => setTimeout(r, (61 - intoMinute) * 1000));
}

/**
 * Marks the end of the stream's work on a chat so far: sends a user message and waits until the stream has moved
 * the chat's activity to it. Records of one chat come in order, so by then every earlier record of the chat
 * was handed on (counted, published, sent to a webhook): a test that shows something did NOT happen waits for
 * this instead of for a while. Returns the marker message (it is in the history).
 */
export async function streamPassed(token: string, chatId: string): Promise<Message> {
  const sent = await call<Message>('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'marker' } });
  if (sent.status !== 201) throw new Error(`marker failed: ${sent.status} ${JSON.stringify(sent.body)}`);
  const activity = async () => (await call<Chat[]>('GET', '/api/client/chats', { token })).body.find((c) => c.id === chatId)?.updated_at;
  await until(async () => (await activity()) === sent.body.created_at, 15_000, 'the stream to count the marker message');
  return sent.body;
}
