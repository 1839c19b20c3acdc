// docs/openapi.yaml = the hand-written parts in bin/openapi/ (merged in PARTS order) + the request-body schemas generated
// from the handlers' valibot schemas (one source of truth for what a request may carry). `npm run openapi` writes it;
// `npm run openapi -- --check` fails when the committed document is stale (test/unit/openapi.test.ts runs it).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { toJsonSchema, type ConversionConfig } from '@valibot/to-json-schema';
import { parse, stringify } from 'yaml';
import { BotUploadBody, ChatBody, EditBody, MessageBody, SessionBody, UploadBody, BotSenderBody } from '../lambdas/http/params';
import { BotMessageBody } from '../lambdas/http/interactive';
import { AnswerBody } from '../lambdas/http/answer';
import { LIMITS } from '../lambdas/policies/limits';

const ROOT = join(__dirname, '..');
export const PARTS_DIR = join(ROOT, 'bin', 'openapi');
/** The hand-written parts, by topic; merged in this order, which is the order of the keys in the document. */
export const PARTS = [
  'document.yaml',
  'client-chats.yaml',
  'client-files.yaml',
  'bot-chats.yaml',
  'bot-files-users.yaml',
  'interactive.yaml',
  'webhooks.yaml',
  'parameters.yaml',
  'responses.yaml',
  'schemas.yaml',
  'events.yaml',
];
export const DOC_PATH = join(ROOT, 'docs', 'openapi.yaml');

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * What to-json-schema cannot read from a custom schema or a check (a function): the same rule stated as JSON
 * Schema, keyed by the rule's message so a changed rule without a matching entry fails generation.
 */
const CUSTOM: Record<string, object> = {
  'must be a file id (UUID)': { type: 'string', pattern: UUID_PATTERN },
  'must be a chat id (UUID)': { type: 'string', pattern: UUID_PATTERN },
  'must be a JSON object': {
    type: 'object',
    description:
      `Any JSON object: at most ${LIMITS.additionalInfoBytes} bytes serialized, nested at most ${LIMITS.additionalInfoDepth} levels ` +
      '(objects and arrays, this one included), numbers within a double\'s range; returned exactly as sent (docs/api.md)',
    'x-max-depth': LIMITS.additionalInfoDepth,
  },
  'must be an object ({})': { type: 'object', description: 'A rating takes no attributes: send {} (any keys are ignored)' },
};
const CHECKS: Record<string, object> = {
  'must be an http(s) URL': { format: 'uri', pattern: '^https?://' },
  'must not be blank': { pattern: '\\S' },
  'must not repeat a file id': { uniqueItems: true },
  // Stated in the object's description (CUSTOM above): JSON Schema has no keyword for them.
  [`must be at most ${LIMITS.additionalInfoBytes} bytes as JSON`]: {},
  [`must be nested at most ${LIMITS.additionalInfoDepth} levels deep`]: {},
  'numbers must be within ±1.7976931348623157e308': {},
  // JSON text is Unicode: a string with an unpaired surrogate is no JSON Schema string to begin with.
  'must be well-formed Unicode (no unpaired surrogate)': {},
  'must not be empty': { minLength: 1 },
  'must be an http(s) URL or a file id of this chat': { anyOf: [{ format: 'uri', pattern: '^https?://' }, { pattern: UUID_PATTERN }] },
  'must be given for a select field, and only for one': {
    if: { properties: { type: { const: 'select' } } },
    then: { properties: { options: { type: 'array' } }, required: ['options'] },
    else: { properties: { options: false } },
  },
  // Stated in docs/api.md: JSON Schema has no keyword for them.
  'must not repeat a field name': {},
  [`must be at most ${LIMITS.contentAttributesBytes} bytes as JSON`]: {},
};
/** Length checks (lambdas/http/validate.ts), counted in code points as JSON Schema's keywords count them. */
const LENGTH_CHECKS: [RegExp, (n: number) => object][] = [
  [/^must be at most (\d+) characters$/, (n) => ({ maxLength: n })],
  [/^must be at least (\d+) characters$/, (n) => ({ minLength: n })],
];

function checkRule(message: string): object | undefined {
  if (CHECKS[message]) return CHECKS[message];
  for (const [re, rule] of LENGTH_CHECKS) {
    const m = re.exec(message);
    if (m) return rule(Number(m[1]));
  }
  return undefined;
}

const CONFIG: ConversionConfig = {
  typeMode: 'input',
  overrideSchema: ({ valibotSchema }) => {
    if (valibotSchema.type === 'never') return { not: {}, description: String((valibotSchema as { message?: unknown }).message) };
    if (valibotSchema.type !== 'custom') return undefined;
    const rule = CUSTOM[String((valibotSchema as { message?: unknown }).message)];
    if (!rule) throw new Error(`bin/openapi.ts: no JSON Schema for the custom schema "${String((valibotSchema as { message?: unknown }).message)}"`);
    return rule;
  },
  overrideAction: ({ valibotAction, jsonSchema }) => {
    // A UTF-8 byte bound (a key's size) has no JSON Schema keyword: an extension, and docs/api.md says it.
    if (valibotAction.type === 'max_bytes') return { ...jsonSchema, 'x-max-utf8-bytes': (valibotAction as { requirement?: unknown }).requirement };
    if (valibotAction.type !== 'check') return undefined;
    const rule = checkRule(String((valibotAction as { message?: unknown }).message));
    if (!rule) throw new Error(`bin/openapi.ts: no JSON Schema for the check "${String((valibotAction as { message?: unknown }).message)}"`);
    return { ...jsonSchema, ...rule };
  },
};

/** The parts of a generated JSON Schema that are edited here. */
type JsonSchema = { properties: Record<string, { anyOf?: { type?: string; maxItems?: number }[]; description?: string }> };

/** The parts of the merged document (bin/openapi/*.yaml) that are filled in here. */
type BaseDocument = {
  components: { schemas: Record<string, unknown> };
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  'x-gateway-responses': { responses: Record<string, unknown> };
};

function schema(valibot: v.GenericSchema, description: string, extra: (s: JsonSchema) => void = () => {}): Record<string, unknown> {
  const { $schema: _ignored, ...json } = toJsonSchema(valibot, CONFIG);
  extra(json as JsonSchema);
  return { description, ...json };
}

/** A message carries at most LIMITS.filesPerMessage files, `files` and `complete_files` together. */
function filesCount(s: JsonSchema): void {
  for (const key of ['files', 'complete_files']) {
    const array = s.properties[key].anyOf?.find((a) => a.type === 'array');
    if (!array) throw new Error(`the schema's ${key} is no longer an array or null`);
    array.maxItems = LIMITS.filesPerMessage;
  }
  s.properties.content.description = 'May be empty only when files or complete_files are attached';
}

/** The Bot API's send, one schema per shape of content_type, told apart by it (absent: text). */
function botMessageRequests(generated: string): Record<string, unknown> {
  const names = ['BotPlainMessageRequest', 'InputSelectMessageRequest', 'CardsMessageRequest', 'FormMessageRequest', 'CsatMessageRequest'];
  const [plain, ...rest] = BotMessageBody.options;
  const interactive = rest as unknown as { entries: { content_type: { literal: string } } }[];
  const ref = (name: string) => `#/components/schemas/${name}`;
  const mapping = Object.fromEntries([
    ...plain.entries.content_type.wrapped.options.map((t): [string, string] => [t, ref(names[0])]),
    ...interactive.map((o, i): [string, string] => [o.entries.content_type.literal, ref(names[i + 1])]),
  ]);
  const shapes: Record<string, unknown> = Object.fromEntries(
    BotMessageBody.options.map((o, i): [string, unknown] => [
      names[i],
      i === 0
        ? schema(o, `A reply of the bot side without content_attributes ${generated}`, filesCount)
        : schema(o, `A reply of content_type ${interactive[i - 1].entries.content_type.literal} ${generated}`, (s) => {
            filesCount(s);
            s.properties.content.description = 'The question: must not be empty';
          }),
    ]),
  );
  return {
    BotMessageRequest: {
      description: `A reply of the bot side ${generated}; sender defaults to bot, content_type to text; content_attributes for an interactive content_type (docs/api.md)`,
      // Exactly one matches: an interactive shape names its content_type, the plain one takes only the others or
      // none (text). The discriminator is the interactive shapes', whose content_type is required: the plain
      // shape's may be absent, which a discriminator cannot read.
      oneOf: [{ $ref: ref(names[0]) }, { $ref: ref('BotInteractiveMessageRequest') }],
    },
    BotInteractiveMessageRequest: {
      description: `A reply of an interactive content_type ${generated}, with its content_attributes`,
      oneOf: names.slice(1).map((n) => ({ $ref: ref(n) })),
      discriminator: { propertyName: 'content_type', mapping: Object.fromEntries(Object.entries(mapping).filter(([, to]) => to !== ref(names[0]))) },
    },
    ...shapes,
  };
}

export function requestSchemas(): Record<string, unknown> {
  const generated = '(generated from the valibot schema in lambdas/http/params.ts)';
  return {
    SessionRequest: schema(SessionBody, `POST /api/client/session ${generated}`),
    ChatRequest: schema(ChatBody, `POST /api/client/chats ${generated}`),
    MessageRequest: schema(MessageBody, `A message the user sends ${generated}; files + complete_files at most ${LIMITS.filesPerMessage}`, filesCount),
    ...botMessageRequests(generated.replace('params.ts', 'params.ts and interactive.ts')),
    AnswerRequest: schema(
      AnswerBody,
      `The visitor's answer ${generated.replace('params.ts', 'answer.ts')}: {value} for input_select, {card, payload} for a postback, {values} for a form, {rating, comment?} for input_csat`,
    ),
    EditMessageRequest: schema(EditBody, `An edit of a bot-side message ${generated}`),
    TypingRequest: schema(BotSenderBody, `Who is typing ${generated}; the body may be empty (bot)`),
    DirectUploadRequest: schema(UploadBody, `The file a direct upload declares ${generated}; size at most MAX_UPLOAD_BYTES (100 MB by default), type defaults from mime_type`),
    BotDirectUploadRequest: schema(BotUploadBody, `A direct upload of the bot side for one chat ${generated}`),
  };
}

type Tree = Record<string, unknown>;
const isMap = (x: unknown): x is Tree => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Merges a part into the document: maps merge key by key; anything else defined twice is a mistake in the parts. */
function merge(into: Tree, part: Tree, where: string): void {
  for (const [key, value] of Object.entries(part)) {
    const at = `${where}/${key}`;
    if (!(key in into)) into[key] = value;
    else if (isMap(into[key]) && isMap(value)) merge(into[key], value, at);
    else throw new Error(`bin/openapi/: ${at} is defined in two parts`);
  }
}

/** The hand-written document: every part of bin/openapi/ merged. */
export function baseDocument(): Tree {
  const doc: Tree = {};
  for (const part of PARTS) merge(doc, parse(readFileSync(join(PARTS_DIR, part), 'utf8')) as Tree, part);
  return doc;
}

export function buildDocument(): string {
  const doc = baseDocument() as BaseDocument;
  doc.components.schemas = { ...doc.components.schemas, ...requestSchemas() };
  // API Gateway's own answers apply to every operation, stated once in document.yaml.
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      if (!op.responses) continue;
      const statuses = { ...op.responses, ...doc['x-gateway-responses'].responses };
      op.responses = Object.fromEntries(Object.entries(statuses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return (
    '# GENERATED by `npm run openapi` (bin/openapi.ts) from bin/openapi/*.yaml and the handlers\' valibot schemas.\n' +
    '# Do not edit: change a part or the schemas and regenerate.\n' +
    stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })
  );
}

if (require.main === module) {
  const fresh = buildDocument();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(DOC_PATH, 'utf8');
    } catch {
      /* missing: stale */
    }
    if (committed !== fresh) {
      console.error('docs/openapi.yaml is stale: run `npm run openapi`');
      process.exit(1);
    }
    console.log('docs/openapi.yaml is up to date');
  } else {
    writeFileSync(DOC_PATH, fresh);
    console.log('wrote docs/openapi.yaml');
  }
}
