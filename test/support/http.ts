// Plain HTTP calls to a running stack (fetch, JSON in and out): no access to the stack's internals, so the
// integration suite (test/stack) uses it against deployed stacks too. Every response is checked against
// docs/openapi.yaml (test/support/openapi.ts): one that the document does not describe fails the call.
import { checkResponse } from './openapi';
import type { BodyOf } from './paths';

export const apiUrl = (): string => {
  const url = process.env.TEST_API_URL;
  if (!url) throw new Error('TEST_API_URL is not set: run the tests through jest (global set-up starts the stack)');
  return url;
};

export interface Reply<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  /** Another stack than the run's shared one (tests that start their own). */
  base?: string;
  token?: string;
  json?: unknown;
  body?: string | FormData | Buffer;
  headers?: Record<string, string>;
}

/**
 * One request. Its reply body is typed by the request (test/support/paths.ts) unless the caller names the type
 * (`call<T>`, for a request the document does not type by its path alone).
 */
export function call<M extends string, U extends string>(method: M, path: U, opts?: CallOptions): Promise<Reply<BodyOf<M, U>>>;
export function call<T>(method: string, path: string, opts?: CallOptions): Promise<Reply<T>>;
export async function call(method: string, path: string, opts: CallOptions = {}): Promise<Reply<unknown>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch((opts.base ?? apiUrl()) + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: the assertion on it will say so */
  }
  const problems = checkResponse({ method: method.toUpperCase(), path, requestHeaders: lowerKeys(headers), status: res.status, headers: res.headers, text, body: parsed });
  if (problems.length > 0) throw new Error(`Response not as documented (docs/openapi.yaml):\n${problems.join('\n')}`);
  return { status: res.status, body: parsed, headers: res.headers };
}

const lowerKeys = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
