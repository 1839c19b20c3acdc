// Valid values for the JSON Schemas of docs/openapi.yaml, as fast-check arbitraries: the fuzzer's "valid" side.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { OPENAPI_PATH } from '../support/openapi';
import { RawJson, codePoints, freeFormObject, hardKey, numberLiteral, text, toJsonText } from './json-text';

/** A JSON Schema of the document, with the keywords the fuzzer reads (others stay open). */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  description?: string;
  'x-max-bytes'?: number;
  'x-max-depth'?: number;
  'x-max-utf8-bytes'?: number;
  [keyword: string]: unknown;
}

export const loadDoc = (): Schema => parse(readFileSync(OPENAPI_PATH, 'utf8')) as Schema;

/**
 * What generation needs: the document (for `$ref`) and, optionally, values the caller knows better than the
 * schema (a real client key, the chat's own file ids). `path` is dotted: `files`, `complete_files.*.url`.
 */
export interface SchemaContext {
  doc: Schema;
  override?: (path: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;
}

/** Follows `$ref` (within the document) until a schema without one. */
export function deref(doc: Schema, schema: Schema): Schema {
  let s = schema;
  for (let hops = 0; s && typeof s.$ref === 'string'; hops++) {
    if (!s.$ref.startsWith('#/') || hops > 32) throw new Error(`unsupported $ref ${s.$ref}`);
    s = s.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as Schema;
  }
  return s;
}

/** An object schema that says nothing of its members ("any JSON object"). */
export const isFreeForm = (s: Schema): boolean =>
  s.type === 'object' && !s.properties && !s.patternProperties && !s.anyOf && !s.oneOf && typeof s.additionalProperties !== 'object' && s.additionalProperties !== false;

/** A byte limit stated in a description ("at most 8192 bytes", "4,194,304 bytes"), as the document words it. */
export function bytesFromText(description: string | undefined): number | undefined {
  const m = /at most ([\d,]+) bytes/.exec(description ?? '');
  return m ? Number(m[1].replace(/,/g, '')) : undefined;
}

/** The byte and depth limits of a free-form object: extension keywords first, else the description. */
export function freeFormLimits(s: Schema): { maxBytes: number; maxDepth: number } {
  return { maxBytes: s['x-max-bytes'] ?? bytesFromText(s.description) ?? 8192, maxDepth: s['x-max-depth'] ?? Infinity };
}

const typesOf = (s: Schema): string[] => {
  if (Array.isArray(s.type)) return s.type;
  if (s.type) return [s.type];
  if (s.properties) return ['object'];
  if (s.items) return ['array'];
  return [];
};

/** A valid value of `schema`; free-form parts come as RawJson (see toJsonText). */
export function schemaArbitrary(ctx: SchemaContext, schema: Schema, path = ''): fc.Arbitrary<unknown> {
  const s = deref(ctx.doc, schema);
  const overridden = ctx.override?.(path, s);
  if (overridden) return overridden;
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Schema) => schemaArbitrary(ctx, b, path)));
  const types = typesOf(s);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((t) => forType(ctx, s, t, path)));
}

function forType(ctx: SchemaContext, s: Schema, type: string, path: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerIn(s);
    case 'number':
      return fc.oneof(integerIn(s), fc.double({ min: s.minimum, max: s.maximum, noNaN: true, noDefaultInfinity: true }));
    case 'string':
      return stringArb(s);
    case 'array':
      return arrayArb(ctx, s, path);
    case 'object':
      return objectArb(ctx, s, path);
    default:
      throw new Error(`unsupported type ${type} at ${path || '(root)'}`);
  }
}

/** Integers of any safe range (fc.integer stops at 32 bits): small ones, the bounds, anything between. */
export function integerIn(s: Schema): fc.Arbitrary<number> {
  const min = Math.max(s.minimum ?? Number.MIN_SAFE_INTEGER, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -Infinity);
  const max = Math.min(s.maximum ?? Number.MAX_SAFE_INTEGER, s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Infinity);
  const lo = Math.max(min, -1000);
  const hi = Math.min(max, 1000);
  return fc.oneof(
    ...(lo <= hi ? [{ weight: 4, arbitrary: fc.integer({ min: lo, max: hi }) }] : []),
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
    { weight: 1, arbitrary: fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number) },
  );
}

/** Web URLs of the given schemes within `max` code points; sometimes exactly `max` long. */
export function urlArb(max = 2048): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 5, arbitrary: fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }) },
      { weight: 1, arbitrary: fc.constantFrom('http', 'https').map((p) => `${p}://example.com/${'a'.repeat(max - p.length - 16)}`) },
      { weight: 1, arbitrary: fc.constantFrom('http://localhost', 'http://[::1]:8080/x', 'https://user:pass@host:1/p?q=1#f', 'https://xn--e1afmkfd.xn--p1ai/', 'http://127.0.0.1:1/') },
    )
    .filter((u) => codePoints(u) <= max);
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 300);
  const fits = (x: string) => codePoints(x) >= min && codePoints(x) <= max;
  const re = s.pattern ? new RegExp(s.pattern, 'u') : undefined;
  if (s.format === 'uri') return urlArb(max).filter((u) => !re || re.test(u));
  if (s.pattern && /^\^.*\$$/.test(s.pattern)) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  const base = text(min, max, s['x-max-utf8-bytes']);
  return re ? base.filter((x) => re.test(x)) : base;
}

function arrayArb(ctx: SchemaContext, s: Schema, path: string): fc.Arbitrary<unknown[]> {
  const item = schemaArbitrary(ctx, s.items ?? {}, `${path}.*`);
  const minLength = s.minItems ?? 0;
  const maxLength = s.maxItems ?? Math.max(minLength, 5);
  const make = (lo: number, hi: number) =>
    s.uniqueItems ? fc.uniqueArray(item, { minLength: lo, maxLength: hi, selector: toJsonText }) : fc.array(item, { minLength: lo, maxLength: hi });
  return fc.oneof({ weight: 4, arbitrary: make(minLength, maxLength) }, { weight: 1, arbitrary: make(maxLength, maxLength) });
}

function objectArb(ctx: SchemaContext, s: Schema, path: string): fc.Arbitrary<unknown> {
  if (isFreeForm(s)) {
    const { maxBytes, maxDepth } = freeFormLimits(s);
    return freeFormObject(maxBytes, maxDepth);
  }
  const required = new Set<string>(s.required ?? []);
  const props: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    const value = schemaArbitrary(ctx, sub, path ? `${path}.${name}` : name);
    if (required.has(name)) {
      props[name] = value;
      continue;
    }
    // Optional: present, absent, or its documented default spelled out.
    const resolved = deref(ctx.doc, sub);
    props[name] = fc.oneof(
      { weight: 4, arbitrary: value },
      { weight: 2, arbitrary: fc.constant(undefined) },
      ...('default' in resolved ? [{ weight: 1, arbitrary: fc.constant(resolved.default) }] : []),
    );
  }
  // Members the schema does not name are allowed unless additionalProperties is false: now and then, a few.
  const known = new Set(Object.keys(s.properties ?? {}));
  const extraValue = typeof s.additionalProperties === 'object' ? schemaArbitrary(ctx, s.additionalProperties, `${path}.+`) : numberLiteral.map((n) => new RawJson(n));
  const extras =
    s.additionalProperties === false
      ? fc.constant([] as [string, unknown][])
      : fc.oneof({ weight: 9, arbitrary: fc.constant([] as [string, unknown][]) }, { weight: 1, arbitrary: fc.array(fc.tuple(hardKey.filter((k) => !known.has(k)), extraValue), { maxLength: 2 }) });
  return fc.tuple(fc.record(props), extras).map(([base, extra]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of extra) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
    return out;
  });
}
