// S3: the files bucket's uploads (PutObject) and downloads as presigned GET URLs (computed locally, no call).
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
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

/** A presigned GET of the object, valid `expiresIn` seconds. */
export function presignedGetUrl(key: string, expiresIn: number): Promise<string> {
  return getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket(), Key: key }), { expiresIn });
}
