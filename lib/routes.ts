// The ONE route table: CDK makes one Lambda + route per entry, the local HTTP gateway serves the same entries.
// `dynamodb`/`s3` list exactly the IAM actions a handler uses; CDK grants nothing else.
import type { FunctionDef, Scoped } from './function-def';

export * from './function-def';
export * from './ws-routes';

export interface RouteDef extends FunctionDef, Scoped {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** API Gateway path template, e.g. /api/client/chats/{chat_id}/messages */
  path: string;
}

const CLIENT = '/api/client';
const BOT = '/api/bot';

export const ROUTES: RouteDef[] = [
  {
    id: 'create_session',
    scope: 'public',
    method: 'POST',
    path: `${CLIENT}/session`,
    entry: 'lambdas/client/create-session.ts',
    jwt: true,
    realtimeUrl: true,
    // PutItem: a new user's reference by id. While the data move runs (flows/migrate.ts), a user still at its
    // legacy key is moved in one TransactWriteItems: PutItem at the new key, DeleteItem at the old one.
    dynamodb: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem'],
  },
  {
    id: 'list_chats',
    scope: 'session:read',
    method: 'GET',
    path: `${CLIENT}/chats`,
    entry: 'lambdas/client/list-chats.ts',
    jwt: true,
    dynamodb: ['GetItem', 'Query'],
    rateCounters: true,
  },
  {
    id: 'create_chat',
    scope: 'session:create',
    method: 'POST',
    path: `${CLIENT}/chats`,
    entry: 'lambdas/client/create-chat.ts',
    jwt: true,
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem'],
  },
  {
    id: 'list_messages',
    scope: 'session-chat:read',
    method: 'GET',
    path: `${CLIENT}/chats/{chat_id}/messages`,
    entry: 'lambdas/client/list-messages.ts',
    jwt: true,
    dynamodb: ['GetItem', 'Query'],
    rateCounters: true,
    s3: ['s3:GetObject'],
  },
  {
    id: 'create_message',
    scope: 'session-chat:create',
    method: 'POST',
    path: `${CLIENT}/chats/{chat_id}/messages`,
    entry: 'lambdas/client/create-message.ts',
    jwt: true,
    // DeleteItem: a keyed send refused by the rate limit gives its key back.
    dynamodb: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    s3: ['s3:GetObject'],
  },
  {
    id: 'mark_read',
    scope: 'session-chat:update',
    method: 'POST',
    path: `${CLIENT}/chats/{chat_id}/read`,
    entry: 'lambdas/client/mark-read.ts',
    jwt: true,
    // BatchGetItem: the chat with the erasure check; GetItem: its pointer, to tell another user's chat (403).
    dynamodb: ['GetItem', 'BatchGetItem', 'UpdateItem'],
  },
  {
    // The visitor answers an interactive message; the stream publishes the answered version.
    id: 'answer_message',
    scope: 'session-chat:update',
    method: 'POST',
    path: `${CLIENT}/chats/{chat_id}/messages/{message_id}/response`,
    entry: 'lambdas/client/answer-message.ts',
    jwt: true,
    // BatchGetItem: the chat with the erasure check; GetItem: its pointer and the message; UpdateItem: the answer.
    dynamodb: ['GetItem', 'BatchGetItem', 'UpdateItem'],
    s3: ['s3:GetObject'],
  },
  {
    id: 'upload_file',
    scope: 'session:create',
    method: 'POST',
    path: `${CLIENT}/files`,
    entry: 'lambdas/client/upload-file.ts',
    jwt: true,
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem'],
    s3: ['s3:PutObject', 's3:GetObject'],
  },
  {
    // A direct upload: a pending file and a presigned POST (the bytes go from the browser straight to S3).
    id: 'create_upload',
    scope: 'session:create',
    method: 'POST',
    path: `${CLIENT}/files/uploads`,
    entry: 'lambdas/client/create-upload.ts',
    jwt: true,
    // BatchWriteItem: the pending file and the user's reference to it.
    dynamodb: ['GetItem', 'BatchWriteItem', 'UpdateItem'],
    s3: ['s3:PutObject'],
  },
  {
    id: 'get_file',
    scope: 'session:read',
    method: 'GET',
    path: `${CLIENT}/files/{file_id}`,
    entry: 'lambdas/client/get-file.ts',
    jwt: true,
    dynamodb: ['GetItem'],
    rateCounters: true,
    s3: ['s3:GetObject'],
  },
  // Bot API: server to server, `Authorization: Bearer <secret_key>`; no session tokens involved.
  {
    id: 'bot_list_chats',
    scope: 'bot',
    method: 'GET',
    path: `${BOT}/chats`,
    entry: 'lambdas/bot/list-chats.ts',
    dynamodb: ['GetItem', 'Query', 'BatchGetItem'],
    index: true,
  },
  {
    id: 'bot_list_messages',
    scope: 'bot-chat:read',
    method: 'GET',
    path: `${BOT}/chats/{chat_id}/messages`,
    entry: 'lambdas/bot/list-messages.ts',
    dynamodb: ['GetItem', 'Query'],
    s3: ['s3:GetObject'],
  },
  {
    id: 'bot_create_message',
    scope: 'bot-chat:create',
    method: 'POST',
    path: `${BOT}/chats/{chat_id}/messages`,
    entry: 'lambdas/bot/create-message.ts',
    dynamodb: ['GetItem', 'BatchGetItem', 'PutItem'],
    s3: ['s3:GetObject'],
  },
  {
    // A bot or operator edits its own message (a streamed answer); the stream publishes the new version.
    id: 'bot_edit_message',
    scope: 'bot-chat:update',
    method: 'PATCH',
    path: `${BOT}/chats/{chat_id}/messages/{message_id}`,
    entry: 'lambdas/bot/edit-message.ts',
    dynamodb: ['GetItem', 'UpdateItem'],
    s3: ['s3:GetObject'],
  },
  {
    // The bot side is typing: one small item per chat and sender, published by the stream (at most every 2 s).
    id: 'bot_typing',
    scope: 'bot-chat:create',
    method: 'POST',
    path: `${BOT}/chats/{chat_id}/typing`,
    entry: 'lambdas/bot/typing.ts',
    dynamodb: ['GetItem', 'UpdateItem'],
  },
  {
    id: 'bot_mark_read',
    scope: 'bot-chat:update',
    method: 'POST',
    path: `${BOT}/chats/{chat_id}/read`,
    entry: 'lambdas/bot/mark-read.ts',
    dynamodb: ['GetItem', 'UpdateItem'],
  },
  {
    id: 'bot_upload_file',
    scope: 'bot-chat:create',
    method: 'POST',
    path: `${BOT}/files`,
    entry: 'lambdas/bot/upload-file.ts',
    dynamodb: ['GetItem', 'PutItem'],
    s3: ['s3:PutObject', 's3:GetObject'],
  },
  {
    id: 'bot_create_upload',
    scope: 'bot-chat:create',
    method: 'POST',
    path: `${BOT}/files/uploads`,
    entry: 'lambdas/bot/create-upload.ts',
    dynamodb: ['GetItem', 'BatchWriteItem'],
    s3: ['s3:PutObject'],
  },
  // A visitor's data on request (docs/user-data.md): find, erase (a background task), the task's state.
  {
    id: 'bot_find_user',
    scope: 'bot',
    method: 'GET',
    path: `${BOT}/users`,
    entry: 'lambdas/bot/find-user.ts',
    dynamodb: ['GetItem'],
  },
  {
    id: 'bot_get_user',
    scope: 'bot',
    method: 'GET',
    path: `${BOT}/users/{user_id}`,
    entry: 'lambdas/bot/get-user.ts',
    dynamodb: ['GetItem'],
  },
  {
    // Revokes the user's tokens and closes its sockets at once; the task worker erases the rest.
    id: 'bot_delete_user',
    scope: 'bot',
    method: 'DELETE',
    path: `${BOT}/users/{user_id}`,
    entry: 'lambdas/bot/delete-user.ts',
    // Query and BatchWriteItem: the user's sockets found and their records deleted.
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'BatchWriteItem'],
    closeConnections: true,
    queues: ['tasks'],
  },
  {
    id: 'bot_export_user',
    scope: 'bot',
    method: 'POST',
    path: `${BOT}/users/{user_id}/export`,
    entry: 'lambdas/bot/export-user.ts',
    dynamodb: ['GetItem', 'PutItem'],
    queues: ['tasks'],
  },
  {
    // s3:GetObject: a completed export's presigned download URL.
    id: 'bot_get_task',
    scope: 'bot',
    method: 'GET',
    path: `${BOT}/tasks/{task_id}`,
    entry: 'lambdas/bot/get-task.ts',
    dynamodb: ['GetItem'],
    s3: ['s3:GetObject'],
  },
];

/** Every request no route matches (the HTTP API's default route). */
export const NOT_FOUND: FunctionDef & Scoped = { id: 'not_found', scope: 'public', entry: 'lambdas/client/not-found.ts', dynamodb: [] };

/**
 * CORS of the HTTP API (and the local gateway's preflight replies): any origin (the bot's allowed_origins is
 * checked by session creation itself), and every request header a handler reads that a browser must ask
 * for: the token, the body's type, and a send's Idempotency-Key (Origin is the browser's own); and the
 * response headers a page may read.
 */
export const CORS = {
  allowOrigins: ['*'],
  allowMethods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'] as const,
  allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
  // Response headers a page on another origin may read besides the few the Fetch standard always shows: the
  // back-off of a 429 or a 503.
  exposeHeaders: ['retry-after'],
  // A preflight is an API request billed like any other: browsers keep the answer this long (Chromium caps it
  // at 2 hours, Firefox at 24), so a visitor's tab asks once per URL in a visit.
  maxAgeSeconds: 7200,
};
