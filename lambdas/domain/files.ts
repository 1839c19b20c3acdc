// Files: bytes in S3 under a key naming bot and user, a record in the table, URLs presigned at read time.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, dynamo, tableName } from '../aws/dynamo';
import { presignedGetUrl, putObject } from '../aws/s3';
import { config } from '../shared/config';
import { InvalidInputError, ForbiddenError } from '../shared/errors';
import { keys } from './keys';
import { newUuid } from '../shared/ids';
import type { FileType } from './limits';

export interface FileRecord {
  id: string;
  bot_id: string;
  user_id: string;
  s3_key: string;
  type: FileType;
  name: string;
  size: number;
  mime_type: string;
  status: 'uploaded';
  created_at: string;
}

/** A file as a message stores it: uploaded ones by S3 key, linked ones (complete_files) by their own URL. */
export interface StoredFile {
  id: string | null;
  type: string;
  name: string | null;
  size: number | null;
  mime_type: string | null;
  s3_key?: string;
  url?: string;
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

export function guessFileType(mime: string): FileType {
  if (mime.startsWith('image/')) return 'photo';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

/** Media a browser may show inline; anything else (HTML, SVG, scripts...) downloads as an attachment. */
const INLINE_MIME = /^(image\/(png|jpeg|gif|webp|avif|bmp)|video\/[\w.+-]+|audio\/[\w.+-]+)$/;

export interface Upload {
  bytes: Buffer;
  name: string;
  mime_type: string;
  type: FileType;
}

/** Stores the bytes first, then the record: a record never points at missing bytes. */
export async function saveUpload(userId: string, botId: string, upload: Upload): Promise<FileRecord> {
  const id = newUuid();
  const record: FileRecord = {
    id,
    bot_id: botId,
    user_id: userId,
    s3_key: `bots/${botId}/users/${userId}/files/${id}`,
    type: upload.type,
    name: upload.name,
    size: upload.bytes.length,
    mime_type: upload.mime_type,
    status: 'uploaded',
    created_at: new Date().toISOString(),
  };
  const disposition = INLINE_MIME.test(upload.mime_type) ? 'inline' : 'attachment';
  await putObject(record.s3_key, upload.bytes, upload.mime_type, `${disposition}; filename*=UTF-8''${encodeURIComponent(upload.name)}`);
  await dynamo.send(
    new PutCommand({ TableName: tableName(), Item: { ...keys.file(id), entity: 'file', ...record } }),
  );
  return record;
}

/** Reads the files a message attaches; each must exist and have been uploaded by this user. */
export async function getOwnedFiles(userId: string, ids: string[]): Promise<FileRecord[]> {
  // Strongly consistent: a file uploaded a moment ago is attached at once.
  const items = await batchGet(ids.map((id) => keys.file(id)), true);
  const byId = new Map(items.map((item) => [item.id as string, item as unknown as FileRecord]));
  return ids.map((id, i) => {
    const file = byId.get(id);
    if (!file) throw new InvalidInputError(`files.${i}: no uploaded file has id ${id}`);
    if (file.user_id !== userId) throw new ForbiddenError(`files.${i}: file ${id} was not uploaded by this user`);
    return file;
  });
}

export const toStoredFile = (f: FileRecord): StoredFile => ({
  id: f.id,
  type: f.type,
  name: f.name,
  size: f.size,
  mime_type: f.mime_type,
  s3_key: f.s3_key,
});

/** A presigned GET: computed locally (no network), valid FILE_URL_TTL_SECONDS. */
export function presignedUrl(s3Key: string): Promise<string> {
  return presignedGetUrl(s3Key, config().fileUrlTtlSeconds);
}

export async function toFileJson(f: StoredFile): Promise<FileJson> {
  return {
    id: f.id,
    type: f.type,
    url: f.s3_key ? await presignedUrl(f.s3_key) : (f.url as string),
    name: f.name,
    size: f.size,
    mime_type: f.mime_type,
  };
}

/** The upload response: the file as messages show it, plus its status and upload time. */
export async function toUploadJson(record: FileRecord): Promise<FileJson & { status: string; created_at: string }> {
  return { ...(await toFileJson(toStoredFile(record))), status: record.status, created_at: record.created_at };
}
