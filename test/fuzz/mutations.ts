// Mutated request parts (JSON bodies, path segments, query and header values): the fuzzer's "must be refused cleanly" side.
import fc from 'fast-check';
import { deref, freeFormLimits, isFreeForm, type Schema, type SchemaContext } from './schema-arbitrary';
import { EMOJI, RawJson, hardKey, nested, objectOfSize, toJsonText, withKey } from './json-text';

/** A request body as sent: text or bytes (a function for the huge ones, made only when sent) and its type. */
export interface BodyVariant {
  body?: string | Buffer | (() => string | Buffer);
  contentType?: string;
  tag: string;
}

type Obj = Record<string, unknown>;

/** The JSON types a schema admits ('any' when it says nothing). */
function admitted(doc: Schema, schema: Schema): Set<string> | 'any' {
  const s = deref(doc, schema);
  if ('const' in s || s.enum) return new Set([...('const' in s ? [s.const] : []), ...(s.enum ?? [])].map(jsonType));
  const branches = s.anyOf ?? s.oneOf;
  if (branches) {
    const all = branches.map((b) => admitted(doc, b));
    return all.includes('any') ? 'any' : new Set(all.flatMap((x) => (x === 'any' ? [] : [...x])));
  }
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  return types.length ? new Set(types.flatMap((t) => (t === 'number' ? ['number', 'integer'] : [t]))) : 'any';
}

const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v === 'number' ? 'number' : typeof v;

const WRONG_VALUES: unknown[] = [0, -1, 1.5, 1e21, true, false, null, '', 'x', [], ['x'], [1, 2], {}, { a: 1 }, new RawJson('9007199254740993')];

/** Strings escaped as JSON allows but a store may not: NUL, lone surrogates, direction overrides, separators. */
export const NASTY_STRINGS = [
  '"\\u0000"', '"a\\u0000b"', '"\\ud800"', '"\\udc00"', '"a\\ud800b"', '"\\ud800\\ud800"', '"\\udfff\\ud800"',
  '"\\u202eevil"', '"\\u200f\\u200e"', '"\\ufeff"', '"\\u2028\\u2029"', '"\\u001b[31m"', '"\\uffff"', '"\\ufffe"',
  '"\\r\\n\\t\\b\\f"', '" "', '"\\u00a0"', '"\\u0301"',
].map((t) => new RawJson(t));

/** Numbers beyond a double (or under its smallest): refused or kept, never a crash. */
export const OUT_OF_RANGE = ['1e400', '-1e400', '1e-400', '-1e-400', `1${'0'.repeat(400)}`, '1e999', '2e308', '-1.8e308', '1e-330'];

const INVALID_JSON = [
  '', ' ', '{', '}', '{"', '{"a":}', '{"a":1,}', '{,}', "{'a':1}", '{a:1}', 'NaN', '{"a":NaN}', '{"a":Infinity}', '{"a":-Infinity}',
  '{"a":undefined}', '{"a":01}', '{"a":.5}', '{"a":+1}', '{"a":0x10}', '{"a":1e}', '{"a":"\\x41"}', '{"a":"\\u12"}', '{"a":"\t"}',
  '{"a":"\u0001"}', '{}{}', '{} x', '\ufeff{}', '{"a":1}\u0000', '{/*c*/}', '[', '"', 'nul', 'tru', '\u0000', '{"a":"b"\n',
];

const NON_OBJECTS = ['[]', '[{}]', '"x"', '""', 'null', '0', '-1.5', 'true', 'false', '1e400', '[null]'];

export const CONTENT_TYPES = [
  'text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/xml', 'application/json-patch+json',
  'application/octet-stream', 'APPLICATION/JSON', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/jsonx', '*/*', 'json',
];

/** Deep nesting: just past a stated depth, and far past it (parsers that recurse fall over at thousands). */
export const deepDepths = (limit: number): fc.Arbitrary<number> =>
  fc.constantFrom(...(Number.isFinite(limit) ? [limit + 1] : []), 33, 40, 1000, 5000, 20000);

const deepValue = (limit: number) =>
  fc.tuple(deepDepths(limit), fc.constantFrom<'objects' | 'arrays' | 'mixed'>('objects', 'arrays', 'mixed')).map(([d, style]) => new RawJson(nested(d, style)));

/** Over a length limit: by one code point, by one emoji, and by a lot. */
const overLength = (max: number) =>
  fc.constantFrom(
    new RawJson(JSON.stringify('x'.repeat(max + 1))),
    new RawJson(JSON.stringify(EMOJI[0].repeat(max + 1))),
    new RawJson(JSON.stringify('y'.repeat(Math.max(100_000, max * 10)))),
  );

/** Mutated JSON bodies for a request schema, built from a valid value (one thing wrong, by kind). */
export function jsonMutations(ctx: SchemaContext, schema: Schema, valid: fc.Arbitrary<Obj>): fc.Arbitrary<BodyVariant> {
  const s = deref(ctx.doc, schema);
  const props = Object.entries(s.properties ?? {}).map(([name, sub]) => ({ name, s: deref(ctx.doc, sub) }));
  const json = (tag: string) => (value: unknown) => ({ body: toJsonText(value), contentType: 'application/json', tag: `body:${tag}` });
  const setProp = (base: Obj, name: string, value: unknown) => withKey({ ...base }, name, value);
  const pick = <T>(xs: T[]) => fc.constantFrom(...xs);
  const kinds: fc.WeightedArbitrary<BodyVariant>[] = [];
  const add = (weight: number, arbitrary: fc.Arbitrary<BodyVariant>) => kinds.push({ weight, arbitrary });

  if (props.length) {
    add(4, fc.tuple(valid, pick(props)).chain(([base, p]) => {
      const ok = admitted(ctx.doc, p.s);
      const wrong = WRONG_VALUES.filter((v) => ok !== 'any' && !ok.has(v instanceof RawJson ? 'integer' : jsonType(v)));
      return wrong.length ? pick(wrong).map((v) => json(`wrong-type:${p.name}`)(setProp(base, p.name, v))) : fc.constant(json('unchanged')(base));
    }));
    add(3, fc.tuple(valid, pick(props), deepValue(Infinity)).map(([base, p, deep]) => json(`deep:${p.name}`)(setProp(base, p.name, deep))));
    add(3, fc.tuple(valid, pick(props), pick(NASTY_STRINGS)).map(([base, p, v]) => json(`unicode:${p.name}`)(setProp(base, p.name, v))));
  }
  const required: string[] = s.required ?? [];
  if (required.length) add(3, fc.tuple(valid, pick(required)).map(([base, name]) => {
    const copy = { ...base };
    delete copy[name];
    return json(`missing:${name}`)(copy);
  }));
  add(2, fc.tuple(valid, fc.array(fc.tuple(fc.oneof(hardKey, fc.constantFrom('__proto__', 'constructor')), fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 3 })).map(([base, extra]) =>
    json('extra-fields')(extra.reduce((o, [k, v]) => (k in o && k !== '__proto__' ? o : withKey(o, k, v)), { ...base })),
  ));

  for (const p of props) {
    const ok = admitted(ctx.doc, p.s);
    const stringy = [p.s, ...(p.s.anyOf ?? p.s.oneOf ?? []).map((b: Schema) => deref(ctx.doc, b))].find((b: Schema) => b.type === 'string');
    if (stringy?.maxLength !== undefined) add(2, fc.tuple(valid, overLength(stringy.maxLength)).map(([base, v]) => json(`too-long:${p.name}`)(setProp(base, p.name, v))));
    if (stringy?.pattern) {
      const re = new RegExp(stringy.pattern, 'u');
      const bad = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', ' ', 'x'.repeat(129), 'A'.repeat(8) + '-0000-4000-8000-' + '0'.repeat(12))).filter((x) => !re.test(x));
      add(1, fc.tuple(valid, bad).map(([base, v]) => json(`pattern:${p.name}`)(setProp(base, p.name, v))));
    }
    if (stringy?.format === 'uri') {
      const urls = ['ftp://x.y/', 'javascript:alert(1)', 'HTTP://X.Y/', 'http//x', 'https://例え.jp/パス', 'http://', 'data:text/html,x', '//x.y/z', 'http://x y/'];
      add(1, fc.tuple(valid, pick(urls)).map(([base, v]) => json(`uri:${p.name}`)(setProp(base, p.name, v))));
    }
    if (p.s.enum || (ok !== 'any' && p.s.anyOf?.some((b: Schema) => deref(ctx.doc, b).enum)))
      add(1, fc.tuple(valid, pick(['TEXT', '', ' text', 'text\u0000', 'Bot', 'null', 'x'.repeat(300)])).map(([base, v]) => json(`enum:${p.name}`)(setProp(base, p.name, v))));
    if (p.s.type === 'integer') {
      const nums = [(p.s.minimum ?? NaN) - 1, (p.s.maximum ?? NaN) + 1, 1.5, -0.5].filter(Number.isFinite).map(String).concat(OUT_OF_RANGE, ['9007199254740993', '1e2', '-0']);
      add(2, fc.tuple(valid, pick(nums)).map(([base, v]) => json(`range:${p.name}`)(setProp(base, p.name, new RawJson(v)))));
    }
    if (p.s.type === 'array' || p.s.anyOf?.some((b: Schema) => deref(ctx.doc, b).type === 'array')) {
      const arr = [p.s, ...(p.s.anyOf ?? [])].map((b: Schema) => deref(ctx.doc, b)).find((b) => b.type === 'array')!;
      const max = arr.maxItems ?? 10;
      const items = [['not-a-uuid'], ['0AF0E5C2-0000-4000-8000-000000000000'], Array(max + 1).fill(0).map((_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`), ['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000'], [{ url: 'ftp://x', type: 'photo' }], [{}], [null], Array(1000).fill('x')];
      add(2, fc.tuple(valid, pick(items)).map(([base, v]) => json(`items:${p.name}`)(setProp(base, p.name, v))));
    }
    if (isFreeForm(p.s)) {
      const { maxBytes, maxDepth } = freeFormLimits(p.s);
      const over = fc.oneof(
        fc.tuple(deepDepths(maxDepth), fc.constantFrom<'objects' | 'arrays' | 'mixed'>('objects', 'arrays', 'mixed'), fc.constantFrom('', '1e308', '"x"')).map(([d, st, l]) => nested(d, st, l || undefined)),
        pick(OUT_OF_RANGE).map((n) => `{"n":${n}}`),
        pick(OUT_OF_RANGE).map((n) => `{"a":[1,{"b":${n}}]}`),
        fc.constantFrom(objectOfSize(maxBytes + 1, false), objectOfSize(maxBytes + 3, true), objectOfSize(maxBytes * 20, false)),
        fc.constantFrom('{"\\ud800":1}', '{"a":"\\udc00"}', '{"\\u0000":"\\u0000"}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"p":1}}}', '{"a":1,"a":2}'),
        fc.constantFrom('[]', '"x"', '1', 'null', 'true', '[{"a":1}]'),
      );
      add(8, fc.tuple(valid, over).map(([base, v]) => json(`free-form:${p.name}`)(setProp(base, p.name, new RawJson(v)))));
    }
  }

  add(2, fc.tuple(fc.constantFrom(...INVALID_JSON), fc.constant(0)).map(([t]) => ({ body: t, contentType: 'application/json', tag: 'body:invalid-json' })));
  add(1, valid.chain((base) => {
    const t = toJsonText(base);
    return fc.integer({ min: 0, max: Math.max(0, t.length - 1) }).map((cut) => ({ body: t.slice(0, cut), contentType: 'application/json', tag: 'body:truncated' }));
  }));
  add(2, fc.oneof(fc.constantFrom(...NON_OBJECTS), valid.map((b) => `[${toJsonText(b)}]`), valid.map((b) => JSON.stringify(toJsonText(b)))).map((t) => ({ body: t, contentType: 'application/json', tag: 'body:not-an-object' })));
  add(1, fc.tuple(valid, deepDepths(Infinity)).map(([, d]) => ({ body: nested(d, 'arrays'), contentType: 'application/json', tag: `body:deep-root` })));
  add(1, valid.map((base) => {
    const t = toJsonText(base);
    const first = Object.keys(base)[0] ?? 'x';
    return { body: t.length > 2 ? `${t.slice(0, -1)},${JSON.stringify(first)}:{"dup":[1]}}` : `{"x":1,"x":"2"}`, contentType: 'application/json', tag: 'body:duplicate-key' };
  }));
  add(2, fc.tuple(valid, fc.constantFrom(...CONTENT_TYPES, undefined)).map(([base, type]) => ({
    // A Buffer body: fetch adds no content-type of its own, so "none" really is none.
    body: Buffer.from(toJsonText(base)),
    contentType: type,
    tag: `content-type:${type ?? 'none'}`,
  })));
  add(1, valid.map((base) => {
    const t = toJsonText(base);
    return { body: Buffer.concat([Buffer.from(t.slice(0, -1) + (t.length > 2 ? ',' : '') + '"bytes":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]), contentType: 'application/json', tag: 'body:invalid-utf8' };
  }));
  add(1, valid.map((base) => ({ body: Buffer.from(toJsonText(base), 'utf16le'), contentType: 'application/json; charset=utf-16le', tag: 'body:utf-16' })));
  // Past API Gateway's 10 MB: made only when sent.
  add(1, fc.constant({ body: () => `{"content":"${'x'.repeat(10 * 1024 * 1024 + 10)}","name":"x"}`, contentType: 'application/json', tag: 'body:over-10MB' }));
  return fc.oneof(...kinds);
}

/** A body where the operation takes none: ignored or refused, never a crash. */
export const unexpectedBody: fc.Arbitrary<BodyVariant> = fc.oneof(
  fc.constantFrom('{"a":1}', '{', '[]', 'null', '').map((t) => ({ body: t, contentType: 'application/json', tag: 'body:unexpected' })),
  fc.constantFrom(1000, 20000).map((d) => ({ body: nested(d, 'arrays'), contentType: 'application/json', tag: 'body:unexpected-deep' })),
  fc.constant({ body: () => 'x'.repeat(1024 * 1024), contentType: 'text/plain', tag: 'body:unexpected-1MB' }),
);

/** Path segments that are not ids: odd encodings, traversal, injection, overlong. */
export const badSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'not-a-uuid', '0', 'null', 'undefined', '%00', '%2e%2e', '..', '.', '%2F', '%2f..%2f', '%zz', '%', '%F0%9F%98%80', '%ED%A0%80', '%C0%AF', 'a'.repeat(300),
    '%20', '+', '*', '~', "'", '%27%20OR%201%3D1', '%7Bchat_id%7D', '$', '-1', '1'.repeat(19), '１２３', '%EF%BC%91', '%0A', '%0D%0A', '%09', '9'.repeat(5000),
  ),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => encodeURIComponent(s)),
);

/** Variants of a real UUID that are no longer one (case, braces, dashes, extra characters). */
export const uuidVariants = (id: string): string[] => [id.toUpperCase(), id.replace(/-/g, ''), `%7B${id}%7D`, `${id}x`, id.slice(0, -1), `${id}%20`, ` ${id}`.replace(' ', '%20'), `${id}%00`];

/** Values that are not message ids (19 digits). */
export const badMessageIds = ['1'.repeat(18), '1'.repeat(20), '-' + '1'.repeat(18), '1e18', '0x' + 'f'.repeat(17), 'a'.repeat(19), '1'.repeat(18) + '%20', '%EF%BC%91'.repeat(19), '1'.repeat(18) + '.'];

/** Bad values for a query parameter of this schema, plus what fits no schema. */
export function badQueryValues(s: Schema): string[] {
  const common = ['', ' ', '%zz', '%00', 'null', '[]', '{}', 'x'.repeat(3000), '%F0%9F%98%80'];
  if (s.type === 'integer') return [...common, '0', '-1', String((s.maximum ?? 100) + 1), '1.5', 'abc', '1e2', '+1', '01', '0x10', '99999999999999999999', '%D9%A1', 'NaN', 'Infinity', String(s.minimum ?? 1) + '%20'];
  if (s.pattern) return [...common, ...badMessageIds];
  return [...common, 'x'.repeat((s.maxLength ?? 2048) + 1), 'eyJ9', 'eyJwayI6IlVTRVIjeCJ9', 'e30', Buffer.from('{"pk":{"S":"x"}}').toString('base64url'), '!!!!'];
}

/** Header values fetch can send (latin1, no CR/LF) that break a pattern: empty, spaces, overlong, non-ASCII. */
export const BAD_HEADER_VALUES = ['', 'a b', 'x'.repeat(129), 'x'.repeat(4096), 'é', '\tx', 'ÿÿ', '"quoted"', 'a,b', '%00'];
