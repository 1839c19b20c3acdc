// Request validation with valibot: one parse helper turns the first issue into a readable 400.
import * as v from 'valibot';
import { InvalidInputError } from '../shared/errors';
import { LIMITS } from '../policies/limits';

export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join('.');
  throw new InvalidInputError(path ? `${path}: ${issue.message}` : issue.message);
}

/** Characters as JSON Schema's minLength/maxLength count them: Unicode code points (an emoji is one). */
export function charCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return n;
}

/** The first `max` characters (code points) of `s`: a cut never splits a surrogate pair. */
export const truncateChars = (s: string, max: number): string => (charCount(s) <= max ? s : Array.from(s).slice(0, max).join(''));

// An unpaired surrogate is not Unicode text: DynamoDB stores UTF-8, and no client could read it back.
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** A string of well-formed Unicode (the base of every text the API stores). */
export const unicodeString = v.pipe(
  v.string('must be a string'),
  v.check((s) => !UNPAIRED_SURROGATE.test(s), 'must be well-formed Unicode (no unpaired surrogate)'),
);

/** At most `max` characters; bin/openapi.ts states it as JSON Schema's maxLength (same unit). */
export const maxChars = (max: number) => v.check((s: string) => charCount(s) <= max, `must be at most ${max} characters`);

/** Whether `s` is an absolute http(s) URL. */
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** An absolute http(s) URL, as long as the limit allows. */
export const httpUrl = v.pipe(
  unicodeString,
  maxChars(LIMITS.urlLength),
  v.check(isHttpUrl, 'must be an http(s) URL'),
);

/**
 * Whether `test(node, depth)` holds for every node of a JSON value (the value itself at depth 1). Iterative,
 * so a value nested thousands deep is walked, never a stack overflow.
 */
function everyNode(value: unknown, test: (node: unknown, depth: number) => boolean): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!test(node, depth)) return false;
    if (typeof node === 'object' && node !== null) for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return true;
}

/**
 * A plain JSON object (not an array, not null), nested at most `maxDepth` levels (objects and arrays), with
 * finite numbers (JSON.parse makes ±Infinity of one beyond a double's range), whose serialized size stays
 * under `maxBytes`. Stored as its JSON text (lambdas/entities/chats.ts), so any key and number JSON allows
 * round-trips.
 */
export const jsonObject = (maxBytes: number, maxDepth: number) =>
  // Each rule only once the previous ones hold: the size is never measured on a value too deep to serialize.
  v.config(v.pipe(
    v.custom<Record<string, unknown>>(
      (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
      'must be a JSON object',
    ),
    v.check(
      (x) => everyNode(x, (node, depth) => depth <= maxDepth || typeof node !== 'object' || node === null),
      `must be nested at most ${maxDepth} levels deep`,
    ),
    v.check((x) => everyNode(x, (node) => typeof node !== 'number' || Number.isFinite(node)), 'numbers must be within ±1.7976931348623157e308'),
    v.check((x) => Buffer.byteLength(JSON.stringify(x)) <= maxBytes, `must be at most ${maxBytes} bytes as JSON`),
  ), { abortPipeEarly: true });

/** A string of min..max characters (Unicode code points, as JSON Schema and docs/api.md count them). */
export const text = (min: number, max: number) =>
  min > 0
    ? v.pipe(unicodeString, v.check((s: string) => charCount(s) >= min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`), maxChars(max))
    : v.pipe(unicodeString, maxChars(max));

/** A string of 1..max characters that is not only whitespace (a chat's name, an edited message's content). */
export const nonBlankText = (max: number) => v.pipe(text(1, max), v.check((s) => s.trim() !== '', 'must not be blank'));

/** A MIME type as a file declares it (`type/subtype`, no parameters). */
export const MIME_RE = /^[A-Za-z0-9][\w.+-]*\/[\w.+-]+$/;

/** A file's name as stored: its last path segment, without control characters, at most the limit ('file' if none). */
export function cleanFileName(raw: string | undefined): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  // A lone surrogate (a UTF-16 name cut in half) becomes U+FFFD: the name must stay encodable (a URL, a header).
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const name = base.replace(/[\u0000-\u001f\u007f]/g, '').replace(/\p{Cs}/gu, '\uFFFD').trim();
  return truncateChars(name, LIMITS.fileNameLength) || 'file';
}
