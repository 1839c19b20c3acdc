// widget.js: one script tag adds a chat launcher and panel to any page, built on @nexus-chat/client.
//   <script src="<api origin>/widget.js" data-client-key="cli_…" async></script>
// Options (data-*): client-key (required), api-url (default: where widget.js came from), open ("true": open at once).
// The page talks to it through window.nexusChatWidget (also handed over by the `nexuschat:ready` event):
// identify({ externalId, externalIdHash, firstName, lastName }), open(), close(), on('unread' | 'open' | 'close', fn).
import { createChatClient, type Chat, type ChatClient, type Identity } from '../../packages/client/src';
import { Panel } from './panel';
import { safeColour } from './styles';

type WidgetEvent = 'unread' | 'open' | 'close';

export interface ChatWidget {
  identify(identity: Identity): Promise<void>;
  open(): void;
  close(): void;
  on(event: WidgetEvent, fn: (value: number | boolean) => void): () => void;
}

interface Config {
  apiUrl: string;
  clientKey: string;
  openAtStart: boolean;
}

/** The script tag's settings (document.currentScript is this script while it first runs, async or not). */
function readConfig(script: HTMLScriptElement | null): Config {
  const data = script?.dataset ?? {};
  if (!data.clientKey) throw new Error('nexus chat widget: the script tag needs data-client-key="cli_…"');
  return { apiUrl: data.apiUrl ?? new URL(script!.src, location.href).origin, clientKey: data.clientKey, openAtStart: data.open === 'true' };
}

class Widget implements ChatWidget {
  private panel?: Panel;
  private chat?: Chat;
  /** The visitor's chats as the client last listed them (its `chats` event: every list, and a chat made here). */
  private chats: Chat[] = [];
  private isOpen = false;
  private readonly listeners = new Map<WidgetEvent, Set<(v: number | boolean) => void>>();
  private ready: Promise<void>;
  private readonly client: ChatClient;

  constructor(private readonly config: Config) {
    this.client = createChatClient({ apiUrl: config.apiUrl, clientKey: config.clientKey });
    this.client.on('unread', (n) => {
      this.panel?.setUnread(n);
      this.fire('unread', n);
    });
    this.client.on('status', (s) => this.panel?.setStatus(s === 'online' || s === 'polling' ? '' : s === 'connecting' ? 'connecting…' : s));
    this.client.on('chats', (list) => {
      this.chats = list;
      this.showChats();
    });
    this.client.on('typing', (t) => t.chat_id === this.chat?.id && this.panel?.setTyping(t.active));
    this.ready = this.start();
  }

  private async start(): Promise<void> {
    const session = await this.client.connect();
    const w = session.widget;
    this.panel = new Panel(
      { primary: safeColour(w.primary_color), multipleChats: Boolean(w.multiple_chats), attachments: w.attachments !== false },
      {
        toggle: () => (this.isOpen ? this.close() : this.open()),
        send: async (text) => void (await this.current().sendText(text)),
        sendFile: async (file) => void (await this.current().sendFile(file)),
        pickChat: (id) => void this.show(id),
        newChat: () => void this.client.createChat({ name: 'Chat' }).then((c) => this.show(c.id)),
        answer: (id, answer) => this.current().answer(id, answer),
      },
    );
    (document.body ?? document.documentElement).append(this.panel.host);
    await this.show();
    if (this.config.openAtStart) this.open();
  }

  private current(): Chat {
    if (!this.chat) throw new Error('The chat is not ready yet.');
    return this.chat;
  }

  /** Shows one chat (the single-chat convention's, or the one picked), listening to it alone. */
  private async show(id?: string): Promise<void> {
    // Listing the chats (either way) brings the picker's list through the `chats` event.
    const chat = (id && (await this.client.listChats()).find((c) => c.id === id)) || (await this.client.chat());
    if (!chat.loaded) await chat.load();
    this.chat?.setVisible(false);
    this.unlisten.forEach((off) => off());
    this.chat = chat;
    chat.setVisible(this.isOpen);
    const panel = this.panel!;
    this.unlisten = [chat.on('message', (m) => panel.upsert(m, chat.messages)), chat.on('updated', (m) => panel.upsert(m, chat.messages))];
    panel.showMessages(chat.messages);
    panel.setTyping(false);
    this.showChats();
    panel.setUnread(this.client.unread);
  }

  private unlisten: (() => void)[] = [];

  /** The picker's conversations, the one shown selected. */
  private showChats(): void {
    this.panel?.setChats(this.chats.map((c) => ({ id: c.id, name: c.info.name ?? 'Chat', unread: c.unread })), this.chat?.id ?? '');
  }

  open(): void {
    void this.ready.then(() => {
      if (this.isOpen) return;
      this.isOpen = true;
      this.panel!.setOpen(true);
      this.chat?.setVisible(true); // on screen: its replies are read as they come
      this.fire('open', true);
    });
  }

  close(): void {
    void this.ready.then(() => {
      if (!this.isOpen) return;
      this.isOpen = false;
      this.panel!.setOpen(false);
      this.chat?.setVisible(false);
      this.fire('close', false);
    });
  }

  /** Another visitor (one who logged in on the host page): a new session and that visitor's chat. */
  async identify(identity: Identity): Promise<void> {
    await this.ready;
    await this.client.identify(identity);
    this.chat = undefined;
    await this.show();
  }

  on(event: WidgetEvent, fn: (value: number | boolean) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    this.listeners.set(event, set);
    set.add(fn);
    return () => set.delete(fn);
  }

  private fire(event: WidgetEvent, value: number | boolean): void {
    this.listeners.get(event)?.forEach((fn) => fn(value));
  }
}

declare global {
  interface Window {
    nexusChatWidget?: ChatWidget;
  }
}

// Once per page, whatever number of script tags.
if (!window.nexusChatWidget) {
  const widget = new Widget(readConfig(document.currentScript as HTMLScriptElement | null));
  window.nexusChatWidget = widget;
  window.dispatchEvent(new CustomEvent('nexuschat:ready', { detail: widget }));
}
