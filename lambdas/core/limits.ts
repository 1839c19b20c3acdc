// Size limits of the API in one place (docs/api.md "Limits" documents the same numbers).

export const LIMITS = {
  externalIdLength: 256,
  nameLength: 200,
  personNameLength: 200,
  urlLength: 2048,
  additionalInfoBytes: 8 * 1024,
  contentLength: 10_000,
  filesPerMessage: 10,
  /** API Gateway caps a request at 10 MB and Lambda a synchronous payload at 6 MB; base64 adds a third. */
  fileBytes: 4 * 1024 * 1024,
  fileNameLength: 255,
  historyDefault: 100,
  historyMax: 500,
} as const;

export const FILE_TYPES = ['photo', 'video', 'audio', 'voice', 'document'] as const;
export type FileType = (typeof FILE_TYPES)[number];

export const CONTENT_TYPES = ['text', ...FILE_TYPES] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];
