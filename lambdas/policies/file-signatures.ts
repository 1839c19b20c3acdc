// What a file's first bytes must be: an upload declares a type and a MIME type, and the completion of a direct
// upload (flows/uploads.ts) checks the bytes against them. Executables, scripts and pages are refused
// whatever was declared: a browser could run them from the bucket's origin, and a visitor could download and
// open them.
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

const bytesAt = (head: Buffer, offset: number, expected: number[] | string) => {
  const want = typeof expected === 'string' ? Buffer.from(expected, 'latin1') : Buffer.from(expected);
  return head.length >= offset + want.length && head.subarray(offset, offset + want.length).equals(want);
};

/** Refused whatever was declared, checked first. */
const FORBIDDEN: { what: string; test: (head: Buffer, text: string) => boolean }[] = [
  { what: 'an executable (Windows PE)', test: (h) => bytesAt(h, 0, 'MZ') },
  { what: 'an executable (ELF)', test: (h) => bytesAt(h, 0, [0x7f, 0x45, 0x4c, 0x46]) },
  {
    what: 'an executable (Mach-O)',
    test: (h) => [[0xfe, 0xed, 0xfa, 0xce], [0xfe, 0xed, 0xfa, 0xcf], [0xce, 0xfa, 0xed, 0xfe], [0xcf, 0xfa, 0xed, 0xfe], [0xca, 0xfe, 0xba, 0xbe]].some((m) => bytesAt(h, 0, m)),
  },
  { what: 'a script (#!)', test: (h) => bytesAt(h, 0, '#!') },
  { what: 'an SVG image (it can run scripts)', test: (_h, text) => text.includes('<svg') },
  { what: 'an HTML page', test: (_h, text) => /^\s*<(!doctype html|html|head|body|script|iframe)\b/.test(text) || text.includes('<script') },
];

/** ISO base media (MP4, MOV, HEIF…): `ftyp` at offset 4, the major brand after it. */
const ftyp = (brands?: string[]) => (h: Buffer) => bytesAt(h, 4, 'ftyp') && (!brands || brands.includes(h.subarray(8, 12).toString('latin1')));
const HEIF_BRANDS = ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'avif', 'avis'];
const riff = (form: string) => (h: Buffer) => bytesAt(h, 0, 'RIFF') && bytesAt(h, 8, form);
const ebml = (h: Buffer) => bytesAt(h, 0, [0x1a, 0x45, 0xdf, 0xa3]);
const zip = (h: Buffer) => bytesAt(h, 0, [0x50, 0x4b, 0x03, 0x04]);
const ole = (h: Buffer) => bytesAt(h, 0, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** Text: no NUL, and UTF-8 (a character cut by the end of the head is fine). */
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

/** Per MIME type: what its bytes start with, and its name in a reason. */
const SIGNATURES: Record<string, { name: string; test: (h: Buffer) => boolean }> = {
  'image/png': { name: 'a PNG image', test: (h) => bytesAt(h, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  'image/jpeg': { name: 'a JPEG image', test: (h) => bytesAt(h, 0, [0xff, 0xd8, 0xff]) },
  'image/gif': { name: 'a GIF image', test: (h) => bytesAt(h, 0, 'GIF87a') || bytesAt(h, 0, 'GIF89a') },
  'image/webp': { name: 'a WebP image', test: riff('WEBP') },
  'image/heic': { name: 'a HEIC image', test: ftyp(HEIF_BRANDS) },
  'image/heif': { name: 'a HEIF image', test: ftyp(HEIF_BRANDS) },
  'image/avif': { name: 'an AVIF image', test: ftyp(HEIF_BRANDS) },
  'video/mp4': { name: 'an MP4 video', test: ftyp() },
  'video/quicktime': { name: 'a QuickTime video', test: ftyp() },
  'video/3gpp': { name: 'a 3GP video', test: ftyp() },
  'audio/mp4': { name: 'an MP4 audio file', test: ftyp() },
  'video/webm': { name: 'a WebM video', test: ebml },
  'audio/webm': { name: 'a WebM audio file', test: ebml },
  'audio/mpeg': { name: 'an MP3 file', test: (h) => bytesAt(h, 0, 'ID3') || (h[0] === 0xff && (h[1] & 0xe0) === 0xe0) },
  'audio/aac': { name: 'an AAC file', test: (h) => bytesAt(h, 0, [0xff, 0xf1]) || bytesAt(h, 0, [0xff, 0xf9]) },
  'audio/ogg': { name: 'an Ogg file', test: (h) => bytesAt(h, 0, 'OggS') },
  'audio/wav': { name: 'a WAV file', test: riff('WAVE') },
  'audio/x-wav': { name: 'a WAV file', test: riff('WAVE') },
  'audio/flac': { name: 'a FLAC file', test: (h) => bytesAt(h, 0, 'fLaC') },
  // PDF readers accept junk before the header (up to 1 KB).
  'application/pdf': { name: 'a PDF', test: (h) => h.subarray(0, 1024 + 5).indexOf('%PDF-') >= 0 },
  'text/plain': { name: 'text', test: isText },
  'text/csv': { name: 'CSV text', test: isText },
  'application/zip': { name: 'a ZIP archive', test: zip },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': { name: 'a Word document', test: zip },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { name: 'an Excel workbook', test: zip },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': { name: 'a PowerPoint deck', test: zip },
  'application/vnd.oasis.opendocument.text': { name: 'an OpenDocument text', test: zip },
  'application/vnd.oasis.opendocument.spreadsheet': { name: 'an OpenDocument spreadsheet', test: zip },
  'application/msword': { name: 'a Word document', test: ole },
  'application/vnd.ms-excel': { name: 'an Excel workbook', test: ole },
  'application/vnd.ms-powerpoint': { name: 'a PowerPoint deck', test: ole },
  'application/rtf': { name: 'an RTF document', test: (h) => bytesAt(h, 0, '{\\rtf') },
};

/** Checks the first bytes of an object (up to 4 KB) against its declared MIME type. */
export function checkSignature(head: Buffer, mime: string): SniffResult {
  if (head.length === 0) return { ok: false, reason: 'the file is empty' };
  // Pages and images as text, case-insensitive, after a byte order mark.
  const text = head.toString('latin1').replace(/^\xef\xbb\xbf/, '').toLowerCase();
  const forbidden = FORBIDDEN.find((f) => f.test(head, text));
  if (forbidden) return { ok: false, reason: `the file is ${forbidden.what}` };
  const declared = bare(mime);
  const signature = SIGNATURES[declared];
  if (!signature) return { ok: false, reason: `unsupported type ${declared}` };
  return signature.test(head) ? { ok: true } : { ok: false, reason: `the bytes are not ${signature.name} (declared ${declared})` };
}
