// Which requests to the S3 emulator carry no signature at all, which S3 refuses on a private bucket (ours are).
// The emulator (@20minutes/s3rver) verifies a request's signature when it has one (an Authorization header, or
// SigV4 or SigV2 query parameters: a presigned URL) and refuses a bad one with 403, but serves and stores a request
// without any as if it were signed. The proxy in front (s3-post.ts) refuses those with S3's 403 before they reach
// it, leaving the emulator's own check for the rest.
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { parse as parseUrl } from 'node:url';

/**
 * Whether the request names a signature the emulator will check: the same test its authentication middleware
 * makes (the header, or the query parameters named exactly so, whatever their values), on the query as its web
 * framework (koa) reads it, with node:querystring and its first 1,000 parameters. Read any other way, a parameter
 * past those could count as a signature here that the emulator never sees.
 */
export function carriesSignature(req: IncomingMessage): boolean {
  if ('authorization' in req.headers) return true;
  const query = parseQuery(parseUrl(req.url ?? '/').query ?? '');
  return 'X-Amz-Algorithm' in query || 'Signature' in query;
}

/** A CORS preflight: never signed, by S3 or a browser. */
export const isPreflight = (req: IncomingMessage): boolean => req.method === 'OPTIONS';
