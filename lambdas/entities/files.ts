// Files: bytes in S3 under a key naming bot and user, a record in the table, URLs presigned at read time.
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, dynamo, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { deleteObject, presignedGetUrl, putObject, type Disposition } from '../aws/s3';
import { config } from '../shared/config';
import { keys } from './keys';
import { newUuid } from '../shared/ids';
import { ALLOWED_MIME, type FileType } from './file-types';

export interface FileRecord {
  id: string;
  bot_id: string;
  user_id: string;
  /** Its bytes: the key it was uploaded to, or for a checked direct upload its sealed copy (sealedKeyOf). */
  s3_key: string;
  type: FileType;
  name: string;
  size: number;
  mime_type: string;
  /** A direct upload is `pending` until its object lands and passes the checks (flows/uploads.ts). */
  status: FileStatus;
  /** Why a direct upload was rejected. */
  reason?: string;
  created_at: string;
  /**
   * When it expires (DynamoDB TTL): a pending upload whose object never comes, one uploaded but not yet sent
   * (UNSENT_FILE_TTL_SECONDS), one rejected; once sent, its bot's retention (none when off).
   */
  ttl?: number;
  /** A client upload: its size is in the user's storage quota until it is sent, rejected or removed (policies/storage-quota.ts). */
  counted?: true;
  /** When a message last attached it (the stream sets it, flows/files-sent.ts): from then on its bot's retention keeps it. */
  sent_at?: string;
}

export type FileStatus = 'pending' | 'uploaded' | 'rejected';

/** The codec: a file record as DynamoDB (or its stream) gives it. */
export const fileFromItem = (raw: RawItem): FileRecord => {
  const item = raw as Stored<FileRecord>;
  return {
    id: item.id,
    bot_id: item.bot_id,
    user_id: item.user_id,
    s3_key: item.s3_key,
    type: item.type,
    name: item.name,
    size: item.size,
    mime_type: item.mime_type,
    status: item.status,
    created_at: item.created_at,
    ...optional(item, 'reason', 'ttl', 'counted', 'sent_at'),
  };
};

/** The item of a file record. */
export const fileItem = (record: FileRecord) => ({ ...keys.file(record.id), entity: 'file', ...record });

/** A file's record, strongly consistent; undefined when there is none. */
export async function readFile(id: string): Promise<FileRecord | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.file(id), ConsistentRead: true }));
  return out.Item && fileFromItem(out.Item);
}

/** The records of these files that exist (one BatchGet per 100), strongly consistent or not. */
export async function readFiles(ids: string[], consistent: boolean): Promise<FileRecord[]> {
  return (await batchGet(ids.map(keys.file), consistent)).map(fileFromItem);
}

/** Everything of a bot's users in the bucket: a change of its retention lists it. */
export const botKeyPrefix = (botId: string): string => `bots/${botId}/`;
/** Everything of a user in the bucket (files, exports) is under one prefix: an erasure lists it. */
export const userKeyPrefix = (botId: string, userId: string): string => `${botKeyPrefix(botId)}users/${userId}/`;
/** Where a file's bytes live: under its bot and user, so a user's files are one prefix. */
export const fileKeyPrefix = (botId: string, userId: string): string => `${userKeyPrefix(botId, userId)}files/`;
export const fileKey = (botId: string, userId: string, fileId: string): string => fileKeyPrefix(botId, userId) + fileId;
/**
 * Where a direct upload's checked bytes live: a copy of its upload key under a key of that check alone
 * (`<upload key>.<12 hex>`), which no presigned POST can write, so what was checked is what is served.
 */
export const sealedKeyOf = (uploadKey: string): string => `${uploadKey}.${randomBytes(6).toString('hex')}`;

/** A file as a message stores it: uploaded ones by S3 key, linked ones (complete_files) by their own URL. */
export interface StoredFile {
  id: string | null;
  type: string;
  name: string | null;
  size: number | null;
  mime_type: string | null;
  s3_key?: string;
  url?: string;
  /** A client upload in its user's storage quota: the stream gives its bytes back when a message first attaches it. */
  counted?: true;
}

/** A file as the API returns it. */
export interface FileJson {
  id: string | null;
  type: string;
  url: string;
  name: string | null;
  size: number | null;
  mime_type: string | null;
}

/**
 * Media a browser may show inline: only the image, audio and video types an upload's bytes are checked
 * against; anything else (HTML, SVG, scripts, `video/x+xml`...) downloads as an attachment.
 */
const INLINE_MIME: ReadonlySet<string> = new Set([...ALLOWED_MIME.photo, ...ALLOWED_MIME.video, ...ALLOWED_MIME.audio, ...ALLOWED_MIME.voice]);

/** Types a browser would render as a page or run (HTML, XHTML, SVG, XML, scripts): served as bytes, never as themselves. */
const PAGE_MIME = /html|svg|(^|\/|\+)xml$|^text\/xml|javascript|ecmascript/;

/**
 * How a file's presigned GET answers, whichever way it was uploaded: media inline with its type; anything
 * else as a download (an HTML or SVG page never runs on the bucket's origin).
 */
export function dispositionOf(f: { name: string | null; mime_type: string | null }): Disposition {
  const mime = (f.mime_type ?? '').toLowerCase();
  const inline = INLINE_MIME.has(mime);
  // A plain ASCII name: it rides in the presigned URL's query, which S3 emulators canonicalize less carefully
  // than S3 (`*`, quotes and runs of spaces break their signature check).
  const safe = f.name?.replace(/[^A-Za-z0-9._ -]/g, '_').replace(/ +/g, ' ').trim();
  const name = safe ? `; filename="${safe}"` : '';
  return { contentType: inline || (mime && !PAGE_MIME.test(mime)) ? mime : 'application/octet-stream', disposition: `${inline ? 'inline' : 'attachment'}${name}` };
}

export interface Upload {
  bytes: Buffer;
  name: string;
  mime_type: string;
  type: FileType;
}

/** A new file's record, under a new id (both ways of uploading). */
export function newFileRecord(
  userId: string,
  botId: string,
  f: { type: FileType; name: string; size: number; mime_type: string },
  status: FileStatus,
  now = Date.now(),
): FileRecord {
  const id = newUuid();
  return { id, bot_id: botId, user_id: userId, s3_key: fileKey(botId, userId, id), ...f, status, created_at: new Date(now).toISOString() };
}

/** When a file uploaded (or settled) at `nowMs` expires unless a message attaches it; undefined: never (the setting is 0). */
export function unsentExpiry(nowMs = Date.now()): number | undefined {
  const seconds = config().unsentFileTtlSeconds;
  return seconds > 0 ? Math.ceil(nowMs / 1000) + seconds : undefined;
}

/**
 * Stores the bytes first, then the record (expiring unless it is sent, `counted` in the user's quota for a
 * client upload): a record never points at missing bytes.
 */
export async function saveUpload(userId: string, botId: string, upload: Upload, o: { counted?: boolean } = {}): Promise<FileRecord> {
  const now = Date.now();
  const record = newFileRecord(userId, botId, { type: upload.type, name: upload.name, size: upload.bytes.length, mime_type: upload.mime_type }, 'uploaded', now);
  const ttl = unsentExpiry(now);
  if (ttl !== undefined) record.ttl = ttl;
  if (o.counted) record.counted = true;
  // Stored with the object too (a plain GET of it opens the same way); the header keeps the full name.
  const as = dispositionOf(upload);
  const stored = `${as.disposition.split(';')[0]}; filename*=UTF-8''${encodeURIComponent(upload.name)}`;
  await putObject(record.s3_key, upload.bytes, as.contentType, stored);
  await dynamo.send(
    new PutCommand({ TableName: tableName(), Item: fileItem(record) }),
  );
  return record;
}

/**
 * A file record removed (its pending upload or its expiry passed, or erased): its object is deleted too, and for
 * a direct upload whatever its presigned POST may have written since its check. Idempotent.
 */
export async function forgetFileObject(record: FileRecord | { s3_key?: string; id?: undefined }): Promise<void> {
  if (record.s3_key === undefined) return;
  const uploadKey = record.id !== undefined ? fileKey(record.bot_id, record.user_id, record.id) : record.s3_key;
  await Promise.all([deleteObject(record.s3_key), record.s3_key.startsWith(`${uploadKey}.`) && deleteObject(uploadKey)]);
}

export const toStoredFile = (f: FileRecord): StoredFile => ({
  id: f.id,
  type: f.type,
  name: f.name,
  size: f.size,
  mime_type: f.mime_type,
  s3_key: f.s3_key,
  ...(f.counted && !f.sent_at && { counted: true as const }),
});

/** A presigned GET: computed locally (no network), valid FILE_URL_TTL_SECONDS, shown as dispositionOf says. */
export function presignedUrl(f: StoredFile): Promise<string> {
  return presignedGetUrl(f.s3_key as string, config().fileUrlTtlSeconds, dispositionOf(f));
}

export async function toFileJson(f: StoredFile): Promise<FileJson> {
  return {
    id: f.id,
    type: f.type,
    url: f.s3_key ? await presignedUrl(f) : (f.url as string),
    name: f.name,
    size: f.size,
    mime_type: f.mime_type,
  };
}

export type UploadJson = Omit<FileJson, 'url'> & { url: string | null; status: FileStatus; reason?: string; created_at: string };

/** A file as an upload returns it: with its status (and why it was rejected); a URL once it is uploaded. */
export async function toUploadJson(record: FileRecord): Promise<UploadJson> {
  const json = await toFileJson(toStoredFile(record));
  return {
    ...json,
    url: record.status === 'uploaded' ? json.url : null,
    status: record.status,
    ...(record.reason && { reason: record.reason }),
    created_at: record.created_at,
  };
}
