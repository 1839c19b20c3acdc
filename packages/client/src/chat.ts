// One chat: its messages (a MessageStore), its unread count, and what a visitor does in it: read the history,
// send text or a file, answer a bot's question, mark it read. Events: message, updated, typing, read, unread.
import { Emitter } from './emitter';
import { MessageStore } from './store';
import { randomKey, type Transport } from './http';
import { uploadFile, type FileLike, type SendFileOptions, type SettledFiles } from './upload';
import type { AnswerRequest, ChatInfo, Message, MessageRequest } from './types';

/** How many messages a history page holds (the API's largest page). */
const PAGE = 500;
/** How many of the newest messages held a poll reads again, for their edits. */
const REREAD = 20;

export interface Typing {
  chat_id: string;
  sender: 'bot' | 'operator';
  /** false once a message from that side arrived, or a few seconds passed without another typing action. */
  active: boolean;
}

export interface ChatEvents {
  /** A message the chat did not hold: a reply, one sent from here or another tab, one fetched by a catch-up. */
  message: Message;
  /** A later edit of a message held (same id). */
  updated: Message;
  typing: Typing;
  /** The chat was marked read (here or in another tab). */
  read: { chat_id: string };
  /** The chat's unread count changed. */
  unread: number;
}

/** What a Chat needs of its client. */
export interface ChatHost {
  transport: Transport;
  files: SettledFiles;
  fetchFn: typeof fetch;
  /** Whether new replies are read at once (the chat on screen, the page visible, autoRead on). */
  readsNow(chat: Chat): boolean;
  unreadChanged(): void;
}

/** How long one typing action lasts without another. */
const TYPING_MS = 6000;

export class Chat extends Emitter<ChatEvents> {
  readonly id: string;
  private readonly store = new MessageStore();
  private readingNow?: Promise<void>;
  private typingTimer?: ReturnType<typeof setTimeout>;
  /** Whether the history was read at least once (a catch-up has something to follow). */
  loaded = false;
  /** Whether the integrator shows this chat (see setVisible). */
  visible = true;
  /** Replies of the bot side not yet read. */
  unread: number;

  constructor(
    public info: ChatInfo,
    private readonly host: ChatHost,
  ) {
    super();
    this.id = info.id;
    this.unread = info.unread_msg_by_user;
  }

  /** Every message held, oldest first (created_at order). */
  get messages(): Message[] {
    return this.store.list();
  }

  /** Reads the newest page of history into the store (subscribe first: the client does, before any chat). */
  async load(): Promise<Message[]> {
    const page = await this.get('');
    this.loaded = true;
    this.add(page, false);
    return this.messages;
  }

  /** One page older than the oldest message held; [] when there is no more. */
  async loadOlder(limit = 100): Promise<Message[]> {
    const first = this.store.firstId();
    const page = first ? await this.get(`?before=${first}&limit=${limit}`) : [];
    this.add(page, false);
    return page;
  }

  /**
   * Re-reads everything from the oldest message held, page after page: new messages and the latest copy of every
   * edited one, whatever its age (after a reconnect the server could not recover).
   */
  async catchUp(from = this.store.firstId()): Promise<void> {
    if (!this.loaded) return;
    // Strictly after the id just before `from` (ids are 19-digit numbers): `from` itself is read again.
    let after = from ? (BigInt(from) - 1n).toString().padStart(from.length, '0') : undefined;
    for (;;) {
      const page = await this.get(`?limit=${PAGE}${after ? `&after=${after}` : ''}`);
      this.add(page, true);
      if (page.length < PAGE || !after) return;
      after = page[page.length - 1].id;
    }
  }

  /**
   * A poll without realtime: what is newer than the messages held, and the latest copy of the newest
   * REREAD of them (a streamed reply is edited for a while after it is first read).
   */
  fetchNew(): Promise<void> {
    const held = this.store.list();
    return this.catchUp(held.length > REREAD ? held[held.length - REREAD].id : held[0]?.id);
  }

  /** Sends a text; retried on network errors, 429 and 503 under one Idempotency-Key, so it is sent once. */
  async sendText(content: string, extra: Omit<MessageRequest, 'content'> & { idempotencyKey?: string } = {}): Promise<Message> {
    const { idempotencyKey = randomKey(), ...rest } = extra;
    const json: MessageRequest = { content, content_type: 'text', ...rest };
    const sent = await this.host.transport.request<Message>('POST', `/api/client/chats/${this.id}/messages`, {
      json,
      headers: { 'idempotency-key': idempotencyKey },
      retry: true,
    });
    this.add([sent], false);
    return sent;
  }

  /** Uploads a file (multipart up to 4 MB, else straight to storage), waits for its checks, and sends it. */
  async sendFile(file: FileLike, opts: SendFileOptions & { content?: string } = {}): Promise<Message> {
    const uploaded = await uploadFile(this.host.transport, this.host.files, file, opts, this.host.fetchFn);
    return this.sendText(opts.content ?? '', { content_type: uploaded.type, files: [uploaded.id] });
  }

  /**
   * Answers an interactive message of the bot side: {value} (input_select), {card, payload} (a card's postback),
   * {values} (form) or {rating, comment?} (input_csat). Resolves with the answered Message (also put in the store,
   * so `updated` fires); the same answer again resolves the same, so a retry is safe. Throws an ApiError: 400 a
   * value the message does not take (the server's message names the field), 409 answered already with another.
   */
  async answer(messageId: string, answer: AnswerRequest): Promise<Message> {
    const answered = await this.host.transport.request<Message>('POST', `/api/client/chats/${this.id}/messages/${encodeURIComponent(messageId)}/response`, {
      json: answer,
      retry: true,
    });
    this.add([answered], false);
    return answered;
  }

  /** Marks the chat read (POST /read): the unread count goes to 0. One request at a time. */
  markRead(): Promise<void> {
    this.readingNow ??= this.host.transport
      .request('POST', `/api/client/chats/${this.id}/read`, { retry: true })
      .then(() => this.setUnread(0))
      .finally(() => (this.readingNow = undefined));
    return this.readingNow;
  }

  /** Whether the chat is on screen: while it is (and the page visible), new replies are marked read at once. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.readIfShown();
  }

  /** @internal A message from the history, a send, the channel or a poll. */
  add(list: Message[], live: boolean): void {
    for (const m of list) {
      const change = this.store.put(m);
      if (!change) continue;
      if (m.sender_type === 'outcoming') this.typing(m.sender === 'operator' ? 'operator' : 'bot', false);
      this.emit(change, m);
      // A new reply that arrives live while the chat is not being read is unread until the person looks.
      if (change === 'message' && live && m.sender_type === 'outcoming') this.setUnread(this.unread + 1);
    }
    this.readIfShown();
  }

  /** @internal The bot side started typing (active), or its message came or its typing lapsed. */
  typing(sender: 'bot' | 'operator', active: boolean): void {
    const was = this.typingTimer !== undefined;
    clearTimeout(this.typingTimer);
    this.typingTimer = active ? setTimeout(() => this.typing(sender, false), TYPING_MS) : undefined;
    if (active || was) this.emit('typing', { chat_id: this.id, sender, active });
  }

  /** @internal The client closed: no timer outlives it. */
  dispose(): void {
    clearTimeout(this.typingTimer);
    this.typingTimer = undefined;
  }

  /** @internal Read elsewhere (another tab), or the list's count. */
  setUnread(n: number, read = false): void {
    if (read) this.emit('read', { chat_id: this.id });
    if (n === this.unread) return;
    this.unread = n;
    this.emit('unread', n);
    this.host.unreadChanged();
  }

  private readIfShown(): void {
    if (this.unread > 0 && this.host.readsNow(this)) this.markRead().catch(() => undefined);
  }

  private get(query: string): Promise<Message[]> {
    return this.host.transport.request<Message[]>('GET', `/api/client/chats/${this.id}/messages${query}`, { retry: true });
  }
}
