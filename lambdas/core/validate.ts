// Request validation with valibot: one parse helper turns the first issue into a readable 400.
import * as v from 'valibot';
import { BadRequestError } from './errors';
import { LIMITS } from './limits';

export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = issue.path?.map((p) => String(p.key)).join('.');
  throw new BadRequestError(path ? `${path}: ${issue.message}` : issue.message);
}

/** An absolute http(s) URL, as long as the limit allows. */
export const httpUrl = v.pipe(
  v.string('must be a string'),
  v.maxLength(LIMITS.urlLength, `must be at most ${LIMITS.urlLength} characters`),
  v.check((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL'),
);

/** A plain JSON object (not an array, not null) whose serialized size stays under `maxBytes`. */
export const jsonObject = (maxBytes: number) =>
  v.pipe(
    v.custom<Record<string, unknown>>(
      (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
      'must be a JSON object',
    ),
    v.check((x) => Buffer.byteLength(JSON.stringify(x)) <= maxBytes, `must be at most ${maxBytes} bytes as JSON`),
  );

/** A string of min..max characters (UTF-16 code units, as JavaScript and docs/api.md count them). */
export const text = (min: number, max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
  );

/** A string of 1..max characters that is not only whitespace (a chat's name, an edited message's content). */
export const nonBlankText = (max: number) => v.pipe(text(1, max), v.check((s) => s.trim() !== '', 'must not be blank'));
