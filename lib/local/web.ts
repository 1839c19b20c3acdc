// The browser chat page (web/): bundled with esbuild, served by the local HTTP gateway at `/`, with a
// config.json that points it at this stack and the demo bot (the query string can point it elsewhere).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { build } from 'esbuild';

export const WEB_BUILD = {
  entryPoints: ['app.ts'],
  bundle: true,
  minify: true,
  sourcemap: 'inline' as const,
  format: 'iife' as const,
  target: 'es2020',
};

/** Bundles web/app.ts in memory (or into outdir for hosting the page elsewhere). */
export async function buildWeb(root: string, outdir?: string): Promise<string> {
  const out = await build({
    ...WEB_BUILD,
    absWorkingDir: join(root, 'web'),
    write: Boolean(outdir),
    ...(outdir ? { outdir } : { outfile: 'app.js' }),
    logLevel: 'silent',
  });
  return outdir ? '' : out.outputFiles![0].text;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
};

/** A fallback for the HTTP gateway: GET / (index.html), /style.css, /app.js, /config.json. */
export async function webFallback(root: string, config: { api_url: string; client_key: string }) {
  const files: Record<string, string> = {
    '/index.html': await readFile(join(root, 'web', 'index.html'), 'utf8'),
    '/style.css': await readFile(join(root, 'web', 'style.css'), 'utf8'),
    '/app.js': await buildWeb(root),
    '/config.json': JSON.stringify(config),
  };
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = path === '/' ? '/index.html' : path;
    const body = files[file];
    if (body === undefined) return false;
    res.writeHead(200, {
      'content-type': TYPES[file.slice(file.lastIndexOf('.'))],
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
