// What a file is: the types an upload or a message declares, and the MIME types each may be (lower case); the
// checks of its bytes are policies/file-signatures.ts.

export const FILE_TYPES = ['photo', 'video', 'audio', 'voice', 'document'] as const;
export type FileType = (typeof FILE_TYPES)[number];

export const CONTENT_TYPES = ['text', ...FILE_TYPES] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/** MIME types allowed for each declared type (lower case). No SVG or HTML anywhere: they can run scripts. */
export const ALLOWED_MIME: Record<FileType, readonly string[]> = {
  photo: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'image/heif', 'image/avif'],
  video: ['video/mp4', 'video/quicktime', 'video/webm', 'video/3gpp'],
  audio: ['audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/ogg', 'audio/wav', 'audio/x-wav', 'audio/webm', 'audio/flac'],
  voice: ['audio/ogg', 'audio/webm', 'audio/mp4', 'audio/mpeg', 'audio/aac', 'audio/wav'],
  document: [
    'application/pdf',
    'text/plain',
    'text/csv',
    'application/zip',
    'application/msword',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.ms-excel',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/vnd.ms-powerpoint',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    'application/rtf',
    'application/vnd.oasis.opendocument.text',
    'application/vnd.oasis.opendocument.spreadsheet',
  ],
};
