// Size limits of the API in one place (docs/api.md "Limits" documents the same numbers). Lengths are
// characters as JSON Schema counts them (Unicode code points).

export const LIMITS = {
  externalIdLength: 256,
  /** After `EXT#` in a sort key (1,024 bytes at most): only 256 characters of 4 bytes each would pass it. */
  externalIdBytes: 1020,
  nameLength: 200,
  personNameLength: 200,
  urlLength: 2048,
  additionalInfoBytes: 8 * 1024,
  /** Objects and arrays within additional_info, the outermost object included. */
  additionalInfoDepth: 32,
  contentLength: 10_000,
  filesPerMessage: 10,
  /** API Gateway caps a request at 10 MB and Lambda a synchronous payload at 6 MB; base64 adds a third. */
  fileBytes: 4 * 1024 * 1024,
  fileNameLength: 255,
  historyDefault: 100,
  historyMax: 500,
  // Interactive messages (content_attributes; lambdas/http/interactive.ts).
  quickReplies: 13,
  cards: 10,
  cardActions: 3,
  formFields: 10,
  selectOptions: 25,
  /** A quick reply's, a card's or a select option's title. */
  choiceTitleLength: 80,
  /** A quick reply's or a select option's value. */
  choiceValueLength: 200,
  cardDescriptionLength: 500,
  actionTextLength: 40,
  /** A postback's payload, as UTF-8. */
  payloadBytes: 1000,
  fieldNameLength: 64,
  fieldLabelLength: 200,
  placeholderLength: 200,
  /** The whole of content_attributes as JSON: keeps the message item small whatever the counts above allow. */
  contentAttributesBytes: 16 * 1024,
  /** A visitor's answer to a form, per field type (email as RFC 5321 allows; textarea for longer text). */
  answerLength: { text: 500, email: 254, tel: 32, textarea: 5000, select: 200 },
  csatCommentLength: 2000,
} as const;
