// File bytes for upload tests, with heads as real as the upload checks read them (lambdas/policies/file-signatures.ts:
// the file-type library wants a PNG's image header after its signature).

/** The signature and the IHDR chunk every PNG starts with (a 1×1 image). */
export const PNG_HEAD = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
  Buffer.from('IHDR', 'latin1'),
  Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]),
]);

/** A PNG of `size` bytes: its real head, then `fill` bytes (two files of one size differ by their fill). */
export const png = (size: number, fill = 7): Buffer =>
  size <= PNG_HEAD.length ? PNG_HEAD.subarray(0, size) : Buffer.concat([PNG_HEAD, Buffer.alloc(size - PNG_HEAD.length, fill)]);
