// S3: the files bucket's uploads (PutObject, a presigned POST for the browser), what the completion function
// copies, reads of an object (its size, its first bytes) or deletes, and downloads as presigned GET URLs
// (computed locally, no call).
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config, requireEnv } from '../shared/config';
import { clientOptions } from './options';

const { s3Endpoint } = config();
const s3 = new S3Client({
  ...clientOptions(),
  endpoint: s3Endpoint,
  // The local S3 emulator serves buckets by path and knows none of the newer flexible checksums; on AWS
  // neither is needed for a PutObject and a presigned GET.
  forcePathStyle: Boolean(s3Endpoint),
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

const bucket = (): string => config().bucketName ?? requireEnv('BUCKET_NAME');

export async function putObject(key: string, body: Buffer, contentType: string, contentDisposition: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: contentType, ContentDisposition: contentDisposition }));
}

/** How a presigned GET answers: the content type, and inline or as a download (`attachment`). */
export interface Disposition {
  contentType: string;
  disposition: string;
}

/** A presigned GET of the object, valid `expiresIn` seconds; `as` overrides how the response is typed and shown. */
export function presignedGetUrl(key: string, expiresIn: number, as?: Disposition): Promise<string> {
  const command = new GetObjectCommand({
    Bucket: bucket(),
    Key: key,
    ...(as && { ResponseContentType: as.contentType, ResponseContentDisposition: as.disposition }),
  });
  return getSignedUrl(s3, command, { expiresIn });
}

/**
 * A browser's POST straight to the bucket: the key, the exact Content-Type and a size of 1 byte to `maxBytes`
 * are part of the signed policy, which expires after `expiresIn` seconds.
 */
export function presignedPost(key: string, contentType: string, maxBytes: number, expiresIn: number): Promise<PresignedPost> {
  return createPresignedPost(s3, {
    Bucket: bucket(),
    Key: key,
    Conditions: [
      ['eq', '$Content-Type', contentType],
      ['content-length-range', 1, maxBytes],
    ],
    Fields: { 'Content-Type': contentType },
    Expires: expiresIn,
  });
}

/** The object's size and its first `bytes` bytes (one ranged GET); undefined when there is no such object. */
export async function objectHead(key: string, bytes: number): Promise<{ size: number; head: Buffer } | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket(), Key: key, Range: `bytes=0-${bytes - 1}` }));
    const head = Buffer.from((await out.Body?.transformToByteArray()) ?? []);
    // Content-Range: bytes 0-4095/123456 (a ranged reply); without it the whole object came back.
    const total = /\/(\d+)$/.exec(out.ContentRange ?? '')?.[1];
    return { size: total ? Number(total) : head.length, head };
  } catch (err) {
    if ((err as Error).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    // A range of an empty object is refused: nothing to read.
    if ((err as Error).name === 'InvalidRange') return { size: 0, head: Buffer.alloc(0) };
    throw err;
  }
}

/**
 * How long one attempt of a CopyObject may take: S3 copies inside itself at tens of MB/s or more, so a direct
 * upload's largest object (up to 5 GB) needs far longer than a plain call's request timeout.
 */
export const COPY_REQUEST_TIMEOUT_MS = 60_000;

/** A copy of the object under another key (its type and metadata too); false when there is no such object. */
export async function copyObject(from: string, to: string): Promise<boolean> {
  try {
    // The source as S3 wants it: bucket/key, URL-encoded (the key's slashes kept).
    await s3.send(new CopyObjectCommand({ Bucket: bucket(), Key: to, CopySource: encodeURI(`${bucket()}/${from}`) }), { requestTimeout: COPY_REQUEST_TIMEOUT_MS });
    return true;
  } catch (err) {
    if ((err as Error).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw err;
  }
}

export async function deleteObject(key: string): Promise<void> {
  await s3.send(new DeleteObjectCommand({ Bucket: bucket(), Key: key }));
}

/** One ListObjectsV2 page of keys under the prefix (up to 1000), and the token of the next page if there is one. */
export async function listKeysPage(prefix: string, token?: string): Promise<{ keys: string[]; next?: string }> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix, ContinuationToken: token }));
  const keys = (out.Contents ?? []).map((o) => o.Key).filter((k): k is string => Boolean(k));
  return { keys, next: out.IsTruncated ? out.NextContinuationToken : undefined };
}

/** Every key under the prefix, page after page. */
export async function listKeys(prefix: string): Promise<string[]> {
  const found: string[] = [];
  let token: string | undefined;
  do {
    const page = await listKeysPage(prefix, token);
    found.push(...page.keys);
    token = page.next;
  } while (token);
  return found;
}
