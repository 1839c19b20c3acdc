// Multipart bodies for the upload routes, built by hand so they can be valid per the schema or broken in every way.
import fc from 'fast-check';
import { deref, schemaArbitrary, bytesFromText, type Schema, type SchemaContext } from './schema-arbitrary';
import { badSegment, type BodyVariant } from './mutations';
import { codePointUnit } from './json-text';

export interface Part {
  name: string;
  /** undefined: no filename parameter (a plain field). */
  filename?: string;
  /** RFC 5987 form (`filename*=UTF-8''...`), already encoded. */
  filenameStar?: string;
  contentType?: string;
  data: Buffer | string;
  /** Replaces the part's headers entirely. */
  rawHeaders?: string;
}

export interface Multipart {
  parts: Part[];
  boundary: string;
}

/** The bytes of a multipart/form-data body; `close` false leaves the closing delimiter off, `eol` may be bare LF. */
export function multipartBody({ parts, boundary }: Multipart, close = true, eol = '\r\n'): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition =
      `Content-Disposition: form-data; name="${p.name}"` +
      (p.filename !== undefined ? `; filename="${p.filename}"` : '') +
      (p.filenameStar !== undefined ? `; filename*=UTF-8''${p.filenameStar}` : '');
    const headers = p.rawHeaders ?? disposition + eol + (p.contentType ? `Content-Type: ${p.contentType}${eol}` : '');
    chunks.push(Buffer.from(`--${boundary}${eol}${headers}${eol}`), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from(eol));
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--${eol}`));
  return Buffer.concat(chunks);
}

const contentTypeOf = (m: Multipart, quoted = false) => `multipart/form-data; boundary=${quoted ? `"${m.boundary}"` : m.boundary}`;

/** Filenames a header parameter can carry in quotes (no quote, backslash, CR or LF). */
// eslint-disable-next-line no-control-regex -- control characters are what a quoted header parameter cannot carry: they are replaced
const filename = fc.string({ unit: codePointUnit, minLength: 1, maxLength: 60 }).map((s) => s.replace(/["\\\r\n\u0000-\u001f\u007f]/g, '_'));

const FILE_TYPES = ['image/png', 'image/jpeg', 'text/plain', 'application/pdf', 'video/mp4', 'audio/mpeg', 'audio/ogg', 'application/octet-stream', 'image/svg+xml', undefined];

/** The file member of an upload schema (the one with contentMediaType) and its byte limit from its description. */
export function fileMember(ctx: SchemaContext, schema: Schema): { name: string; limit: number } {
  const s = deref(ctx.doc, schema);
  const [name, sub] = Object.entries(s.properties ?? {}).find(([, p]) => deref(ctx.doc, p).contentMediaType) ?? ['file', {}];
  return { name, limit: bytesFromText(deref(ctx.doc, sub).description) ?? 4 * 1024 * 1024 };
}

/** Valid upload bodies: the file part (random bytes, name and type) and the other members per the schema. */
export function validMultipart(ctx: SchemaContext, schema: Schema): fc.Arbitrary<Multipart> {
  const s = deref(ctx.doc, schema);
  const file = fileMember(ctx, schema);
  const required = new Set<string>(s.required ?? []);
  const fields = Object.entries(s.properties ?? {})
    .filter(([name]) => name !== file.name)
    .map(([name, sub]) => {
      const value = schemaArbitrary(ctx, sub, name).map((v): Part => ({ name, data: String(v) }));
      return required.has(name) ? value : fc.option(value, { nil: undefined });
    });
  const filePart = fc
    .record({ filename, type: fc.constantFrom(...FILE_TYPES), data: fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ unit: codePointUnit, maxLength: 500 })) })
    .map(({ filename: fname, type, data }): Part => ({ name: file.name, filename: fname, contentType: type, data: typeof data === 'string' ? data : Buffer.from(data) }));
  const boundary = fc.stringMatching(/^[A-Za-z0-9_-]{1,70}$/);
  return fc.tuple(filePart, fc.tuple(...fields), boundary, fc.boolean()).map(([f, rest, b, fileFirst]) => {
    const others = rest.filter((p): p is Part => p !== undefined);
    return { parts: fileFirst ? [f, ...others] : [...others, f], boundary: b };
  });
}

export const validUpload = (m: Multipart, quoted: boolean): BodyVariant => ({ body: multipartBody(m), contentType: contentTypeOf(m, quoted), tag: 'valid' });

/** Upload bodies broken one way each: framing, part names, file name and size, the other members, the media type. */
export function multipartMutations(ctx: SchemaContext, schema: Schema, valid: fc.Arbitrary<Multipart>): fc.Arbitrary<BodyVariant> {
  const file = fileMember(ctx, schema);
  const others = Object.keys(deref(ctx.doc, schema).properties ?? {}).filter((n) => n !== file.name);
  const v = (tag: string, m: Multipart, o: { close?: boolean; eol?: string; type?: string } = {}): BodyVariant => ({
    body: multipartBody(m, o.close ?? true, o.eol ?? '\r\n'),
    contentType: o.type ?? contentTypeOf(m),
    tag: `multipart:${tag}`,
  });
  const mapFile = (m: Multipart, f: (p: Part) => Part | Part[]) => ({ ...m, parts: m.parts.flatMap((p) => (p.name === file.name ? f(p) : [p])) });
  const kinds: fc.WeightedArbitrary<BodyVariant>[] = [
    { weight: 2, arbitrary: valid.map((m) => v('bad-boundary', m, { type: `multipart/form-data; boundary=${m.boundary}x` })) },
    { weight: 1, arbitrary: valid.map((m) => v('no-boundary', m, { type: 'multipart/form-data' })) },
    { weight: 2, arbitrary: valid.map((m) => v('unclosed', m, { close: false })) },
    { weight: 1, arbitrary: valid.chain((m) => { const b = multipartBody(m); return fc.integer({ min: 0, max: b.length - 1 }).map((cut) => ({ body: b.subarray(0, cut), contentType: contentTypeOf(m), tag: 'multipart:truncated' })); }) },
    { weight: 1, arbitrary: valid.map((m) => v('lf-only', m, { eol: '\n' })) },
    { weight: 2, arbitrary: valid.map((m) => v('no-file', { ...m, parts: m.parts.filter((p) => p.name !== file.name) })) },
    { weight: 2, arbitrary: valid.map((m) => v('empty-filename', mapFile(m, (p) => ({ ...p, filename: '' })))) },
    { weight: 1, arbitrary: valid.map((m) => v('no-filename', mapFile(m, (p) => ({ ...p, filename: undefined })))) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.constantFrom('File', 'files', 'upload', 'file[]', '', 'file ', 'FILE')).map(([m, n]) => v('wrong-name', mapFile(m, (p) => ({ ...p, name: n })))) },
    { weight: 1, arbitrary: valid.map((m) => v('two-files', mapFile(m, (p) => [p, { ...p, filename: 'second.bin' }]))) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom('x'.repeat(300), '😀'.repeat(256), 'é'.repeat(200), '../../etc/passwd', 'a\\b.png', 'con', '.', 'x%00.png', '%F0%9F%98%80.png', ' ')).map(([m, n]) => v('odd-filename', mapFile(m, (p) => ({ ...p, filename: n })))) },
    { weight: 1, arbitrary: valid.map((m) => v('filename-star', mapFile(m, (p) => ({ ...p, filename: undefined, filenameStar: '%F0%9F%98%80%20%E2%80%AE.png' })))) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom('', 'image', 'x/y; a=', 'text/html; charset=utf-8', 'image/png'.repeat(100))).map(([m, t]) => v('odd-part-type', mapFile(m, (p) => ({ ...p, contentType: t })))) },
    { weight: 1, arbitrary: valid.map((m) => v('empty-file', mapFile(m, (p) => ({ ...p, data: Buffer.alloc(0) })))) },
    { weight: 1, arbitrary: valid.map((m) => v('no-disposition', mapFile(m, (p) => ({ ...p, rawHeaders: 'Content-Type: image/png\r\n' })))) },
    { weight: 1, arbitrary: valid.map((m) => v('many-parts', { ...m, parts: [...m.parts, ...Array.from({ length: 300 }, (_, i) => ({ name: `p${i}`, data: 'x' }))] })) },
    { weight: 1, arbitrary: valid.map((m) => ({ body: Buffer.concat([Buffer.from('preamble\r\n'), multipartBody(m), Buffer.from('epilogue')]), contentType: contentTypeOf(m), tag: 'multipart:preamble-epilogue' })) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined)).map(([m, t]) => ({ body: t === 'application/json' ? '{"file":"eA=="}' : multipartBody(m), contentType: t, tag: `multipart:content-type:${t ?? 'none'}` })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map((bytes) => ({ body: Buffer.from(bytes), contentType: 'multipart/form-data; boundary=x', tag: 'multipart:garbage' })) },
    // Sizes: one byte over the documented limit, and exactly at it (made only when sent).
    { weight: 1, arbitrary: valid.map((m) => ({ body: () => multipartBody(mapFile(m, (p) => ({ ...p, data: Buffer.alloc(file.limit + 1, 7) }))), contentType: contentTypeOf(m), tag: 'multipart:file-over-limit' })) },
    { weight: 1, arbitrary: valid.map((m) => ({ body: () => multipartBody(mapFile(m, (p) => ({ ...p, data: Buffer.alloc(file.limit, 7) }))), contentType: contentTypeOf(m), tag: 'multipart:file-at-limit' })) },
  ];
  for (const name of others) {
    kinds.push({
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.oneof(badSegment.map(decodeSafe), fc.constantFrom('PHOTO', '', 'x'.repeat(300), 'text', '00000000-0000-4000-8000-000000000000', '\u0000')))
        .map(([m, bad]) => v(`bad-field:${name}`, { ...m, parts: [...m.parts.filter((p) => p.name !== name), { name, data: bad }] })),
    });
    kinds.push({ weight: 1, arbitrary: valid.map((m) => v(`missing-field:${name}`, { ...m, parts: m.parts.filter((p) => p.name !== name) })) });
  }
  return fc.oneof(...kinds);
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
