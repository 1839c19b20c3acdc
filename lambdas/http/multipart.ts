// multipart/form-data parsing with busboy 1.x (not lambda-multipart-parser: it pins busboy 0.3 → dicer 0.3,
// whose malformed-body crash is GHSA-wm7h-9275-46v2). Limits are enforced while parsing.
import busboy from 'busboy';
import { InvalidInputError, TooLargeError } from '../shared/errors';
import { FILE_TYPES, type FileType } from '../entities/file-types';
import { LIMITS } from '../policies/limits';
import type { Upload } from '../entities/files';
import { guessFileType } from '../policies/file-signatures';
import { cleanFileName, MIME_RE } from './validate';

export interface ParsedUpload extends Upload {
  /** The other text fields we accept (`chat_id` on the Bot API). */
  fields: Record<string, string>;
}

const FIELDS = new Set(['type', 'chat_id']);

/** Reads exactly one `file` part and the optional `type` (and `chat_id`) fields from a multipart body. */
export function parseUpload(contentType: string | undefined, body: Buffer): Promise<ParsedUpload> {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) {
    return Promise.reject(new InvalidInputError('Expected a multipart/form-data body with a file part'));
  }
  return new Promise<ParsedUpload>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        limits: { files: 1, fileSize: LIMITS.fileBytes + 1, fields: 10, parts: 20, fieldSize: 1024 },
      });
    } catch (err) {
      reject(new InvalidInputError(`Invalid multipart/form-data: ${(err as Error).message}`));
      return;
    }
    let failure: Error | undefined;
    const fail = (err: Error) => (failure ??= err);
    const chunks: Buffer[] = [];
    let file: { name: string; mime: string } | undefined;
    let tooLarge = false;
    const fields: Record<string, string> = {};

    bb.on('file', (field, stream, info) => {
      // A truncated body errors the part's stream too; unhandled, that would crash the process.
      stream.on('error', (err: Error) => fail(new InvalidInputError(`Invalid multipart/form-data: ${err.message}`)));
      if (field !== 'file' || file) {
        fail(new InvalidInputError(`Unexpected file part "${field}": send exactly one part named "file"`));
        stream.resume();
        return;
      }
      file = { name: cleanFileName(info.filename), mime: (info.mimeType || '').toLowerCase() };
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => (tooLarge = true));
    });
    bb.on('field', (field, value) => {
      if (FIELDS.has(field)) fields[field] = value;
    });
    bb.on('filesLimit', () => fail(new InvalidInputError('Send exactly one part named "file"')));
    bb.on('partsLimit', () => fail(new InvalidInputError('Too many parts in the multipart body')));
    bb.on('fieldsLimit', () => fail(new InvalidInputError('Too many fields in the multipart body')));
    bb.on('error', (err: Error) => {
      fail(new InvalidInputError(`Invalid multipart/form-data: ${err.message}`));
      reject(failure);
    });
    bb.on('close', () => {
      if (failure) return reject(failure);
      const bytes = Buffer.concat(chunks);
      // busboy stops one byte past the limit, so "exactly the limit" is allowed.
      if (tooLarge || bytes.length > LIMITS.fileBytes) return reject(new TooLargeError(`File is larger than ${LIMITS.fileBytes} bytes`));
      if (!file) return reject(new InvalidInputError('The multipart body has no "file" part'));
      if (bytes.length === 0) return reject(new InvalidInputError('The file is empty'));
      const type = fields.type;
      if (type !== undefined && !(FILE_TYPES as readonly string[]).includes(type)) {
        return reject(new InvalidInputError(`type must be one of ${FILE_TYPES.join(', ')}`));
      }
      const mime = MIME_RE.test(file.mime) ? file.mime : 'application/octet-stream';
      resolve({ bytes, name: file.name, mime_type: mime, type: (type as FileType) ?? guessFileType(mime), fields });
    });
    bb.end(body);
  });
}
