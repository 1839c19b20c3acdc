// Direct uploads (phone photos and videos, up to MAX_UPLOAD_BYTES): the browser POSTs the bytes straight to
// S3 with a presigned POST, so nothing large goes through API Gateway or a Lambda. The file is `pending`
// until its object lands; then the completion function (S3's ObjectCreated event) seals a copy of it, checks
// the copy's size and first bytes and makes it `uploaded` (serving that copy), or `rejected` with a reason.
import { copyObject, deleteObject, objectHead, presignedPost } from '../aws/s3';
import { config } from '../shared/config';
import { InvalidInputError } from '../shared/errors';
import { newFileRecord, readFile, sealedKeyOf, toUploadJson, unsentExpiry, type FileRecord, type UploadJson } from '../entities/files';
import { putPendingUpload, settleUpdate, updateFile, type Settled } from '../entities/file-writes';
import { transactWrite } from '../aws/transact';
import { releaseItem } from '../policies/storage-quota';
import { isRetained, retentionWindow, type RetentionWindow } from '../policies/retention';
import { checkSignature, mimeAllowed } from '../policies/file-signatures';
import type { FileType } from '../entities/file-types';

/** How long the browser has to POST the bytes (the policy's expiration). */
export const UPLOAD_POLICY_SECONDS = 600;
/** A pending upload whose object never comes is forgotten (DynamoDB TTL) after this. */
export const PENDING_TTL_SECONDS = 24 * 3600;
/** The bytes the checks read from the start of an object. */
const HEAD_BYTES = 4096;

export interface NewUpload {
  name: string;
  size: number;
  mime_type: string;
  type: FileType;
}

export interface UploadTicket {
  record: FileRecord;
  upload: { url: string; fields: Record<string, string> };
  expires_at: string;
}

/** Refuses what no upload may be (checked before anything is written, the rate counter included). */
export function checkUpload(input: NewUpload): void {
  const max = config().maxUploadBytes;
  if (input.size > max) throw new InvalidInputError(`size: a file may have at most ${max} bytes (${Math.floor(max / 1024 ** 2)} MB)`);
  if (!mimeAllowed(input.type, input.mime_type)) throw new InvalidInputError(`mime_type: ${input.mime_type} is not allowed for a ${input.type}`);
}

/** A pending file and the presigned POST that uploads its bytes (the key, type and size pinned by the policy). */
export async function createUpload(userId: string, botId: string, input: NewUpload, o: { counted?: boolean } = {}): Promise<UploadTicket> {
  checkUpload(input);
  const now = Date.now();
  // Pending for at most a day; uploaded, it expires unless a message attaches it (settle); `counted` when its
  // declared size is in the user's storage quota (a client's upload).
  const ttl = Math.floor(now / 1000) + PENDING_TTL_SECONDS;
  const record: FileRecord = {
    ...newFileRecord(userId, botId, { type: input.type, name: input.name, size: input.size, mime_type: input.mime_type.toLowerCase() }, 'pending', now),
    ttl,
    ...(o.counted && { counted: true as const }),
  };
  // The policy first: a refused presign leaves no record behind.
  const post = await presignedPost(record.s3_key, record.mime_type, record.size, UPLOAD_POLICY_SECONDS);
  // With the user's reference to it: an erasure finds a pending upload even before (or without) its object. The
  // reference outlives the record's TTL by the days DynamoDB may take to delete an expired item.
  await putPendingUpload(record, ttl + 3 * 86400);
  return { record, upload: { url: post.url, fields: post.fields }, expires_at: new Date(now + UPLOAD_POLICY_SECONDS * 1000).toISOString() };
}

/** The 201 body of POST /files/uploads. */
export async function toTicketJson(ticket: UploadTicket): Promise<{ file: UploadJson; upload: UploadTicket['upload']; expires_at: string }> {
  return { file: await toUploadJson(ticket.record), upload: ticket.upload, expires_at: ticket.expires_at };
}

/** The file of an object key: its upload key (`bots/<bot>/users/<user>/files/<id>`) or a sealed copy of it; else undefined. */
export const fileIdOfKey = (key: string): string | undefined => /^bots\/[^/]+\/users\/[^/]+\/files\/([0-9a-f-]{36})(\.[0-9a-f]+)?$/.exec(key)?.[1];
/** The file a presigned POST wrote to: its upload key only (a sealed copy is never POSTed). */
const uploadIdOfKey = (key: string): string | undefined => /^bots\/[^/]+\/users\/[^/]+\/files\/([0-9a-f-]{36})$/.exec(key)?.[1];

/**
 * The completion of a direct upload, each time its upload key is written. A pending file's object is copied to a
 * key of this check alone (sealedKeyOf), which no presigned POST can write; the copy is checked (the declared
 * size, bytes of the declared type, never an executable, a script or a page), and the file becomes `uploaded`
 * pointing at it, or `rejected`. The upload key is then deleted: the same POST sent again within its 10 minutes
 * (or an event delivered late or twice) finds the file settled and changes nothing it serves. Returns the
 * settled record.
 */
export async function completeUpload(uploadKey: string): Promise<FileRecord | undefined> {
  const id = uploadIdOfKey(uploadKey);
  if (!id) return undefined;
  const record = await readFileRecord(id);
  // No file (its pending upload expired, or never asked for), or one already settled: the object is not what
  // anything serves, and is not kept. (A file uploaded before sealed copies existed still serves its upload
  // key: a write to it is checked and sealed as a pending one's is.)
  if (!record || record.s3_key !== uploadKey || record.status === 'rejected') {
    await deleteObject(uploadKey);
    return record;
  }
  const sealed = sealedKeyOf(uploadKey);
  // Gone meanwhile: a completion running beside this one has settled the file (and deleted the upload key).
  if (!(await copyObject(uploadKey, sealed))) return readFileRecord(id);
  const object = await objectHead(sealed, HEAD_BYTES);
  const verdict = !object
    ? { ok: false as const, reason: 'the file could not be read' }
    : object.size !== record.size
      ? { ok: false as const, reason: `the file has ${object.size} bytes, not the ${record.size} declared` }
      : await checkSignature(object.head, record.mime_type);
  const settled = await settle(record, verdict.ok ? { status: 'uploaded', s3Key: sealed } : { status: 'rejected', reason: verdict.reason });
  // This check's copy is kept only if the file now serves it (a completion beside this one may have won).
  if (settled.s3_key !== sealed) await deleteObject(sealed);
  await deleteObject(uploadKey);
  return settled;
}

async function settle(record: FileRecord, to: Settled): Promise<FileRecord> {
  // Uploaded: kept until UNSENT_FILE_TTL_SECONDS from now unless a message attaches it (its bot's retention
  // then governs it). Rejected: kept 24 hours more, so the page can show why.
  // (An uploaded file sealed late, one uploaded before sealed copies existed, keeps the expiry it has.)
  const keep = to.status === 'uploaded' && record.status === 'uploaded';
  const ttl = to.status === 'rejected' ? Math.floor(Date.now() / 1000) + PENDING_TTL_SECONDS : keep ? undefined : unsentExpiry();
  const update = settleUpdate(record, to, ttl, keep);
  // A rejected client upload gives its bytes back to the user's quota in the same write: once, as the status
  // moves once (an erased user's quota is gone: nothing to give back).
  if (to.status === 'rejected' && record.counted) {
    const failed = await transactWrite([{ Update: update }, releaseItem(record.user_id, record.size)]);
    if (failed === 1) return settle({ ...record, counted: undefined }, to);
    return (await readFileRecord(record.id)) ?? record; // failed === 0: settled by another delivery of the event
  }
  // Refused: settled by another delivery of the event.
  return (await updateFile(update)) ?? (await readFileRecord(record.id)) ?? record;
}

const readFileRecord = readFile;

/** A user's file, as GET /files/{id} shows it; another user's, an expired one (or none) is undefined. */
export async function getUserFile(userId: string, fileId: string, w: RetentionWindow = retentionWindow({})): Promise<FileRecord | undefined> {
  const record = await readFileRecord(fileId);
  return record && record.user_id === userId && isRetained(record, w) ? record : undefined;
}
