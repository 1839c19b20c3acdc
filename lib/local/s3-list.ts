// A bucket listing (GET /<bucket>/?list-type=2&prefix=…) through the S3 emulator, whose signature check
// canonicalizes the bucket's URI without the trailing slash the SDK signs (S3 keeps it). The proxy in front
// (s3-post.ts) checks such a request's SigV4 signature itself, with the SDK's signer, as S3 would, and only
// then hands it to the emulator unsigned, at the path the emulator expects.
import type { IncomingMessage } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@smithy/core/checksum';

const AUTH_RE = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** GET or HEAD of `/<bucket>/` with a query: a listing of the bucket. */
export const isBucketListing = (req: IncomingMessage, bucket: string): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && new URL(req.url ?? '/', 'http://x').pathname === `/${bucket}/`;

/** Whether the request's Authorization header is a valid SigV4 signature of it with these credentials. */
export async function listingSignatureValid(req: IncomingMessage, credentials: { accessKeyId: string; secretAccessKey: string }): Promise<boolean> {
  const m = AUTH_RE.exec(req.headers.authorization ?? '');
  const amzDate = req.headers['x-amz-date'];
  if (!m || m[1] !== credentials.accessKeyId || typeof amzDate !== 'string') return false;
  const [, , , region, service, signed, signature] = m;
  const url = new URL(req.url ?? '/', 'http://x');
  const headers = Object.fromEntries(signed.split(';').map((h) => [h, String(req.headers[h] ?? '')]));
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const signer = new SignatureV4({ credentials, region, service, sha256: Sha256, uriEscapePath: false });
  const out = await signer.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: 'x', path: url.pathname, query, headers },
    { signingDate, signingRegion: region, signingService: service },
  );
  return new RegExp(`Signature=${signature}$`).test(String(out.headers.authorization ?? ''));
}
