// Every response the tests receive through call() is checked against docs/openapi.yaml: the route is found by
// its path template and method, the status must be documented for it, and the body (and required headers,
// e.g. Retry-After) must match the schema for that status. A field added, renamed or missing fails the test
// that received it. Requests the API deliberately does not cover (CORS preflights answered by the gateway,
// the local gateway's static files) are skipped; any other unmatched route must be the default route's 404.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { parse } from 'yaml';

export const OPENAPI_PATH = join(__dirname, '..', '..', 'docs', 'openapi.yaml');
const DOC_ID = 'openapi.json';

/** The parts of the document this check reads (the rest is ajv's, by JSON pointer). */
interface Schema {
  $ref?: string;
}
interface Header {
  $ref?: string;
  required?: boolean;
  schema?: Schema;
}
interface Response {
  $ref?: string;
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  responses: Record<string, Response | undefined>;
  parameters?: { in: string; name: string; required?: boolean; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface Doc {
  paths: Record<string, Partial<Record<string, Operation>>>;
  webhooks?: Partial<Record<string, { post?: Operation }>>;
  'x-gateway-responses': { responses: Partial<Record<string, Response>> };
  'x-default-route': { status: number };
}

let state: { doc: Doc; ajv: Ajv2020; routes: { method: string; template: string; re: RegExp }[] } | undefined;
const compiled = new Map<string, ValidateFunction>();

function load() {
  if (state) return state;
  const doc = parse(readFileSync(OPENAPI_PATH, 'utf8')) as Doc;
  // strict off: OpenAPI's own keywords (description, examples, contentMediaType...) sit beside the schemas.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
  ajv.addSchema(doc, DOC_ID);
  const routes = Object.entries(doc.paths).flatMap(([template, item]) =>
    ['get', 'post', 'patch', 'put', 'delete'].filter((m) => item[m]).map((m) => ({
      method: m.toUpperCase(),
      template,
      re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    })),
  );
  return (state = { doc, ajv, routes });
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Follows an OpenAPI `$ref` (responses, headers) to the object and its JSON pointer. */
function deref<T extends { $ref?: string }>(doc: Doc, pointer: string): { node: T; pointer: string } {
  let node: unknown = doc;
  for (const part of pointer.split('/').slice(1)) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  const ref = (node as T | undefined)?.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) return deref<T>(doc, ref.slice(1));
  return { node: node as T, pointer };
}

function validator(pointer: string): ValidateFunction {
  let v = compiled.get(pointer);
  if (!v) compiled.set(pointer, (v = load().ajv.compile({ $ref: `${DOC_ID}#${pointer}` })));
  return v;
}

export interface Exchange {
  method: string;
  /** The path as requested, query string included. */
  path: string;
  requestHeaders: Record<string, string>;
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/**
 * Outside the API on purpose: a CORS preflight (API Gateway answers it) and the local gateway's static files
 * (the chat page, the document itself at /api/openapi.json and its reference at /docs: lib/local/web.ts).
 */
function outsideApi(x: Exchange): boolean {
  if (x.method === 'OPTIONS' && x.requestHeaders.origin && x.requestHeaders['access-control-request-method']) return true;
  const path = x.path.split('?')[0];
  return (x.method === 'GET' || x.method === 'HEAD') && x.status === 200 && (!path.startsWith('/api/') || path === '/api/openapi.json');
}

/** The problems of one exchange against the document: [] when it matches. */
export function checkResponse(x: Exchange): string[] {
  const { doc, routes } = load();
  const path = x.path.split('?')[0];
  if (outsideApi(x)) return [];
  const route = routes.find((r) => r.method === x.method && r.re.test(path));
  // OPENAPI_COVERAGE=<file>: one line per response checked (route and status), to see what the tests reach.
  if (process.env.OPENAPI_COVERAGE) appendFileSync(process.env.OPENAPI_COVERAGE, `${x.method} ${route?.template ?? '(default route)'} ${x.status}\n`);
  let schemaPointer: string;
  let response: Response;
  const gateway = doc['x-gateway-responses'].responses[String(x.status)];
  if (!route && gateway) {
    // API Gateway's own answer, on the default route too.
    const resolved = deref<Response>(doc, `/x-gateway-responses/responses/${x.status}`);
    response = resolved.node;
    schemaPointer = `${resolved.pointer}/content/${escape('application/json')}/schema`;
  } else if (!route) {
    // The default route: any other method and path.
    if (x.status !== doc['x-default-route'].status) return [`no route in docs/openapi.yaml for ${x.method} ${path} (status ${x.status})`];
    schemaPointer = '/x-default-route/schema';
    response = { content: { 'application/json': {} } };
  } else {
    const opPointer = `/paths/${escape(route.template)}/${x.method.toLowerCase()}`;
    const status = String(x.status);
    if (!doc.paths[route.template][x.method.toLowerCase()]?.responses[status]) {
      return [`${x.method} ${route.template} answered ${status}, which docs/openapi.yaml does not document`];
    }
    const resolved = deref<Response>(doc, `${opPointer}/responses/${status}`);
    response = resolved.node;
    schemaPointer = `${resolved.pointer}/content/${escape('application/json')}/schema`;
  }
  const problems: string[] = [];
  const where = `${x.method} ${route?.template ?? path} ${x.status}`;
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const h = header.$ref ? deref<Header>(doc, header.$ref.slice(1)).node : header;
    const value = x.headers.get(name);
    if (value === null) {
      if (h.required) problems.push(`${where}: missing header ${name}`);
    } else if (h.schema && !load().ajv.validate(h.schema.$ref ? { $ref: `${DOC_ID}${h.schema.$ref}` } : h.schema, value)) {
      problems.push(`${where}: header ${name}: ${value} does not match its schema`);
    }
  }
  if (!response.content) {
    if (x.text !== '') problems.push(`${where}: documented without a body, got ${x.text.slice(0, 200)}`);
    return problems;
  }
  const contentType = x.headers.get('content-type') ?? '';
  if (!contentType.startsWith('application/json')) problems.push(`${where}: content-type ${contentType}, documented application/json`);
  if (x.body === x.text && !/^\s*"/.test(x.text)) return [...problems, `${where}: the body is not JSON: ${x.text.slice(0, 200)}`];
  const validate = validator(schemaPointer);
  if (!validate(x.body)) {
    problems.push(
      `${where}: the body does not match docs/openapi.yaml: ` +
        validate.errors!.map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`).join('; ') +
        `\nbody: ${x.text.slice(0, 500)}`,
    );
  }
  return problems;
}

/** Problems of a value against a named schema of the document (components.schemas): [] when it matches. */
export function checkSchema(name: string, value: unknown): string[] {
  const validate = validator(`/components/schemas/${escape(name)}`);
  if (validate(value)) return [];
  return [
    `${name}: does not match docs/openapi.yaml: ` +
      validate.errors!.map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`).join('; ') +
      `\nvalue: ${JSON.stringify(value).slice(0, 500)}`,
  ];
}

/** Problems of a webhook delivery (headers in lower case, the parsed body) against `webhooks.<event>`. */
export function checkWebhook(event: string, headers: Record<string, string | string[] | undefined>, body: unknown): string[] {
  const { doc } = load();
  const op = doc.webhooks?.[event]?.post;
  if (!op) return [`webhook ${event} is not in docs/openapi.yaml`];
  const problems: string[] = [];
  for (const p of op.parameters ?? []) {
    if (p.in !== 'header') continue;
    const value = headers[p.name.toLowerCase()];
    if (value === undefined) {
      if (p.required) problems.push(`webhook ${event}: missing header ${p.name}`);
    } else if (!load().ajv.validate(p.schema.$ref ? { $ref: `${DOC_ID}${p.schema.$ref}` } : p.schema, value)) {
      problems.push(`webhook ${event}: header ${p.name}: ${String(value)} does not match its schema`);
    }
  }
  const ref = op.requestBody?.content['application/json']?.schema.$ref;
  if (!ref) return [...problems, `webhook ${event}: docs/openapi.yaml gives its body no schema reference`];
  return [...problems, ...checkSchema(ref.split('/').pop()!, body)];
}
