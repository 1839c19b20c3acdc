// Sending a file from the chat page: a small one in one multipart request (POST /api/client/files); a larger
// one (a phone's photo or video) straight to S3 with a presigned POST (POST /api/client/files/uploads), a
// progress bar while it goes, then sent once its checks settle it (a `file` publication, or polling).
import type { components } from '../packages/client/src/api-types';

type Schemas = components['schemas'];
export type UploadedFile = Schemas['UploadedFile'];
type UploadTicket = Schemas['UploadTicket'];

/** The multipart endpoint's limit (4 MB): anything larger goes to S3 directly. */
export const SMALL_FILE_BYTES = 4 * 1024 * 1024;

export interface FileApi {
  request<T>(method: string, path: string, opts?: { json?: unknown; form?: FormData }): Promise<T>;
}

/** The type an upload declares: as the server would guess it from the MIME type. */
const typeOf = (mime: string): Schemas['FileType'] =>
  mime.startsWith('image/') ? 'photo' : mime.startsWith('video/') ? 'video' : mime.startsWith('audio/') ? 'audio' : 'document';

/** Settled files announced on the realtime channel, for the uploads waiting on them. */
const waiting = new Map<string, (file: UploadedFile) => void>();
export function fileSettled(file: UploadedFile): void {
  waiting.get(file.id)?.(file);
}

/** The browser's POST to S3: every field of the ticket, the file last; progress as a fraction. */
function postToS3(ticket: UploadTicket, file: File, onProgress: (fraction: number) => void): Promise<void> {
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', file, file.name);
  return new Promise((resolve, reject) => {
    // XMLHttpRequest: fetch cannot report upload progress.
    const xhr = new XMLHttpRequest();
    xhr.open('POST', ticket.upload.url);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      // S3 answers with XML: <Error><Code>…</Code><Message>…</Message></Error>.
      const message = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText)?.[1] ?? xhr.statusText;
      reject(new Error(`the upload was refused: ${message} (${xhr.status})`));
    };
    xhr.onerror = () => reject(new Error('the upload could not reach storage. Check your connection.'));
    xhr.send(form);
  });
}

/** Waits for the file's checks: the realtime publication, or GET /files/{id} every second or so. */
async function settled(api: FileApi, id: string): Promise<UploadedFile> {
  let announced: UploadedFile | undefined;
  waiting.set(id, (f) => (announced = f));
  try {
    for (let i = 0; i < 120; i++) {
      for (let t = 0; t < 10 && !announced; t++) await new Promise((r) => setTimeout(r, 100));
      const file = announced ?? (await api.request<UploadedFile>('GET', `/api/client/files/${id}`));
      if (file.status !== 'pending') return file;
    }
    throw new Error('the file was not checked in time; try again');
  } finally {
    waiting.delete(id);
  }
}

/** Uploads a file either way and returns it once it can be sent; a rejected file throws its reason. */
export async function uploadFile(api: FileApi, file: File, onProgress: (fraction: number) => void): Promise<UploadedFile> {
  if (file.size <= SMALL_FILE_BYTES) {
    const form = new FormData();
    form.append('file', file, file.name);
    return api.request<UploadedFile>('POST', '/api/client/files', { form });
  }
  const mime = file.type || 'application/octet-stream';
  const ticket = await api.request<UploadTicket>('POST', '/api/client/files/uploads', {
    json: { name: file.name, size: file.size, mime_type: mime, type: typeOf(mime) },
  });
  await postToS3(ticket, file, onProgress);
  const done = await settled(api, ticket.file.id);
  if (done.status === 'rejected') throw new Error(`${file.name} was rejected: ${done.reason ?? 'it failed the checks'}`);
  return done;
}
