// S3's ObjectCreated:Post events of bots/ (a browser's direct upload landed) → the upload's checks of a sealed
// copy, which make its file `uploaded` or `rejected` (flows/uploads.ts). S3 invokes this asynchronously: an error is retried
// by Lambda, then the event goes to the function's dead-letter queue; a repeated event changes nothing.
import type { S3Event } from 'aws-lambda';
import { completeUpload } from '../flows/uploads';
import { log } from '../shared/log';

export async function handler(event: S3Event): Promise<void> {
  for (const record of event.Records) {
    // Keys in S3 events are URL-encoded, a space as '+'.
    const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
    const file = await completeUpload(key);
    if (file) log('info', 'upload settled', { file_id: file.id, status: file.status, ...(file.reason && { reason: file.reason }) });
  }
}
