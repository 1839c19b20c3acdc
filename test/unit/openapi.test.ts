// docs/openapi.yaml: generated (never stale), and the response check every call() runs catches what it must.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDocument, DOC_PATH, PARTS, PARTS_DIR } from '../../bin/openapi';
import { checkResponse, type Exchange } from '../support/openapi';

test('docs/openapi.yaml is what `npm run openapi` generates (the parts in bin/openapi/ + the valibot request schemas)', () => {
  expect(readFileSync(DOC_PATH, 'utf8')).toBe(buildDocument());
});

test('every hand-written part in bin/openapi/ is merged (none left out of PARTS), and none passes 300 lines', () => {
  const files = readdirSync(PARTS_DIR).filter((f) => f.endsWith('.yaml'));
  expect([...PARTS].sort()).toEqual(files.sort());
  const long = files.filter((f) => readFileSync(join(PARTS_DIR, f), 'utf8').split('\n').length > 300);
  expect(long).toEqual([]);
});

test('packages/client/src/api-types.ts is what openapi-typescript generates from it (the command of `npm run openapi`, with --check)', () => {
  const root = join(__dirname, '..', '..');
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.openapi;
  const args = /openapi-typescript (.+)$/.exec(script)![1].split(' ');
  const run = spawnSync(process.execPath, [join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), ...args, '--check'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect({ status: run.status, stderr: run.stderr.split('\n').filter((l) => /stale|error/i.test(l)) }).toEqual({ status: 0, stderr: [] });
});

const message = {
  id: '1795432431613093898',
  chat_id: '42eb31ff-11e9-45b0-98e7-e166037632c6',
  content: 'Hello!',
  content_type: 'text',
  sender_type: 'incoming',
  sender: 'user',
  files: null,
  is_edited: false,
  edited_at: null,
  created_at: '2026-11-23T11:13:51.613Z',
};
const exchange = ({ headers, ...x }: Partial<Exchange> & { body: unknown }): Exchange => ({
  method: 'POST',
  path: `/api/client/chats/${message.chat_id}/messages`,
  requestHeaders: {},
  status: 201,
  text: JSON.stringify(x.body),
  ...x,
  headers: new Headers({ 'content-type': 'application/json; charset=utf-8', ...Object.fromEntries(headers ?? []) }),
});

test('a response as documented passes', () => {
  expect(checkResponse(exchange({ body: message }))).toEqual([]);
  expect(checkResponse(exchange({ method: 'GET', path: '/api/no/such/route?x=1', status: 404, body: { error: 'No route for GET /api/no/such/route' } }))).toEqual([]);
  expect(checkResponse(exchange({ status: 429, body: { error: 'Too many' }, headers: new Headers({ 'retry-after': '12' }) }))).toEqual([]);
});

test('a field added, renamed or missing, a wrong type, an undocumented status or route, a missing Retry-After fail', () => {
  const { edited_at: _e, ...missing } = message;
  const cases: Exchange[] = [
    exchange({ body: { ...message, extra: 1 } }),
    exchange({ body: missing }),
    exchange({ body: { ...message, sender: 'robot' } }),
    exchange({ body: { ...message, id: 42 } }),
    exchange({ status: 202, body: message }),
    exchange({ status: 400, body: { message: 'Bad' } }),
    exchange({ status: 429, body: { error: 'Too many' } }),
    exchange({ method: 'GET', path: '/api/no/such/route', status: 200, body: {} }),
    exchange({ method: 'DELETE', path: `/api/client/chats/${message.chat_id}/messages`, status: 500, body: { error: 'x' } }),
  ];
  for (const c of cases) expect(checkResponse(c)).not.toEqual([]);
});
