// Request parameters shared by the client and bot handlers: chat id, history paging, message body.
import * as v from 'valibot';
import type { HttpRequest } from './http';
import { InvalidInputError } from '../shared/errors';
import { isMessageId, isUuid } from '../shared/ids';
import { CONTENT_TYPES, FILE_TYPES } from '../entities/file-types';
import { LIMITS } from '../policies/limits';
import { cleanFileName, httpUrl, jsonObject, maxChars, MIME_RE, nonBlankText, parse, text, unicodeString } from './validate';
import { guessFileType } from '../policies/file-signatures';
import type { NewUpload } from '../flows/uploads';
import type { MessageInput } from '../flows/send';
import type { HistoryPage } from '../flows/history';
import type { Edit } from '../flows/edit';

export function chatIdParam(req: HttpRequest): string {
  const chatId = req.pathParam('chat_id');
  if (!isUuid(chatId)) throw new InvalidInputError('Invalid chat_id: expected a UUID');
  return chatId;
}

export function messageIdParam(req: HttpRequest): string {
  const messageId = req.pathParam('message_id');
  if (!isMessageId(messageId)) throw new InvalidInputError('Invalid message_id: expected a message id (19 digits)');
  return messageId;
}

function messageIdQuery(req: HttpRequest, name: string): string | undefined {
  const value = req.query(name);
  if (value === undefined) return undefined;
  if (!isMessageId(value)) throw new InvalidInputError(`${name} must be a message id (19 digits)`);
  return value;
}

/** The `limit` query parameter: an integer from 1 to `max`, `fallback` when absent. */
function limitQuery(req: HttpRequest, fallback: number, max: number): number {
  const raw = req.query('limit');
  if (raw === undefined) return fallback;
  const limit = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= max)) throw new InvalidInputError(`limit must be an integer from 1 to ${max}`);
  return limit;
}

export function historyPage(req: HttpRequest): HistoryPage {
  const limit = limitQuery(req, LIMITS.historyDefault, LIMITS.historyMax);
  const after = messageIdQuery(req, 'after');
  const before = messageIdQuery(req, 'before');
  if (after && before && after >= before) throw new InvalidInputError('after must be older than before');
  return { limit, after, before };
}

const ExternalId = v.pipe(text(1, LIMITS.externalIdLength), v.maxBytes(LIMITS.externalIdBytes, `must be at most ${LIMITS.externalIdBytes} bytes as UTF-8`));

/** POST /api/client/session */
export const SessionBody = v.object({
  client_key: v.pipe(v.string('client_key is required and must be a string'), v.regex(/^cli_[A-Za-z0-9]{1,128}$/, 'must look like cli_...')),
  external_id: v.nullish(ExternalId),
  first_name: v.nullish(text(0, LIMITS.personNameLength)),
  last_name: v.nullish(text(0, LIMITS.personNameLength)),
  external_id_hash: v.nullish(v.pipe(v.string('must be a string'), maxChars(128))),
});

/** POST /api/client/chats */
export const ChatBody = v.object({
  name: nonBlankText(LIMITS.nameLength),
  additional_info: v.optional(jsonObject(LIMITS.additionalInfoBytes, LIMITS.additionalInfoDepth)),
  image_url: v.optional(v.nullable(httpUrl)),
});

const contentTypeList = CONTENT_TYPES.join(', ');
// Printable ASCII, spaces inside only: a header value loses its outer spaces on the way (RFC 9110), so a key
// that had them could never match its own body twin.
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e](?:[\x20-\x7e]{0,126}[\x21-\x7e])?$/;
const idempotencyKey = v.pipe(v.string('must be a string'), v.regex(IDEMPOTENCY_KEY_RE, 'must be 1 to 128 printable ASCII characters, spaces only inside'));
const fileTypeList = FILE_TYPES.join(', ');

export const MessageBody = v.object({
  content: v.optional(
    v.pipe(unicodeString, maxChars(LIMITS.contentLength)),
    '',
  ),
  content_type: v.optional(v.picklist(CONTENT_TYPES, `must be one of ${contentTypeList}`), 'text'),
  files: v.nullish(
    v.pipe(
      v.array(v.custom<string>(isUuid, 'must be a file id (UUID)'), 'must be an array of file ids'),
      v.check((ids) => new Set(ids).size === ids.length, 'must not repeat a file id'),
    ),
  ),
  client_message_id: v.nullish(idempotencyKey),
  complete_files: v.nullish(
    v.array(
      v.object(
        { url: httpUrl, type: v.picklist(FILE_TYPES, `must be one of ${fileTypeList}`) },
        'must be an object {url, type}',
      ),
      'must be an array of {url, type}',
    ),
  ),
});

export const BotSenderBody = v.object({ sender: v.nullish(v.picklist(['bot', 'operator'])) });

/** Bot API: who writes a reply, `bot` (default) or a human `operator`. */
export function botSender(req: HttpRequest): 'bot' | 'operator' {
  const sender = v.safeParse(BotSenderBody.entries.sender, req.json().sender);
  if (!sender.success) throw new InvalidInputError('sender must be "bot" or "operator"');
  return sender.output ?? 'bot';
}

/** Bot API chat list paging: limit 1..200 (default 50) and an opaque cursor. */
export function botChatsPage(req: HttpRequest): { limit: number; cursor?: string } {
  const limit = limitQuery(req, 50, 200);
  const cursor = req.query('cursor');
  // next_cursor is base64url: anything else cannot be one.
  if (cursor !== undefined && !/^[A-Za-z0-9_-]{1,2048}$/.test(cursor)) throw new InvalidInputError('Invalid cursor');
  return { limit, cursor };
}

export function messageBody(req: HttpRequest): MessageInput {
  return messageInput(req, parse(MessageBody, req.json()));
}

/** A send's body as the flows take it, once its schema has parsed it (the Bot API's adds content_attributes). */
export function messageInput(req: HttpRequest, body: Omit<v.InferOutput<typeof MessageBody>, 'content_type'> & { content_type: string }): MessageInput {
  const files = body.files ?? [];
  const linked = body.complete_files ?? [];
  if (files.length + linked.length > LIMITS.filesPerMessage) {
    throw new InvalidInputError(`A message carries at most ${LIMITS.filesPerMessage} files`);
  }
  if (body.content.trim() === '' && files.length + linked.length === 0) {
    throw new InvalidInputError('content must not be empty unless files or complete_files are attached');
  }
  const header = req.header('idempotency-key');
  if (header !== undefined && !IDEMPOTENCY_KEY_RE.test(header)) {
    throw new InvalidInputError('Idempotency-Key must be 1 to 128 printable ASCII characters, spaces only inside');
  }
  if (header !== undefined && body.client_message_id && header !== body.client_message_id) {
    throw new InvalidInputError('client_message_id and the Idempotency-Key header differ');
  }
  return {
    content: body.content,
    content_type: body.content_type,
    files,
    complete_files: linked.map((f) => ({ id: null, type: f.type, url: f.url, name: null, size: null, mime_type: null })),
    idempotency_key: body.client_message_id ?? header,
  };
}

export const EditBody = v.object({
  content: nonBlankText(LIMITS.contentLength),
  version: v.optional(v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(Number.MAX_SAFE_INTEGER, 'is too large'))),
});

/** Bot API edit: the new content (limits as for sends) and, optionally, the bot's number for this edit. */
export function editBody(req: HttpRequest): Edit {
  return parse(EditBody, req.json());
}

/** Bot API typing: who is typing, `bot` (default) or `operator`; the body is optional. */
export function typingSender(req: HttpRequest): 'bot' | 'operator' {
  if (req.rawBody().length === 0) return 'bot';
  return botSender(req);
}

/** POST /api/client/files/uploads: the file a direct upload declares. */
export const UploadBody = v.object({
  name: nonBlankText(LIMITS.fileNameLength),
  size: v.pipe(v.number('must be a number of bytes'), v.integer('must be an integer number of bytes'), v.minValue(1, 'must be at least 1 byte')),
  mime_type: v.pipe(v.string('must be a string'), v.maxLength(255, 'must be at most 255 characters'), v.regex(MIME_RE, 'must be a MIME type such as image/jpeg')),
  type: v.optional(v.picklist(FILE_TYPES, `must be one of ${fileTypeList}`)),
});

/** POST /api/bot/files/uploads: the same, for one chat. */
export const BotUploadBody = v.object({ ...UploadBody.entries, chat_id: v.custom<string>(isUuid, 'must be a chat id (UUID)') });

/** A declared file as stored: its name cleaned as a multipart one is, its MIME type in lower case, a type. */
function declaredUpload(body: v.InferOutput<typeof UploadBody>): NewUpload {
  const mime = body.mime_type.toLowerCase();
  return { name: cleanFileName(body.name), size: body.size, mime_type: mime, type: body.type ?? guessFileType(mime) };
}

/** A direct upload's body; the type defaults to the one its MIME type names (image/* a photo...). */
export const uploadBody = (req: HttpRequest): NewUpload => declaredUpload(parse(UploadBody, req.json()));

/** The Bot API's direct upload: the chat, and the file it declares. */
export function botUploadBody(req: HttpRequest): { chatId: string; upload: NewUpload } {
  const body = parse(BotUploadBody, req.json());
  return { chatId: body.chat_id, upload: declaredUpload(body) };
}

/** The `file_id` path parameter. */
export function fileIdParam(req: HttpRequest): string {
  const fileId = req.pathParam('file_id');
  if (!isUuid(fileId)) throw new InvalidInputError('Invalid file_id: expected a UUID');
  return fileId;
}

/** GET /api/bot/users?external_id=…: the one query parameter, required. */
export function externalIdQuery(req: HttpRequest): string {
  const value = req.query('external_id');
  if (value === undefined) throw new InvalidInputError('external_id: the query parameter is required');
  return parse(v.object({ external_id: ExternalId }), { external_id: value }).external_id;
}

/** A UUID path parameter (`user_id`, `task_id`). */
export function uuidParam(req: HttpRequest, name: 'user_id' | 'task_id'): string {
  const value = req.pathParam(name);
  if (!isUuid(value)) throw new InvalidInputError(`Invalid ${name}: expected a UUID`);
  return value;
}
