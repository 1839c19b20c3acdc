// A browser's POST upload (S3's presigned POST), which moto does not authorize: the recorder hands it here.
// As S3 does: the policy's signature (with the signer's secret key), expiry and conditions are verified
// (lib/local/s3-post.ts, the local stack's own check), then the signer's role policy is asked for
// s3:PutObject on arn:aws:s3:::<bucket>/<key>; only then is the object written to moto (admin credentials).
import busboy from 'busboy';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { IncomingHttpHeaders } from 'node:http';
import { verifyPostPolicy } from '../../lib/local/s3-post';

export type PolicyDocument = { Statement: { Effect: string; Action: string | string[]; Resource: string | string[] }[] };

const list = (x: string | string[]) => (Array.isArray(x) ? x : [x]);
const wildcard = (pattern: string, value: string) =>
  new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);

/** Whether an identity policy allows `action` on `resource` (IAM's wildcards; no Deny statements here). */
export const policyAllows = (policy: PolicyDocument | undefined, action: string, resource: string): boolean =>
  (policy?.Statement ?? []).some((s) => s.Effect === 'Allow' && list(s.Action).some((a) => wildcard(a, action)) && list(s.Resource).some((r) => wildcard(r, resource)));

export const isPostUpload = (method: string | undefined, headers: IncomingHttpHeaders): boolean =>
  method === 'POST' && !headers.authorization && /^multipart\/form-data/i.test(headers['content-type'] ?? '');

function parseForm(headers: IncomingHttpHeaders, body: Buffer): Promise<{ fields: Record<string, string>; file: Buffer }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const chunks: Buffer[] = [];
    const bb = busboy({ headers });
    bb.on('field', (name, value) => (fields[name] = value));
    bb.on('file', (_name, stream) => stream.on('data', (d: Buffer) => chunks.push(d)));
    bb.once('close', () => resolve({ fields, file: Buffer.concat(chunks) }));
    bb.once('error', reject);
    bb.end(body);
  });
}

export interface PostOutcome {
  /** The access key that signed the policy. */
  keyId: string;
  status: number;
  code?: string;
  message?: string;
  deniedAction?: string;
}

/** Checks and performs a POST upload to `bucket`; the caller answers with the outcome. */
export async function postUpload(o: {
  bucket: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  secretOf: (keyId: string) => string | undefined;
  policyOf: (keyId: string) => PolicyDocument | undefined;
  motoEndpoint: string;
  admin: { accessKeyId: string; secretAccessKey: string };
}): Promise<PostOutcome> {
  const { fields, file } = await parseForm(o.headers, o.body);
  const keyId = (fields['X-Amz-Credential'] ?? '').split('/')[0];
  const secret = o.secretOf(keyId);
  if (!secret) return { keyId, status: 403, code: 'InvalidAccessKeyId', message: `unknown access key ${keyId}` };
  const verdict = await verifyPostPolicy({ fields, fileSize: file.length, now: new Date(), bucket: o.bucket, credentials: { accessKeyId: keyId, secretAccessKey: secret } });
  if (!verdict.ok) return { keyId, status: verdict.status, code: verdict.code, message: verdict.message };
  const resource = `arn:aws:s3:::${o.bucket}/${fields.key}`;
  if (!policyAllows(o.policyOf(keyId), 's3:PutObject', resource)) {
    return { keyId, status: 403, code: 'AccessDenied', message: `not authorized to perform: s3:PutObject on ${resource}`, deniedAction: 's3:PutObject' };
  }
  const s3 = new S3Client({ endpoint: o.motoEndpoint, region: (fields['X-Amz-Credential'] ?? '').split('/')[2], forcePathStyle: true, credentials: o.admin });
  try {
    await s3.send(new PutObjectCommand({ Bucket: o.bucket, Key: fields.key, Body: file, ContentType: fields['Content-Type'] }));
  } finally {
    s3.destroy();
  }
  return { keyId, status: 204 };
}
