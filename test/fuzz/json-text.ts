// Raw JSON text for the fuzzer: free-form objects with the numbers, keys and nesting JSON allows but JavaScript would not keep.
import fc from 'fast-check';

/** JSON text sent verbatim inside a body: 9007199254740993 or 1e308 must reach the server as written. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value; RawJson parts verbatim, undefined properties left out. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : toJsonText(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Sets a key as an own property, even "__proto__" (an assignment would change the prototype instead). */
export function withKey<T extends object>(obj: T, key: string, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

export const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
export const codePoints = (s: string): number => [...s].length;

/** Nesting depth of JSON text (objects and arrays, the outermost included), counted without recursion. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') max = Math.max(max, ++depth);
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

/** Number literals a double holds (some not exactly): beyond 2^53, near the double's limits, tiny and huge. */
export const HARD_NUMBERS = [
  '-2.3e+214', '6.5e-63', '1e308', '9007199254740993', '1e-140', '-9007199254740993', '1.7976931348623157e308',
  '-1.7976931348623157E+308', '5e-324', '2.2250738585072014e-308', '123456789012345678901234567890', '-0', '0',
  '0.1', '1E+2', '1e126', '1e127', '1e-130', '1e-131', '-1e-131', '12345678901234567890.5', '0.30000000000000004',
  '18446744073709551616', '-0.0', '1.0', '4.9e-324',
];

const digits = (min: number, max: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));

/** Number literals within a double's range, written as JSON allows (no leading zeros). */
export const numberLiteral: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HARD_NUMBERS) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), digits(0, 16), fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 290 }))
      .map(([neg, lead, frac, e, sign, exp]) => `${neg ? '-' : ''}${lead}${frac ? `.${frac}` : ''}${e}${sign}${exp}`),
  },
);

/** One code point per unit, so lengths count as JSON Schema counts them: ASCII mostly, some BMP, emoji, anything. */
export const codePointUnit: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCodePoint(c)) },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', 'ж', 'ع', '中', 'ñ', '\u00a0', '\u200f', '\u200e', '\u202e', '\u200d', '\ufeff', '\u0301', '\u2028') },
  { weight: 3, arbitrary: fc.constantFrom('😀', '🙂', '👍', '𝄞', '🏳', '🧑', '🦄', '\u{10FFFD}', '\u{1F1FA}') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

export const EMOJI = ['😀', '𝄞', '🦄', '👍'];

/** Drops code points from the end until the UTF-8 form fits `maxBytes`. */
export function clampBytes(s: string, maxBytes: number | undefined): string {
  if (maxBytes === undefined || utf8Bytes(s) <= maxBytes) return s;
  const cps = [...s];
  while (cps.length && utf8Bytes(cps.join('')) > maxBytes) cps.pop();
  return cps.join('');
}

/** Text of `min`..`max` code points: mostly short, sometimes exactly the limit, sometimes the limit in emoji. */
export function text(min: number, max: number, maxBytes?: number): fc.Arbitrary<string> {
  const low = Math.max(min, 1);
  const choices: fc.WeightedArbitrary<string>[] = [
    { weight: 6, arbitrary: fc.string({ unit: codePointUnit, minLength: low, maxLength: Math.max(low, Math.min(max, 40)) }) },
    { weight: 2, arbitrary: fc.string({ unit: codePointUnit, minLength: low, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: codePointUnit, minLength: max, maxLength: max }) },
    { weight: 1, arbitrary: fc.constantFrom(...EMOJI).map((e) => e.repeat(max)) },
  ];
  if (min === 0) choices.push({ weight: 1, arbitrary: fc.constant('') });
  return fc.oneof(...choices).map((s) => clampBytes(s, maxBytes));
}

/** Keys JSON allows that stores and query languages stumble on: empty, dots, '#', ':', '__proto__', unicode. */
export const hardKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '', '.', 'a.b', '#', 'a#b', '#a', ':a', '$', '$ref', '__proto__', 'constructor', 'prototype', 'toString',
      'hasOwnProperty', '😀', 'ключ', '键', '\u202eabc', ' ', '\t', 'a b', '[0]', 'a[0].b', '/', '~1', 'null', 'pk', 'sk',
      '%s', '${x}', "'", '"', '\\', '\u0000', 'a'.repeat(200),
    ),
  },
  { weight: 3, arbitrary: fc.string({ unit: codePointUnit, maxLength: 12 }) },
);

const leaf: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: numberLiteral },
  { weight: 3, arbitrary: fc.string({ unit: codePointUnit, maxLength: 30 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
);

const objectText = (entries: [string, string][]) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/** Arbitrary JSON trees as text (a few levels, a few entries each). */
const tree = fc.letrec<{ node: string; arr: string; obj: string }>((tie) => ({
  node: fc.oneof({ maxDepth: 5, depthIdentifier: 'json-text' }, leaf, tie('arr'), tie('obj')),
  arr: fc.array(tie('node'), { maxLength: 6 }).map((xs) => `[${xs.join(',')}]`),
  obj: fc.uniqueArray(fc.tuple(hardKey, tie('node')), { maxLength: 6, selector: (e) => e[0] }).map(objectText),
}));

/** Text of an object nested `depth` levels (itself level 1) of objects, arrays or both, a scalar (or nothing) inside. */
export function nested(depth: number, style: 'objects' | 'arrays' | 'mixed', leafText?: string, key = 'a'): string {
  const k = JSON.stringify(key);
  const opens: string[] = [];
  const closes: string[] = [];
  for (let level = 1; level <= depth; level++) {
    const arr = level > 1 && (style === 'arrays' || (style === 'mixed' && level % 2 === 0));
    const innermost = level === depth && leafText === undefined;
    opens.push(arr ? '[' : innermost ? '{' : `{${k}:`);
    closes.push(arr ? ']' : '}');
  }
  return opens.join('') + (leafText ?? '') + closes.reverse().join('');
}

/** Deeply nested objects at one of the given depths. */
export const deepObject = (depths: fc.Arbitrary<number>): fc.Arbitrary<string> =>
  fc
    .tuple(depths, fc.constantFrom<'objects' | 'arrays' | 'mixed'>('objects', 'arrays', 'mixed'), fc.option(leaf, { nil: undefined }), hardKey)
    .map(([d, style, l, k]) => nested(d, style, l, k));

/** An object whose text is exactly `bytes` long (ASCII or emoji padding), to sit on a size limit. */
export function objectOfSize(bytes: number, emoji: boolean): string {
  const pad = bytes - utf8Bytes('{"k":""}');
  const fill = emoji ? '😀'.repeat(Math.floor(pad / 4)) + 'x'.repeat(pad % 4) : 'x'.repeat(pad);
  return `{"k":${JSON.stringify(fill)}}`;
}

/**
 * Free-form JSON objects valid for a schema like ChatRequest.additional_info: at most `maxBytes` of text and
 * `maxDepth` levels, with hard numbers and keys; deep chains up to the limit (or as deep as the size allows).
 */
export function freeFormObject(maxBytes: number, maxDepth: number): fc.Arbitrary<RawJson> {
  const depthCap = Number.isFinite(maxDepth) ? maxDepth : Math.floor((maxBytes - 2) / 2);
  const depths = Number.isFinite(maxDepth)
    ? fc.oneof(fc.constant(maxDepth), fc.integer({ min: 2, max: maxDepth }))
    : fc.oneof(fc.constantFrom(40, 1000, depthCap), fc.integer({ min: 2, max: depthCap }));
  const hardNumbers = fc
    .uniqueArray(fc.tuple(hardKey, fc.oneof(numberLiteral, fc.array(numberLiteral, { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`))), { minLength: 1, maxLength: 8, selector: (e) => e[0] })
    .map(objectText);
  return fc
    .oneof(
      { weight: 4, arbitrary: tree.obj },
      { weight: 3, arbitrary: hardNumbers },
      { weight: 2, arbitrary: deepObject(depths) },
      { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 16 }), fc.boolean()).map(([under, emoji]) => objectOfSize(maxBytes - under, emoji)) },
      { weight: 1, arbitrary: fc.constant('{}') },
    )
    .filter((t) => utf8Bytes(t) <= maxBytes && jsonDepth(t) <= depthCap)
    .map((t) => new RawJson(t));
}
