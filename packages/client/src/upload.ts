// Sending a file: a small one in one multipart request (POST /files); a larger one straight to storage with a
// presigned POST (POST /files/uploads), progress while it goes, then ready once its checks settle it (a `file`
// publication, which may come before the upload's own response ends, or GET /files/{id}).
import type { FileType, UploadedFile, UploadTicket } from './types';
import { ApiError, type Transport } from './http';

/** The multipart endpoint's limit (4 MB): anything larger goes to storage directly. */
export const SMALL_FILE_BYTES = 4 * 1024 * 1024;
/** How often a pending upload is looked at when no publication says it settled, and for how long. */
const CHECK_EVERY_MS = 1000;
const CHECK_FOR_MS = 120_000;

/** A file to send: a browser's File, or any Blob with a name. */
export type FileLike = Blob & { name?: string };

export interface SendFileOptions {
  /** The fraction sent, 0 to 1 (in steps where XMLHttpRequest reports upload progress; else 0, then 1). */
  onProgress?: (fraction: number) => void;
}

/** The type an upload declares: as the server would guess it from the MIME type. */
const typeOf = (mime: string): FileType =>
  mime.startsWith('image/') ? 'photo' : mime.startsWith('video/') ? 'video' : mime.startsWith('audio/') ? 'audio' : 'document';

interface Xhr {
  open(method: string, url: string): void;
  send(body: FormData): void;
  upload: { onprogress: ((e: { lengthComputable: boolean; loaded: number; total: number }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  status: number;
  statusText: string;
  responseText: string;
}

/** S3 answers with XML: <Error><Code>…</Code><Message>…</Message></Error>. */
const refused = (status: number, text: string, statusText: string) =>
  new ApiError(status, `the upload was refused: ${/<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? statusText} (${status})`);

/** The POST to storage: every field of the ticket, the file last. */
async function postToStorage(ticket: UploadTicket, file: FileLike, name: string, onProgress: (f: number) => void, fetchFn: typeof fetch): Promise<void> {
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', file, name);
  const XHR = (globalThis as { XMLHttpRequest?: new () => Xhr }).XMLHttpRequest;
  if (!XHR) {
    // fetch cannot report upload progress: only its start and its end.
    const res = await fetchFn(ticket.upload.url, { method: 'POST', body: form }).catch(() => {
      throw new ApiError(0, 'the upload could not reach storage. Check your connection.');
    });
    if (!res.ok) throw refused(res.status, await res.text(), res.statusText);
    return;
  }
  return new Promise((resolve, reject) => {
    const xhr = new XHR();
    xhr.open('POST', ticket.upload.url);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(refused(xhr.status, xhr.responseText, xhr.statusText)));
    xhr.onerror = () => reject(new ApiError(0, 'the upload could not reach storage. Check your connection.'));
    xhr.send(form);
  });
}

/** Settled uploads announced on the channel, kept for the upload that has not yet heard of its own id. */
export class SettledFiles {
  private readonly seen = new Map<string, UploadedFile>();
  private readonly waiting = new Map<string, (file: UploadedFile) => void>();

  /** A `file` publication: to its waiting upload, or kept until the upload asks (the newest 50). */
  add(file: UploadedFile): void {
    const waiter = this.waiting.get(file.id);
    if (waiter) return waiter(file);
    this.seen.set(file.id, file);
    if (this.seen.size > 50) this.seen.delete(this.seen.keys().next().value!);
  }

  /** Resolves when the file is announced (at once if it already was); `stop` forgets the wait. */
  wait(id: string): { settled: Promise<UploadedFile>; stop(): void } {
    const known = this.seen.get(id);
    this.seen.delete(id);
    let stop = () => undefined as void;
    const settled = known
      ? Promise.resolve(known)
      : new Promise<UploadedFile>((resolve) => {
          this.waiting.set(id, resolve);
          stop = () => void this.waiting.delete(id);
        });
    return { settled, stop };
  }
}

/** Waits for a direct upload's checks: the publication, or GET /files/{id} every second or so. */
async function settled(api: Transport, files: SettledFiles, id: string): Promise<UploadedFile> {
  const announced = files.wait(id);
  try {
    for (const until = Date.now() + CHECK_FOR_MS; Date.now() < until; ) {
      const tick = new Promise<undefined>((r) => setTimeout(() => r(undefined), CHECK_EVERY_MS));
      const file = (await Promise.race([announced.settled, tick])) ?? (await api.request<UploadedFile>('GET', `/api/client/files/${id}`, { retry: true }));
      if (file.status !== 'pending') return file;
    }
    throw new ApiError(0, 'the file was not checked in time; try again');
  } finally {
    announced.stop();
  }
}

/** Uploads a file either way and returns it once it can be sent; a rejected file throws its reason. */
export async function uploadFile(api: Transport, files: SettledFiles, file: FileLike, opts: SendFileOptions, fetchFn: typeof fetch): Promise<UploadedFile> {
  const onProgress = opts.onProgress ?? (() => undefined);
  const name = file.name || 'file';
  onProgress(0);
  if (file.size <= SMALL_FILE_BYTES) {
    const form = new FormData();
    form.append('file', file, name);
    const uploaded = await api.request<UploadedFile>('POST', '/api/client/files', { form });
    onProgress(1);
    return uploaded;
  }
  const mime = file.type || 'application/octet-stream';
  const ticket = await api.request<UploadTicket>('POST', '/api/client/files/uploads', {
    json: { name, size: file.size, mime_type: mime, type: typeOf(mime) },
  });
  await postToStorage(ticket, file, name, onProgress, fetchFn);
  onProgress(1);
  const done = await settled(api, files, ticket.file.id);
  if (done.status === 'rejected') throw new ApiError(400, `${name} was rejected: ${done.reason ?? 'it failed the checks'}`);
  return done;
}
