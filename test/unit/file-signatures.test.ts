// The checks of a direct upload's first bytes: each allowed type accepted with its real header; executables,
// scripts, pages and SVG refused whatever was declared; a mismatch named.
import { checkSignature, mimeAllowed } from '../../lambdas/policies/file-signatures';
import { ALLOWED_MIME } from '../../lambdas/entities/file-types';

const b = (...parts: (number[] | string)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const ftyp = (brand: string) => b([0, 0, 0, 0x18], 'ftyp', brand, [0, 0, 0, 0]);

const GOOD: [string, Buffer][] = [
  ['image/png', b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0, 0, 0, 13])],
  ['image/jpeg', b([0xff, 0xd8, 0xff, 0xe0])],
  ['image/gif', b('GIF89a', [1, 0])],
  ['image/webp', b('RIFF', [0, 0, 0, 0], 'WEBPVP8 ')],
  ['image/heic', ftyp('heic')],
  ['image/avif', ftyp('avif')],
  ['video/mp4', ftyp('isom')],
  ['video/quicktime', ftyp('qt  ')],
  ['video/webm', b([0x1a, 0x45, 0xdf, 0xa3])],
  ['audio/mpeg', b('ID3', [4, 0])],
  ['audio/ogg', b('OggS', [0])],
  ['audio/wav', b('RIFF', [0, 0, 0, 0], 'WAVEfmt ')],
  ['audio/flac', b('fLaC')],
  ['application/pdf', b('%PDF-1.7\n')],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', b([0x50, 0x4b, 0x03, 0x04])],
  ['application/msword', b([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])],
  ['text/plain', Buffer.from('Hello, wörld – ünïcode\n', 'utf8')],
  ['text/csv', Buffer.from('a,b\n1,2\n')],
];

test.each(GOOD)('%s with its real header is accepted', (mime, head) => {
  expect(checkSignature(head, mime)).toEqual({ ok: true });
});

test('executables, scripts, pages and SVG are refused whatever was declared', () => {
  expect(checkSignature(b('MZ', [0x90, 0]), 'image/jpeg')).toEqual({ ok: false, reason: 'the file is an executable (Windows PE)' });
  expect(checkSignature(b([0x7f], 'ELF', [2, 1, 1]), 'application/pdf')).toEqual({ ok: false, reason: 'the file is an executable (ELF)' });
  expect(checkSignature(b([0xcf, 0xfa, 0xed, 0xfe]), 'video/mp4')).toEqual({ ok: false, reason: 'the file is an executable (Mach-O)' });
  expect(checkSignature(b('#!/bin/sh\nrm -rf /\n'), 'text/plain')).toEqual({ ok: false, reason: 'the file is a script (#!)' });
  const page = b('<!DOCTYPE html><html><script>alert(1)</script>');
  expect(checkSignature(page, 'image/png')).toEqual({ ok: false, reason: 'the file is an HTML page' });
  expect(checkSignature(page, 'text/plain')).toEqual({ ok: false, reason: 'the file is an HTML page' });
  expect(checkSignature(b([0xef, 0xbb, 0xbf], '  <HTML><body>hi'), 'text/plain')).toEqual({ ok: false, reason: 'the file is an HTML page' });
  expect(checkSignature(b('notes\n<script>x</script>'), 'text/plain')).toEqual({ ok: false, reason: 'the file is an HTML page' });
  const svg = b('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>');
  expect(checkSignature(svg, 'image/png')).toEqual({ ok: false, reason: 'the file is an SVG image (it can run scripts)' });
  expect(checkSignature(svg, 'text/plain')).toEqual({ ok: false, reason: 'the file is an SVG image (it can run scripts)' });
});

test('a mismatch names what the bytes are not; empty, NUL and broken UTF-8 refused; junk before %PDF accepted', () => {
  expect(checkSignature(b([0xff, 0xd8, 0xff, 0xe0]), 'image/png')).toEqual({ ok: false, reason: 'the bytes are not a PNG image (declared image/png)' });
  expect(checkSignature(ftyp('isom'), 'image/heic')).toEqual({ ok: false, reason: 'the bytes are not a HEIC image (declared image/heic)' });
  expect(checkSignature(Buffer.alloc(0), 'image/png')).toEqual({ ok: false, reason: 'the file is empty' });
  expect(checkSignature(b('abc', [0], 'def'), 'text/plain')).toEqual({ ok: false, reason: 'the bytes are not text (declared text/plain)' });
  expect(checkSignature(b('ok ', [0xc3, 0x28]), 'text/plain')).toEqual({ ok: false, reason: 'the bytes are not text (declared text/plain)' });
  expect(checkSignature(b('x'.repeat(20), '%PDF-1.4'), 'application/pdf')).toEqual({ ok: true });
  expect(checkSignature(b('%PDF'), 'application/x-unknown')).toEqual({ ok: false, reason: 'unsupported type application/x-unknown' });
  // A head cut in the middle of a character (4096 bytes of 'é' but the last byte) is still text.
  const cut = Buffer.from('é'.repeat(2048), 'utf8').subarray(0, 4095);
  expect(checkSignature(cut, 'text/plain')).toEqual({ ok: true });
});

test('MIME types allowed per type: parameters and case ignored; SVG and HTML never', () => {
  expect(mimeAllowed('photo', 'image/PNG; charset=x')).toBe(true);
  expect(mimeAllowed('photo', 'video/mp4')).toBe(false);
  expect(mimeAllowed('video', 'video/quicktime')).toBe(true);
  expect(mimeAllowed('voice', 'audio/ogg')).toBe(true);
  expect(mimeAllowed('document', 'application/pdf')).toBe(true);
  const all = Object.values(ALLOWED_MIME).flat();
  expect(all.filter((m) => /svg|html|javascript/.test(m))).toEqual([]);
  expect(mimeAllowed('document', 'text/html')).toBe(false);
  expect(mimeAllowed('photo', 'image/svg+xml')).toBe(false);
});
