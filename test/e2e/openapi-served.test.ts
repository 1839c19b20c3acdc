// The local stack serves the API's OpenAPI document as JSON and its reference page, rendered by the Redoc
// bundle it serves itself (no CDN): lib/local/web.ts.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { call } from '../support/http';
import { OPENAPI_PATH } from '../support/openapi';

test('GET /api/openapi.json is docs/openapi.yaml as JSON', async () => {
  const res = await call<Record<string, unknown>>('GET', '/api/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.openapi).toBe('3.1.0');
  expect(res.body).toEqual(parse(readFileSync(OPENAPI_PATH, 'utf8')));
});

test('GET /docs is an HTML page that renders the document with the bundled Redoc script, served here too', async () => {
  const page = await call<string>('GET', '/docs');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.body).toContain('<redoc spec-url="/api/openapi.json"></redoc>');
  const src = /<script src="([^"]+)"><\/script>/.exec(page.body)?.[1];
  expect(src).toBe('/docs/redoc.standalone.js');
  // Nothing loaded from elsewhere.
  expect(page.body).not.toMatch(/https?:\/\//);
  expect(page.headers.get('content-security-policy')).toMatch(/default-src 'self'/);

  const script = await call<string>('GET', src!);
  expect(script.status).toBe(200);
  expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
  expect(String(script.body).length).toBeGreaterThan(100_000);
  expect(String(script.body)).toContain('Redoc');
});
