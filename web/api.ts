// The chat page's side of the Client API: where it is (config), one request with the session's token (renewed
// once on a 401), and errors a person can read. Types come from docs/openapi.yaml (api-types.ts).
import type { components } from '../packages/client/src/api-types';

// The API's types, generated into api-types.ts (`npm run openapi`): nothing hand-written.
export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type Widget = Schemas['Widget'];
export type Chat = Schemas['Chat'];
export type Message = Schemas['Message'];
export type MessageRequest = Schemas['MessageRequest'];
/** What arrives on the user's channel. */
export type Publication = Schemas['RealtimePublication'];

/** An error with a message a person can read. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// ---- configuration ---------------------------------------------------------------------------------

export async function loadConfig(): Promise<{ api: string; clientKey: string }> {
  const q = new URLSearchParams(location.search);
  let file: { api_url?: string; client_key?: string } = {};
  if (!q.get('api') || !q.get('client_key')) {
    try {
      const res = await fetch('config.json', { cache: 'no-store' });
      if (res.ok) file = await res.json();
    } catch {
      /* no config file: the query string must say it all */
    }
  }
  const api = (q.get('api') ?? file.api_url ?? location.origin).replace(/\/+$/, '');
  const clientKey = q.get('client_key') ?? file.client_key;
  if (!clientKey) throw new ApiError(0, 'This page needs a client key: open it with ?client_key=cli_… (and ?api=<base URL>).');
  return { api, clientKey };
}

// ---- the Client API ----------------------------------------------------------------------------------

export class Api {
  session!: Session;
  private readonly storageKey: string;

  /**
   * The visitor's id is kept per API address: it opens the visitor's sessions, so a link naming another API
   * must not be sent the id the real one gave.
   */
  constructor(
    private readonly base: string,
    private readonly clientKey: string,
  ) {
    this.storageKey = `chat.external_id:${base}:${clientKey}`;
  }

  /** POST /session with the stored external_id (omitted on a first visit); remembers the one we get. */
  async startSession(): Promise<Session> {
    // An id stored before ids were kept per API address goes, once, to the API the page is now used with (a
    // hosted page names it in its link), then only under that address.
    const legacyKey = `chat.external_id:${this.clientKey}`;
    const externalId = localStorage.getItem(this.storageKey) ?? localStorage.getItem(legacyKey);
    localStorage.removeItem(legacyKey);
    const json: Schemas['SessionRequest'] = { client_key: this.clientKey, ...(externalId && { external_id: externalId }) };
    this.session = await this.request<Session>('POST', '/api/client/session', { json, auth: false });
    localStorage.setItem(this.storageKey, this.session.user.external_id);
    return this.session;
  }

  /** One request; a 401 renews the session (same external_id) once and retries with the new token. */
  async request<T>(method: string, path: string, opts: { json?: unknown; form?: FormData; auth?: boolean } = {}, renewed = false): Promise<T> {
    const auth = opts.auth ?? true;
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${this.session.session_token}`;
    if (opts.json !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(this.base + path, { method, headers, body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined) });
    } catch {
      throw new ApiError(0, 'The chat service cannot be reached. Check your connection.');
    }
    if (res.status === 401 && auth && !renewed) {
      await this.startSession();
      return this.request<T>(method, path, opts, true);
    }
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new ApiError(res.status, `${(data as { error?: string }).error ?? res.statusText} (${res.status})`);
    return data as T;
  }
}
