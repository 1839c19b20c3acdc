// A bucket listing with a prefix (ListObjectsV2, `prefix=bots/…`), which moto refuses with SignatureDoesNotMatch
// whatever the signer (its SigV4 check encodes the `/` of a query value otherwise than S3 and the SDK). The
// recorder hands such a call here. As S3 does: the request's SigV4 signature is verified with the signer's secret
// key (the SDK's signer, lib/local/s3-list.ts), and the signer's policy asked for s3:ListBucket on the bucket
// with its `s3:prefix` condition; only then is the bucket listed in moto (admin credentials, no prefix, which
// moto verifies) and answered with the prefix's keys.
import type { IncomingMessage } from 'node:http';
import { listingSignatureValid } from '../../lib/local/s3-list';
import type { PolicyDocument } from './post-upload';

const list = <T>(x: T | T[]) => (Array.isArray(x) ? x : [x]);
const wildcard = (pattern: string, value: string) =>
  new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);

type Statement = PolicyDocument['Statement'][number] & { Condition?: { StringLike?: Record<string, string | string[]> } };

/** Whether the policy allows s3:ListBucket on the bucket for this prefix (StringLike on s3:prefix, the one condition used). */
export function listAllowed(policy: PolicyDocument | undefined, bucket: string, prefix: string): boolean {
  return ((policy?.Statement ?? []) as Statement[]).some((s) => {
    if (s.Effect !== 'Allow' || !list(s.Action).some((a) => wildcard(a, 's3:ListBucket'))) return false;
    if (!list(s.Resource).some((r) => wildcard(r, `arn:aws:s3:::${bucket}`))) return false;
    const like = s.Condition?.StringLike?.['s3:prefix'];
    const others = Object.keys(s.Condition ?? {}).filter((k) => k !== 'StringLike');
    return !others.length && (like === undefined || list(like).some((p) => wildcard(p, prefix)));
  });
}

export const isPrefixListing = (method: string | undefined, url: URL): boolean =>
  method === 'GET' && /^\/[^/]+\/?$/.test(url.pathname) && url.searchParams.get('list-type') === '2' && url.searchParams.has('prefix');

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The refusal of a prefix listing (S3's error code and message), or its ListObjectsV2 XML from `listWhole`. */
export async function prefixListing(
  req: IncomingMessage,
  url: URL,
  signer: { keyId: string; secret?: string; policy?: PolicyDocument },
  listWhole: (bucket: string) => Promise<{ key: string; size: number }[]>,
): Promise<{ status: number; code?: string; message?: string; xml?: string }> {
  const bucket = url.pathname.split('/')[1];
  const prefix = url.searchParams.get('prefix') ?? '';
  if (!signer.secret || !(await listingSignatureValid(req, { accessKeyId: signer.keyId, secretAccessKey: signer.secret }))) {
    return { status: 403, code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  }
  if (!listAllowed(signer.policy, bucket, prefix)) {
    return { status: 403, code: 'AccessDenied', message: `not authorized to perform: s3:ListBucket on arn:aws:s3:::${bucket} (prefix ${prefix})` };
  }
  const kept = (await listWhole(bucket)).filter((o) => o.key.startsWith(prefix));
  const contents = kept.map((o) => `<Contents><Key>${escapeXml(o.key)}</Key><Size>${o.size}</Size></Contents>`).join('');
  const xml = `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${kept.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`;
  return { status: 200, xml };
}
