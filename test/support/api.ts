// Test client for the running local stack: real HTTP to the gateway, real DynamoDB Local for set-up and checks.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createBot, updateBot, type BotSettings } from '../../lambdas/core/bots';
import { dynamo, tableName } from '../../lambdas/core/aws';

export const apiUrl = (): string => {
  const url = process.env.TEST_API_URL;
  if (!url) throw new Error('TEST_API_URL is not set: run the tests through jest (global set-up starts the stack)');
  return url;
};

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  /** Another stack than the run's shared one (tests that start their own). */
  base?: string;
  token?: string;
  json?: unknown;
  body?: string | FormData | Buffer;
  headers?: Record<string, string>;
}

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch((opts.base ?? apiUrl()) + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: the assertion on it will say so */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export async function newBot(settings: Omit<BotSettings, 'name'> & { name?: string } = {}) {
  const { bot, secretKey } = await createBot({ name: 'test bot', ...settings });
  if (settings.enabled === false || settings.client_api_enabled === false) {
    return { bot: (await updateBot(bot.id, settings)).bot, secretKey };
  }
  return { bot, secretKey };
}

export async function newSession(clientKey: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await call('POST', '/api/client/session', { json: { client_key: clientKey, ...extra }, headers });
  if (res.status !== 200) throw new Error(`session failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { session_token: string; expires_at: string; user: { id: string; external_id: string; bot_id: string; first_name: string; last_name: string }; widget: unknown };
}

/** A fresh bot, a user session and one chat: the starting point of most tests. */
export async function userWithChat(botSettings = {}) {
  const { bot, secretKey } = await newBot(botSettings);
  const session = await newSession(bot.client_key);
  const token = session.session_token;
  const chat = await call('POST', '/api/client/chats', { token, json: { name: 'Support' } });
  if (chat.status !== 201) throw new Error(`chat failed: ${chat.status} ${JSON.stringify(chat.body)}`);
  return { bot, secretKey, session, token, userId: session.user.id, chatId: chat.body.id as string };
}

/** Every item a bot's requests can have written, in a stable order (to prove a rejected request wrote nothing). */
export async function botItems(botId: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo().send(
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
  return items.sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
}

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
