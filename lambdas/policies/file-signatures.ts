// What a file's first bytes must be: an upload declares a type and a MIME type, and the completion of a direct
// upload (flows/uploads.ts) checks the bytes against them, the format detected by the `file-type` library.
// Executables, scripts and pages are refused whatever was declared: a browser could run them from the bucket's
// origin, and a visitor could download and open them.
import { fileTypeFromBuffer } from 'file-type/core';
import { ALLOWED_MIME, type FileType } from '../entities/file-types';

/** The type a MIME type names when an upload declares none. */
export function guessFileType(mime: string): FileType {
  if (mime.startsWith('image/')) return 'photo';
  if (mime.startsWith('video/')) return 'video';
  if (mime.startsWith('audio/')) return 'audio';
  return 'document';
}

/** The MIME type without parameters, lower case. */
const bare = (mime: string) => mime.split(';')[0].trim().toLowerCase();

export function mimeAllowed(type: FileType, mime: string): boolean {
  return ALLOWED_MIME[type]?.includes(bare(mime)) ?? false;
}

export type SniffResult = { ok: true } | { ok: false; reason: string };

/** What file-type names a format we refuse whatever was declared: programs a visitor could download and run. */
const EXECUTABLES: Record<string, string> = {
  'application/x-msdownload': 'an executable (Windows PE)',
  'application/x-elf': 'an executable (ELF)',
  'application/x-mach-binary': 'an executable (Mach-O)',
  'application/java-vm': 'an executable (Java class)',
  'application/wasm': 'an executable (WebAssembly)',
};

/**
 * Refused whatever was declared, and not file-type's to find: it detects binary formats by their magic bytes,
 * not text, so a script, a page or an SVG (to it at most "XML") is ours to spot. A browser could run these
 * from the bucket's origin.
 */
const TEXT_FORBIDDEN: { what: string; test: (text: string) => boolean }[] = [
  { what: 'a script (#!)', test: (text) => text.startsWith('#!') },
  { what: 'an SVG image (it can run scripts)', test: (text) => text.includes('<svg') },
  { what: 'an HTML page', test: (text) => /^\s*<(!doctype html|html|head|body|script|iframe)\b/.test(text) || text.includes('<script') },
];

/** Text: no NUL, and UTF-8 (a character cut by the end of the head is fine). file-type does not detect text. */
function isText(h: Buffer): boolean {
  if (h.includes(0)) return false;
  // Drop an incomplete multi-byte sequence at the very end: the head was cut there.
  let end = h.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = h[end - i];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > i) end -= i;
    break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(h.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

// What file-type may answer for the bytes of a declared type: one container holds several of its names.
const HEIF = ['image/heic', 'image/heic-sequence', 'image/heif', 'image/heif-sequence', 'image/avif'];
/** ISO base media (ftyp) other than HEIF: the brand decides file-type's name, a phone's MP4 may be any of them. */
const ISO_MEDIA = ['video/mp4', 'video/quicktime', 'video/3gpp', 'video/3gpp2', 'video/x-m4v', 'audio/mp4', 'audio/x-m4a'];
const WEBM = ['video/webm', 'audio/webm', 'video/matroska'];
const OGG = ['audio/ogg', 'audio/ogg; codecs=opus', 'video/ogg'];
const WAV = ['audio/wav', 'audio/vnd.wave', 'audio/x-wav'];
const OLE = ['application/x-cfb'];
/** ZIP containers: a 4 KB head may end before the entry that tells file-type an Office file from a plain ZIP. */
const ZIP = [
  'application/zip',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
];

/** Per allowed MIME type: its name in a reason, and what file-type may detect in its bytes (or, for text, our check). */
const EXPECTED: Record<string, { name: string; detected?: readonly string[]; test?: (head: Buffer) => boolean }> = {
  'image/png': { name: 'a PNG image', detected: ['image/png', 'image/apng'] },
  'image/jpeg': { name: 'a JPEG image', detected: ['image/jpeg'] },
  'image/gif': { name: 'a GIF image', detected: ['image/gif'] },
  'image/webp': { name: 'a WebP image', detected: ['image/webp'] },
  'image/heic': { name: 'a HEIC image', detected: HEIF },
  'image/heif': { name: 'a HEIF image', detected: HEIF },
  'image/avif': { name: 'an AVIF image', detected: HEIF },
  'video/mp4': { name: 'an MP4 video', detected: ISO_MEDIA },
  'video/quicktime': { name: 'a QuickTime video', detected: ISO_MEDIA },
  'video/3gpp': { name: 'a 3GP video', detected: ISO_MEDIA },
  'audio/mp4': { name: 'an MP4 audio file', detected: ISO_MEDIA },
  'video/webm': { name: 'a WebM video', detected: WEBM },
  'audio/webm': { name: 'a WebM audio file', detected: WEBM },
  'audio/mpeg': { name: 'an MP3 file', detected: ['audio/mpeg'] },
  'audio/aac': { name: 'an AAC file', detected: ['audio/aac'] },
  'audio/ogg': { name: 'an Ogg file', detected: OGG },
  'audio/wav': { name: 'a WAV file', detected: WAV },
  'audio/x-wav': { name: 'a WAV file', detected: WAV },
  'audio/flac': { name: 'a FLAC file', detected: ['audio/flac', 'audio/x-flac'] },
  // Our rule beside file-type's (which wants %PDF- first): PDF readers accept junk before the header (up to 1 KB).
  'application/pdf': { name: 'a PDF', detected: ['application/pdf'], test: (h) => h.subarray(0, 1024 + 5).indexOf('%PDF-') >= 0 },
  'text/plain': { name: 'text', test: isText },
  'text/csv': { name: 'CSV text', test: isText },
  'application/zip': { name: 'a ZIP archive', detected: ZIP },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { name: 'a Word document', detected: ZIP },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { name: 'an Excel workbook', detected: ZIP },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': { name: 'a PowerPoint deck', detected: ZIP },
  'application/vnd.oasis.opendocument.text': { name: 'an OpenDocument text', detected: ZIP },
  'application/vnd.oasis.opendocument.spreadsheet': { name: 'an OpenDocument spreadsheet', detected: ZIP },
  // file-type names the compound file container; which Office program wrote it is not in its first bytes.
  'application/msword': { name: 'a Word document', detected: OLE },
  'application/vnd.ms-excel': { name: 'an Excel workbook', detected: OLE },
  'application/vnd.ms-powerpoint': { name: 'a PowerPoint deck', detected: OLE },
  'application/rtf': { name: 'an RTF document', detected: ['application/rtf'] },
};

/**
 * Checks the first bytes of an object (up to 4 KB) against its declared MIME type: the format as the
 * `file-type` library detects it (magic bytes), our rules around it (never a program, a page or a script).
 */
export async function checkSignature(head: Buffer, mime: string): Promise<SniffResult> {
  if (head.length === 0) return { ok: false, reason: 'the file is empty' };
  const detected = (await fileTypeFromBuffer(head))?.mime;
  const executable = detected && EXECUTABLES[detected];
  if (executable) return { ok: false, reason: `the file is ${executable}` };
  // Pages and images as text, case-insensitive, after a byte order mark.
  const text = head.toString('latin1').replace(/^\xef\xbb\xbf/, '').toLowerCase();
  const forbidden = TEXT_FORBIDDEN.find((f) => f.test(text));
  if (forbidden) return { ok: false, reason: `the file is ${forbidden.what}` };
  const declared = bare(mime);
  const expected = EXPECTED[declared];
  if (!expected) return { ok: false, reason: `unsupported type ${declared}` };
  const ok = (detected !== undefined && (expected.detected?.includes(detected) ?? false)) || (expected.test?.(head) ?? false);
  return ok ? { ok: true } : { ok: false, reason: `the bytes are not ${expected.name} (declared ${declared})` };
}
