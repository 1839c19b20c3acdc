// Types of build.mjs for the repository's TypeScript callers (the benchmark).
/** The package's own code, minified, without centrifuge, gzipped: bytes. */
export function ownCodeGzipBytes(): Promise<number>;
export function buildClient(): Promise<{ dir: string; ownCodeGzipBytes: number }>;
