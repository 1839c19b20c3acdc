// createChatClient: the visitor's session, realtime (or polling when the session has none), and the chats, each with
// its message store. Subscribes to the user's channel before any history is read, so nothing falls between.
import { Emitter } from './emitter';
import { Chat, type ChatEvents } from './chat';
import { Transport, type Identity } from './http';
import { connectRealtime, type Realtime, type RealtimeStatus, type WebSocketClass } from './realtime';
import { defaultStorage, type StorageLike } from './storage';
import { SettledFiles } from './upload';
import type { ChatRequest, Publication, Session } from './types';

export interface ChatClientOptions extends Identity {
  /** The API's base URL, e.g. https://chat.example.com (no /api/client). */
  apiUrl: string;
  /** The bot's public key, cli_… */
  clientKey: string;
  /** Where the anonymous visitor's external_id is kept: localStorage by default. */
  storage?: StorageLike;
  /** The WebSocket class: the page's own by default; in Node, `ws`'s. */
  WebSocket?: WebSocketClass;
  fetch?: typeof fetch;
  /** Mark a chat read while it is visible (default true). */
  autoRead?: boolean;
  /** How often to ask for new messages when the session has no realtime block (default 3000 ms). */
  pollMs?: number;
  /** The keepalive's period on an open socket (default 9 minutes, under API Gateway's idle timeout). */
  keepaliveMs?: number;
}

export type ClientStatus = RealtimeStatus | 'polling';

export interface ClientEvents extends Omit<ChatEvents, 'unread'> {
  status: ClientStatus;
  /** The unread count of all chats together. */
  unread: number;
  /** The chat list changed (a chat created here or elsewhere). */
  chats: Chat[];
  /** Something the client did on its own failed (a catch-up, a poll, an automatic read). */
  error: Error;
}

/** The longest the first subscription is waited for before history is read anyway (a later one catches up). */
const SUBSCRIBE_WAIT_MS = 5000;

interface PageDocument {
  visibilityState?: string;
  addEventListener(type: string, fn: () => void): void;
  removeEventListener(type: string, fn: () => void): void;
}
const page = () => (globalThis as { document?: PageDocument }).document;

export class ChatClient extends Emitter<ClientEvents> {
  readonly transport: Transport;
  readonly files = new SettledFiles();
  readonly fetchFn: typeof fetch;
  status: ClientStatus = 'offline';
  private readonly known = new Map<string, Chat>();
  private started?: Promise<Session>;
  private realtime?: Realtime;
  private pollTimer?: ReturnType<typeof setTimeout>;
  private readonly onVisibility = () => this.known.forEach((c) => c.setVisible(c.visible));

  constructor(private readonly opts: ChatClientOptions) {
    super();
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const { externalId, externalIdHash, firstName, lastName } = opts;
    const apiUrl = opts.apiUrl.replace(/\/+$/, '');
    this.transport = new Transport(apiUrl, opts.clientKey, opts.storage ?? defaultStorage(), { externalId, externalIdHash, firstName, lastName }, this.fetchFn);
    page()?.addEventListener('visibilitychange', this.onVisibility);
  }

  /** The current session (after connect). */
  get session(): Session | undefined {
    return this.transport.session;
  }

  /** Unread replies over every chat known. */
  get unread(): number {
    let n = 0;
    this.known.forEach((c) => (n += c.unread));
    return n;
  }

  /** Opens the session and subscribes to the user's channel (or starts polling); once, whoever calls it. */
  connect(): Promise<Session> {
    this.started ??= this.start();
    return this.started;
  }

  /** The single-chat convention: the user's first chat, created when there is none; its history read. */
  async chat(name = 'Chat'): Promise<Chat> {
    const [first] = await this.listChats();
    const chat = first ?? (await this.createChat({ name }));
    if (!chat.loaded) await chat.load();
    return chat;
  }

  /** Every chat of the user, newest activity first (for `widget.multiple_chats`); load() one to read it. */
  async listChats(): Promise<Chat[]> {
    await this.connect();
    const infos = await this.transport.request<Chat['info'][]>('GET', '/api/client/chats', { retry: true });
    const list = infos.map((info) => {
      const chat = this.known.get(info.id);
      if (!chat) return this.adopt(new Chat(info, this));
      chat.info = info;
      // A loaded chat counts its own unread replies; the list's count is for one not read yet.
      if (!chat.loaded) chat.setUnread(info.unread_msg_by_user);
      return chat;
    });
    this.emit('chats', list);
    return list;
  }

  async createChat(request: ChatRequest): Promise<Chat> {
    await this.connect();
    const chat = this.adopt(new Chat(await this.transport.request<Chat['info']>('POST', '/api/client/chats', { json: request }), this));
    chat.loaded = true; // new: nothing to read, and the subscription brings what comes
    this.emit('chats', [...this.known.values()]);
    return chat;
  }

  /** Another identity (a visitor who logs in): a new session, channel and chat list. */
  async identify(identity: Identity): Promise<Session> {
    this.stop();
    this.known.clear();
    await this.transport.identify(identity);
    this.started = undefined;
    return this.connect();
  }

  /** Closes the socket, stops polling and listening; the chats keep what they hold. */
  close(): void {
    this.stop();
    this.known.forEach((c) => c.dispose());
    page()?.removeEventListener('visibilitychange', this.onVisibility);
  }

  // ---- what the chats ask of their client (ChatHost) ----

  /** @internal */
  readsNow(chat: Chat): boolean {
    return (this.opts.autoRead ?? true) && chat.visible && chat.loaded && page()?.visibilityState !== 'hidden';
  }

  /** @internal */
  unreadChanged(): void {
    this.emit('unread', this.unread);
  }

  // ---- internals ----

  private adopt(chat: Chat): Chat {
    this.known.set(chat.id, chat);
    chat.on('message', (m) => this.emit('message', m));
    chat.on('updated', (m) => this.emit('updated', m));
    chat.on('typing', (t) => this.emit('typing', t));
    chat.on('read', (r) => this.emit('read', r));
    return chat;
  }

  private async start(): Promise<Session> {
    const session = this.transport.session ?? (await this.transport.openSession());
    const WS = this.opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
    if (!session.realtime || !WS) {
      this.setStatus('polling');
      this.poll();
      return session;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SUBSCRIBE_WAIT_MS);
      this.realtime = connectRealtime(
        session.realtime!,
        this.transport,
        {
          publication: (event) => this.onPublication(event),
          subscribed: (recovered) => {
            clearTimeout(timer);
            resolve();
            // What the server could not give back, the chats read again (the first time, none is loaded yet).
            if (!recovered) this.known.forEach((c) => void c.catchUp().catch((err: Error) => this.emit('error', err)));
          },
          status: (s) => this.setStatus(s),
        },
        WS,
        this.opts.keepaliveMs,
      );
    });
    return session;
  }

  private stop(): void {
    this.realtime?.close();
    this.realtime = undefined;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }

  private poll(): void {
    this.pollTimer = setTimeout(() => {
      const loaded = [...this.known.values()].filter((c) => c.loaded);
      void Promise.all(loaded.map((c) => c.fetchNew().catch((err: Error) => this.emit('error', err)))).then(() => this.pollTimer && this.poll());
    }, this.opts.pollMs ?? 3000);
  }

  private setStatus(status: ClientStatus): void {
    if (status === this.status) return;
    this.status = status;
    this.emit('status', status);
  }

  private onPublication(event: Publication): void {
    if (event.type === 'file') return this.files.add(event.data);
    const chat = this.known.get(event.data.chat_id);
    if (event.type === 'message') {
      if (chat) chat.add([event.data], true);
      // A chat this client has not seen (made in another tab): the list again.
      else this.listChats().catch((err: Error) => this.emit('error', err));
    } else if (event.data.action === 'read') chat?.setUnread(0, true);
    else chat?.typing(event.data.sender, true);
  }
}

/** A chat client for one API and bot (see ChatClientOptions). Nothing is requested until connect() or chat(). */
export function createChatClient(options: ChatClientOptions): ChatClient {
  return new ChatClient(options);
}
