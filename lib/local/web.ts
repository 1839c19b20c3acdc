// The browser chat page (web/): bundled with esbuild (lib/web-build.ts), served by the local HTTP gateway at `/`, with a
// config.json that points it at this stack and the demo bot (the query string can point it elsewhere).
// Also the API's OpenAPI document (docs/openapi.yaml) at /api/openapi.json and its reference at /docs, rendered
// in the browser by Redoc's standalone bundle served from node_modules (nothing fetched from elsewhere).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { build } from 'esbuild';
import { parse } from 'yaml';
import { PAGE_ENTRY, WEB_BUILD, WIDGET_ENTRY } from '../web-build';

/** Bundles web/app.ts in memory. */
export async function buildWeb(root: string): Promise<string> {
  return bundle(root, { entryPoints: [PAGE_ENTRY], outfile: 'app.js' });
}

/** Bundles the embeddable widget (web/widget/widget.ts, the client package inside) in memory. */
export async function buildWidget(root: string): Promise<string> {
  return bundle(root, { entryPoints: [WIDGET_ENTRY], sourcemap: false, outfile: 'widget.js' });
}

async function bundle(root: string, options: { entryPoints: string[]; outfile: string; sourcemap?: false }): Promise<string> {
  const out = await build({ ...WEB_BUILD, ...options, absWorkingDir: join(root, 'web'), write: false, logLevel: 'silent' });
  return out.outputFiles[0].text;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
};

/** Where the document and its rendered reference are served (outside the API's own routes). */
export const OPENAPI_JSON_PATH = '/api/openapi.json';
export const DOCS_PATH = '/docs';
export const REDOC_SCRIPT_PATH = '/docs/redoc.standalone.js';

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="${OPENAPI_JSON_PATH}"></redoc>
<script src="${REDOC_SCRIPT_PATH}"></script>
</body>
</html>
`;

/**
 * The reference loads nothing from elsewhere: Redoc's sidebar footer shows a logo from cdn.redoc.ly, which the
 * browser is told not to fetch (the link to redocly.com stays; its onError hides the image).
 */
const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; worker-src 'self' blob:";

/**
 * A fallback for the HTTP gateway: GET / (index.html), /style.css, /app.js, /config.json, /widget.js, and the API
 * reference: /api/openapi.json (docs/openapi.yaml as JSON), /docs (Redoc) and its bundled script.
 */
export async function webFallback(root: string, config: { api_url: string; client_key: string }) {
  const files: Record<string, string> = {
    '/index.html': await readFile(join(root, 'web', 'index.html'), 'utf8'),
    '/style.css': await readFile(join(root, 'web', 'style.css'), 'utf8'),
    '/app.js': await buildWeb(root),
    '/widget.js': await buildWidget(root),
    '/config.json': JSON.stringify(config),
    [OPENAPI_JSON_PATH]: JSON.stringify(parse(await readFile(join(root, 'docs', 'openapi.yaml'), 'utf8'))),
    [DOCS_PATH]: DOCS_HTML,
    [REDOC_SCRIPT_PATH]: await readFile(join(root, 'node_modules', 'redoc', 'bundles', 'redoc.standalone.js'), 'utf8'),
  };
  // eslint-disable-next-line @typescript-eslint/require-await -- the gateway's page handler is async; this one has its files in memory
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = path === '/' ? '/index.html' : path === `${DOCS_PATH}/` ? DOCS_PATH : path;
    const body = files[file];
    if (body === undefined) return false;
    res.writeHead(200, {
      'content-type': file === DOCS_PATH ? TYPES['.html'] : TYPES[file.slice(file.lastIndexOf('.'))],
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...(file === DOCS_PATH && { 'content-security-policy': DOCS_CSP }),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
