// The browser chat page: a thin UI on the client package (packages/client), which does all of the protocol
// (session, realtime or polling, the message store, uploads, read marks). Config: ?api=<base URL>&client_key=
// <cli_...> on the URL, else config.json beside the page (config.ts). Here what the page shows and what its
// controls do; one message's element in message-view.ts (a bot's question's in interactive-view.ts), the typing
// line in typing.ts, the status and error lines in notices.ts.
import { createChatClient, type Chat, type ChatClient, type Widget } from '../packages/client/src';
import { loadConfig } from './config';
import { renderMessage } from './message-view';
import { TypingLine } from './typing';
import { $, clearError, setStatus, showError } from './notices';

let client: ChatClient;
let chats: Chat[] = [];
let current: Chat | undefined;
let open = true;

const STATUS = { connecting: 'connecting…', online: 'online', offline: 'offline', polling: 'updates every few seconds' };

function renderBadge(): void {
  const total = client.unread;
  const badge = $('unread');
  badge.hidden = total === 0;
  badge.textContent = String(total);
  badge.setAttribute('aria-label', `${total} unread message${total === 1 ? '' : 's'}`);
  document.title = total ? `(${total}) Chat` : 'Chat';
  renderChatList();
}

function renderChatList(): void {
  $('chat-list').replaceChildren(
    ...chats.map((c) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.setAttribute('aria-current', String(c === current));
      const name = document.createElement('span');
      name.textContent = c.info.name;
      b.append(name);
      if (c.unread) {
        const badge = document.createElement('span');
        badge.className = 'badge';
        badge.textContent = String(c.unread);
        badge.setAttribute('aria-label', `${c.unread} unread`);
        b.append(badge);
      }
      b.addEventListener('click', () => void selectChat(c).catch((err) => showError(err, 'Could not open the chat')));
      li.append(b);
      return li;
    }),
  );
}

/** The bot side's typing line of the chat shown. */
const typingLine = new TypingLine(() => $('typing'), () => current?.id);

/** The element drawn for each message shown, with the version it shows (edited_at). */
let drawn = new Map<string, { version: string; li: HTMLLIElement }>();

/**
 * Shows the current chat's messages: the package keeps them deduplicated, in created_at order, edits applied. Only a
 * new message or a newer version is drawn; the rest stay in place, so a form being filled keeps its values and focus.
 */
function renderMessages(): void {
  typingLine.render();
  const list = $('messages');
  const chat = current;
  const all = chat?.messages ?? [];
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  const next = new Map<string, { version: string; li: HTMLLIElement }>();
  for (const m of all) {
    const version = m.edited_at ?? '';
    const known = drawn.get(m.id);
    next.set(m.id, known?.version === version ? known : { version, li: renderMessage(m, (id, answer) => chat!.answer(id, answer)) });
  }
  drawn = next;
  // What is no longer shown (an older version, another chat's) goes first; then, in order, only what is out of
  // place moves (a moved element loses focus, and the ones after a redrawn message stay where they are).
  const kept = new Set<Element>([...next.values()].map((d) => d.li));
  for (const child of [...list.children]) if (!kept.has(child)) child.remove();
  let at = list.firstElementChild;
  for (const { li } of next.values()) {
    if (li === at) at = at.nextElementSibling;
    else list.insertBefore(li, at);
  }
  if (atBottom || all.length < 30) list.scrollTop = list.scrollHeight;
}

/** Only the chat shown, while the panel is open, reads its replies as they come (the package marks them read). */
function setVisibility(): void {
  for (const c of chats) c.setVisible(open && c === current);
}

async function selectChat(chat: Chat): Promise<void> {
  current = chat;
  setVisibility();
  renderChatList();
  renderMessages(); // what we already have of it, at once; the history follows (merged: nothing shown is lost)
  await chat.load();
  renderMessages();
  setVisibility();
}

function wireUi(widget: Widget): void {
  document.documentElement.style.setProperty('--primary', widget.primary_color);
  $('attach-label').hidden = !widget.attachments;
  $('chats').hidden = !widget.multiple_chats;
  const text = $<HTMLTextAreaElement>('text');
  const form = $<HTMLFormElement>('composer');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const content = text.value.trim();
    if (!content || !current) return;
    const button = $<HTMLButtonElement>('send');
    button.disabled = true;
    current
      .sendText(content)
      .then(() => {
        text.value = '';
        clearError();
      })
      .catch((err) => showError(err, 'Could not send the message'))
      .finally(() => (button.disabled = false));
  });
  // Enter sends; Shift+Enter makes a new line.
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  $<HTMLInputElement>('file').addEventListener('change', (e) => {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    if (!file || !current) return;
    const progress = $<HTMLProgressElement>('upload-progress');
    progress.value = 0;
    progress.hidden = false;
    current
      .sendFile(file, { onProgress: (fraction) => (progress.value = fraction) })
      .then(clearError)
      .catch((err) => showError(err, `Could not send ${file.name}`))
      .finally(() => {
        progress.hidden = true;
        input.value = '';
      });
  });
  $('toggle').addEventListener('click', () => {
    open = !open;
    $('panel').hidden = !open;
    $('toggle').textContent = open ? 'Minimize' : 'Open chat';
    $('toggle').setAttribute('aria-expanded', String(open));
    setVisibility();
  });
  $('new-chat').addEventListener('click', () => {
    client
      .createChat({ name: `Chat ${chats.length + 1}` })
      .then((chat) => selectChat(chat))
      .catch((err) => showError(err, 'Could not start a new chat'));
  });
}

function listen(): void {
  const shown = (chatId: string) => {
    if (chatId === current?.id) renderMessages();
  };
  client.on('message', (m) => shown(m.chat_id));
  client.on('updated', (m) => shown(m.chat_id));
  client.on('typing', (t) => (t.active ? typingLine.start(t.chat_id, t.sender) : typingLine.stop(t.chat_id)));
  client.on('unread', renderBadge);
  client.on('read', renderBadge);
  client.on('status', (s) => setStatus(STATUS[s]));
  client.on('error', (err) => showError(err, 'Could not fetch new messages'));
  client.on('chats', (list) => {
    chats = list;
    setVisibility();
    renderBadge();
  });
}

async function main(): Promise<void> {
  const config = await loadConfig();
  client = createChatClient({ apiUrl: config.api, clientKey: config.clientKey });
  listen();
  const session = await client.connect();
  wireUi(session.widget);
  chats = await client.listChats();
  // Single-chat mode (and the first chat in any mode): create one when there is none; then the first one.
  if (chats.length === 0) chats = [await client.createChat({ name: 'Chat' })];
  await selectChat(chats[0]);
  renderBadge();
  document.body.dataset.ready = 'true';
}

main().catch((err) => showError(err, 'The chat could not start'));
