// The client's HTTP side: the visitor's session (opened with the stored external_id, renewed on a 401 and before
// it expires) and one Client API request, retried where a retry is safe (network errors, 429, 503).
import type { Schemas, Session } from './types';
import type { StorageLike } from './storage';

/** An error the API answered (`status` its HTTP status, 0 when it could not be reached), with a readable message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Who the visitor is: nothing (an anonymous visitor, kept in storage) or a user of your site. */
export interface Identity {
  externalId?: string;
  /** hex HMAC-SHA256(identity secret, externalId), computed on your server (identity verification). */
  externalIdHash?: string;
  firstName?: string;
  lastName?: string;
}

export interface RequestOptions {
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  /** Retry network errors, 429 and 503 (after Retry-After): only for a request that is safe to repeat. */
  retry?: boolean;
}

/** How many times a safe request is tried, and the longest Retry-After worth waiting for. */
const ATTEMPTS = 5;
const MAX_WAIT_S = 60;
/** A session this close to its expiry (or to the last tenth of a short one) is renewed before the next request. */
const RENEW_BEFORE_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A random key for Idempotency-Key (crypto.randomUUID needs a secure context; getRandomValues does not). */
export function randomKey(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export class Transport {
  session?: Session;
  /** Called with each new session (the realtime token in it is the one the next reconnect uses). */
  onSession?: (session: Session) => void;
  private opening?: Promise<Session>;
  /** When the session was opened, for how close to its expiry it is renewed. */
  private openedAt = 0;
  private readonly storageKey: string;

  constructor(
    readonly apiUrl: string,
    private readonly clientKey: string,
    private readonly storage: StorageLike,
    private identity: Identity,
    private readonly fetchFn: typeof fetch,
  ) {
    // Kept per API address and client key: a page pointed at another API must not hand it this visitor's id.
    this.storageKey = `chat.external_id:${apiUrl}:${clientKey}`;
  }

  /** Opens a session (one at a time: concurrent callers share it). */
  openSession(): Promise<Session> {
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  /** Another identity from now on (a visitor who logs in, or out): a new session for it. */
  identify(identity: Identity): Promise<Session> {
    this.identity = identity;
    return this.openSession();
  }

  private async open(): Promise<Session> {
    const { externalId, externalIdHash, firstName, lastName } = this.identity;
    // An anonymous visitor comes back as the one stored; a user of the site is who the site says.
    const id = externalId ?? this.storage.getItem(this.storageKey);
    const json: Schemas['SessionRequest'] = {
      client_key: this.clientKey,
      ...(id && { external_id: id }),
      ...(externalId && externalIdHash && { external_id_hash: externalIdHash }),
      ...(firstName && { first_name: firstName }),
      ...(lastName && { last_name: lastName }),
    };
    const session = await this.send<Session>('POST', '/api/client/session', { json, retry: true }, false);
    if (!externalId) this.storage.setItem(this.storageKey, session.user.external_id);
    this.session = session;
    this.openedAt = Date.now();
    this.onSession?.(session);
    return session;
  }

  /** A request with the session's token; a 401 renews the session once and tries again. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const s = this.session;
    const expires = s ? Date.parse(s.expires_at) : 0;
    if (!s || expires - Date.now() < Math.min(RENEW_BEFORE_MS, (expires - this.openedAt) / 10)) await this.openSession();
    try {
      return await this.send<T>(method, path, opts, true);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      await this.openSession();
      return this.send<T>(method, path, opts, true);
    }
  }

  private async send<T>(method: string, path: string, opts: RequestOptions, auth: boolean): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { ...opts.headers };
      if (auth) headers.authorization = `Bearer ${this.session!.session_token}`;
      if (opts.json !== undefined) headers['content-type'] = 'application/json';
      const body = opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined);
      let res: Response;
      try {
        res = await this.fetchFn(this.apiUrl + path, { method, headers, body });
      } catch {
        if (opts.retry && attempt < ATTEMPTS) {
          await sleep(250 * 2 ** attempt);
          continue;
        }
        throw new ApiError(0, 'The chat service cannot be reached. Check your connection.');
      }
      const data = (await res.json().catch(() => ({}))) as { error?: string };
      if (res.ok) return data as T;
      const wait = Number(res.headers.get('retry-after') ?? 1);
      if (opts.retry && (res.status === 429 || res.status === 503) && attempt < ATTEMPTS && wait <= MAX_WAIT_S) {
        await sleep(Math.max(0, wait) * 1000);
        continue;
      }
      throw new ApiError(res.status, `${data.error ?? res.statusText} (${res.status})`);
    }
  }
}
