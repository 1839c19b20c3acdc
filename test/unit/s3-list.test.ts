// The local S3 proxy's own check of a bucket listing's SigV4 signature (the emulator canonicalizes the bucket's
// path without its trailing slash): a listing the SDK signed passes; another key, a changed query or path fails.
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { isBucketListing, listingSignatureValid } from '../../lib/local/s3-list';

const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** The request the SDK signs for a listing of `bucket` under `prefix` (captured, never sent). */
async function signedListing(prefix: string): Promise<IncomingMessage> {
  const s3 = new S3Client({ endpoint: 'http://localhost:4569', region: 'us-east-1', forcePathStyle: true, credentials });
  type Captured = { path: string; query: Record<string, string>; headers: Record<string, string> };
  let captured: Captured | undefined;
  s3.middlewareStack.add(
    () => (args) => {
      captured = args.request as Captured;
      return Promise.reject(new Error('captured'));
    },
    { step: 'finalizeRequest', priority: 'low' },
  );
  await s3.send(new ListObjectsV2Command({ Bucket: 'files', Prefix: prefix })).catch(() => undefined);
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = `${captured!.path}?${new URLSearchParams(captured!.query).toString()}`;
  req.headers = Object.fromEntries(Object.entries(captured!.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return req;
}

test('a listing signed by the SDK passes; another secret, query or path does not', async () => {
  const req = await signedListing('bots/b/users/u/files/');
  expect(isBucketListing(req, 'files')).toBe(true);
  expect(await listingSignatureValid(req, credentials)).toBe(true);
  expect(await listingSignatureValid(req, { ...credentials, secretAccessKey: 'other' })).toBe(false);
  expect(await listingSignatureValid(req, { ...credentials, accessKeyId: 'OTHER' })).toBe(false);
  const otherPrefix = Object.assign(await signedListing('bots/b/users/u/files/'), {});
  otherPrefix.url = otherPrefix.url!.replace('users%2Fu', 'users%2Fv');
  expect(await listingSignatureValid(otherPrefix, credentials)).toBe(false);
  const unsigned = await signedListing('bots/');
  delete unsigned.headers.authorization;
  expect(await listingSignatureValid(unsigned, credentials)).toBe(false);
  expect(isBucketListing(Object.assign(new IncomingMessage(new Socket()), { method: 'GET', url: '/files/key' }), 'files')).toBe(false);
});
