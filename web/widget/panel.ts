// The widget's elements, in a shadow root under one host element: a launcher button with the unread badge, and a
// panel (title bar, the chat's messages, who is typing, a composer). It only draws; widget.ts drives it.
import type { AnswerRequest, Message } from '../../packages/client/src';
import { el } from '../dom';
import { renderMessage } from '../message-view';
import { adoptStyles, widgetCss } from './styles';

export interface PanelActions {
  toggle(): void;
  send(text: string): Promise<void>;
  sendFile(file: File): Promise<void>;
  pickChat(id: string): void;
  newChat(): void;
  /** Answers a bot's question in the chat shown (its answered copy comes back through upsert). */
  answer(messageId: string, answer: AnswerRequest): Promise<unknown>;
}

export interface PanelSettings {
  primary: string;
  multipleChats: boolean;
  attachments: boolean;
}

const ICON = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/></svg>';

export class Panel {
  readonly host = document.createElement('nexus-chat-widget');
  private readonly root = this.host.attachShadow({ mode: 'open' });
  private readonly launcher = el('button', 'launcher');
  private readonly badge = el('span', 'badge');
  private readonly panel = el('section', 'panel');
  private readonly status = el('span', 'status');
  private readonly list = el('ul', 'messages');
  private readonly typing = el('p', 'typing', 'typing…');
  private readonly error = el('p', 'error');
  private readonly box = el('textarea');
  private readonly send = el('button', '', 'Send');
  private readonly chats = el('select');
  private shown = new Map<string, HTMLLIElement>();

  constructor(settings: PanelSettings, private readonly actions: PanelActions) {
    adoptStyles(this.root, widgetCss(settings.primary));
    this.launcher.type = 'button';
    this.launcher.innerHTML = ICON; // a constant, no data in it
    this.launcher.setAttribute('aria-label', 'Open chat');
    this.launcher.setAttribute('aria-expanded', 'false');
    this.badge.hidden = true;
    this.launcher.append(this.badge);
    this.launcher.addEventListener('click', () => actions.toggle());

    this.panel.hidden = true;
    this.panel.id = 'panel';
    this.panel.setAttribute('aria-label', 'Chat');
    this.launcher.setAttribute('aria-controls', 'panel');
    const bar = el('header', 'bar');
    const title = el('h2', 'title', 'Chat');
    bar.append(title, this.status);
    if (settings.multipleChats) {
      this.chats.setAttribute('aria-label', 'Conversation');
      this.chats.addEventListener('change', () => actions.pickChat(this.chats.value));
      const add = el('button', '', 'New');
      add.type = 'button';
      add.setAttribute('aria-label', 'New conversation');
      add.addEventListener('click', () => actions.newChat());
      bar.append(this.chats, add);
    }
    const close = el('button', '', '×');
    close.type = 'button';
    close.setAttribute('aria-label', 'Close chat');
    close.addEventListener('click', () => actions.toggle());
    bar.append(close);

    this.list.setAttribute('role', 'log');
    this.list.setAttribute('aria-live', 'polite');
    this.list.setAttribute('aria-label', 'Messages');
    this.typing.hidden = true;
    this.error.hidden = true;
    this.error.setAttribute('role', 'alert');
    this.panel.append(bar, this.list, this.typing, this.error, this.composer(settings.attachments));
    this.root.append(this.panel, this.launcher);
  }

  private composer(attachments: boolean): HTMLFormElement {
    const form = el('form', 'composer');
    this.box.rows = 1;
    this.box.setAttribute('aria-label', 'Message');
    this.box.placeholder = 'Write a message…';
    this.box.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    this.send.type = 'submit';
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = this.box.value.trim();
      if (!text) return;
      this.busy(this.actions.send(text).then(() => (this.box.value = '')));
    });
    if (attachments) {
      const label = el('label', 'attach');
      const input = el('input');
      input.type = 'file';
      input.setAttribute('aria-label', 'Attach a file');
      input.addEventListener('change', () => {
        const file = input.files?.[0];
        input.value = '';
        if (file) this.busy(this.actions.sendFile(file));
      });
      label.append(input, el('span', '', '📎'));
      form.append(label);
    }
    form.append(this.box, this.send);
    return form;
  }

  /** The send button off while a send runs; its failure shown. */
  private busy(p: Promise<unknown>): void {
    this.send.disabled = true;
    this.showError('');
    p.catch((err: Error) => this.showError(err.message)).finally(() => (this.send.disabled = false));
  }

  setOpen(open: boolean): void {
    this.panel.hidden = !open;
    this.launcher.setAttribute('aria-expanded', String(open));
    this.launcher.setAttribute('aria-label', open ? 'Close chat' : 'Open chat');
    if (open) this.box.focus();
  }

  setUnread(n: number): void {
    this.badge.hidden = n === 0;
    this.badge.textContent = n > 99 ? '99+' : String(n);
    this.launcher.setAttribute('aria-label', `${this.panel.hidden ? 'Open' : 'Close'} chat${n ? `, ${n} unread` : ''}`);
  }

  setStatus(text: string): void {
    this.status.textContent = text;
  }

  setTyping(active: boolean): void {
    this.typing.hidden = !active;
  }

  showError(text: string): void {
    this.error.textContent = text;
    this.error.hidden = !text;
  }

  /** Every message of the chat shown, in the store's order (created_at). */
  showMessages(messages: Message[]): void {
    this.list.replaceChildren();
    this.shown.clear();
    messages.forEach((m) => this.upsert(m, messages));
  }

  /** A new message in its place, or an edited one redrawn where it is. */
  upsert(m: Message, order: Message[]): void {
    const li = renderMessage(m, (id, answer) => this.actions.answer(id, answer));
    const old = this.shown.get(m.id);
    this.shown.set(m.id, li);
    if (old) return old.replaceWith(li);
    const next = order.slice(order.findIndex((o) => o.id === m.id) + 1).find((o) => this.shown.has(o.id));
    this.list.insertBefore(li, next ? (this.shown.get(next.id) ?? null) : null);
    this.list.scrollTop = this.list.scrollHeight;
  }

  setChats(chats: { id: string; name: string; unread: number }[], current: string): void {
    this.chats.replaceChildren(
      ...chats.map((c) => {
        const o = el('option', '', c.unread ? `${c.name} (${c.unread})` : c.name);
        o.value = c.id;
        o.selected = c.id === current;
        return o;
      }),
    );
  }
}
