// A bucket listing (GET /<bucket>/?list-type=2&prefix=…) through the S3 emulator, whose signature check
// canonicalizes the bucket's URI without the trailing slash the SDK signs (S3 keeps it). The proxy in front
// (s3-post.ts) checks such a request's SigV4 signature itself, as S3 would: the SDK's signer signs the request
// again with the credential scope and signed headers its Authorization header names, and the two must be the
// same. Only then is it handed to the emulator unsigned, at the path the emulator expects. The credential scope
// check is the POST policy's too (s3-post.ts).
import type { IncomingMessage } from 'node:http';
import { ALGORITHM_IDENTIFIER, AMZ_DATE_HEADER, AUTH_HEADER, createScope, SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@smithy/core/checksum';

/**
 * A credential's scope (`<date>/<region>/<service>/aws4_request`), taken only if the SDK builds the same one
 * from its parts (createScope): its signing day, region and service. Undefined for a malformed scope.
 */
export function credentialScope(scope: string): { signingDate: Date; region: string; service: string } | undefined {
  const [date, region, service] = scope.split('/');
  if (!/^\d{8}$/.test(date ?? '') || !region || !service || createScope(date, region, service) !== scope) return undefined;
  return { signingDate: new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)))), region, service };
}

/** GET or HEAD of `/<bucket>/` with a query: a listing of the bucket. */
export const isBucketListing = (req: IncomingMessage, bucket: string): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && new URL(req.url ?? '/', 'http://x').pathname === `/${bucket}/`;

/** The parts of a SigV4 Authorization header (`<algorithm> Credential=…, SignedHeaders=…, Signature=…`). */
function authorizationParts(header: string): Record<string, string> | undefined {
  if (!header.startsWith(`${ALGORITHM_IDENTIFIER} `)) return undefined;
  return Object.fromEntries(header.slice(ALGORITHM_IDENTIFIER.length + 1).split(',').map((p) => p.trim().split('=', 2) as [string, string]));
}

/** Whether the request's Authorization header is a valid SigV4 signature of it with these credentials. */
export async function listingSignatureValid(req: IncomingMessage, credentials: { accessKeyId: string; secretAccessKey: string }): Promise<boolean> {
  const given = String(req.headers[AUTH_HEADER] ?? '');
  const parts = authorizationParts(given);
  const amzDate = req.headers[AMZ_DATE_HEADER];
  const [accessKey, ...scope] = (parts?.Credential ?? '').split('/');
  const signing = credentialScope(scope.join('/'));
  if (!parts?.SignedHeaders || accessKey !== credentials.accessKeyId || !signing || typeof amzDate !== 'string') return false;
  const url = new URL(req.url ?? '/', 'http://x');
  const headers = Object.fromEntries(parts.SignedHeaders.split(';').map((h) => [h, String(req.headers[h] ?? '')]));
  const signingDate = new Date(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  const signer = new SignatureV4({ credentials, region: signing.region, service: signing.service, sha256: Sha256, uriEscapePath: false });
  const out = await signer.sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: 'x', path: url.pathname, query: Object.fromEntries(url.searchParams), headers },
    { signingDate, signingRegion: signing.region, signingService: signing.service },
  );
  return out.headers[AUTH_HEADER] === given;
}
