// The browser chat page: the contract's typical flow and client conventions, as reference code for
// integrators. Config: ?api=<base URL>&client_key=<cli_...> on the URL, else config.json beside the page.
// Here the page's state, what it renders and the flow; the Client API in api.ts, realtime in live.ts, one
// message's element in message-view.ts, the typing line in typing.ts, sending a file in upload.ts, the
// status and error lines in notices.ts.
import { Api, loadConfig, type Chat, type Message, type MessageRequest, type Publication, type Widget } from './api';
import { connectRealtime } from './live';
import { renderMessage } from './message-view';
import { TypingLine } from './typing';
import { fileSettled, uploadFile } from './upload';
import { $, clearError, setStatus, showError } from './notices';

const POLL_MS = 3000;

// ---- state and rendering -----------------------------------------------------------------------------

let api: Api;
let chats: Chat[] = [];
let current: string | undefined;
let open = true;
const messages = new Map<string, Map<string, Message>>(); // chat id → message id → message
const unread = new Map<string, number>();

const visible = (chatId: string) => open && document.visibilityState === 'visible' && chatId === current;
const lastId = (chatId: string) => [...(messages.get(chatId)?.keys() ?? [])].sort().pop();

function renderBadge(): void {
  const total = [...unread.values()].reduce((a, b) => a + b, 0);
  const badge = $('unread');
  badge.hidden = total === 0;
  badge.textContent = String(total);
  badge.setAttribute('aria-label', `${total} unread message${total === 1 ? '' : 's'}`);
  document.title = total ? `(${total}) Chat` : 'Chat';
  renderChatList();
}

function renderChatList(): void {
  const list = $('chat-list');
  list.replaceChildren(
    ...chats.map((c) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.setAttribute('aria-current', String(c.id === current));
      const name = document.createElement('span');
      name.textContent = c.name;
      b.append(name);
      const n = unread.get(c.id) ?? 0;
      if (n) {
        const badge = document.createElement('span');
        badge.className = 'badge';
        badge.textContent = String(n);
        badge.setAttribute('aria-label', `${n} unread`);
        b.append(badge);
      }
      b.addEventListener('click', () => void selectChat(c.id));
      li.append(b);
      return li;
    }),
  );
}

/** The bot side's typing line of the chat shown. */
const typingLine = new TypingLine(() => $('typing'), () => current);

/** Shows the current chat's messages, sorted by created_at (the contract's rule), each once. */
function renderMessages(): void {
  typingLine.render();
  const list = $('messages');
  const all = [...(messages.get(current ?? '')?.values() ?? [])].sort(
    (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
  );
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(...all.map(renderMessage));
  if (atBottom || all.length < 30) list.scrollTop = list.scrollHeight;
}

/** Whether `m` is a later version of `known`: an edit replaces a message in place, never an older copy. */
const newer = (m: Message, known: Message) => (m.edited_at ?? '') > (known.edited_at ?? '');

/**
 * Adds messages, deduplicated by id (the HTTP response and the realtime copy are the same message); a copy
 * of a known message replaces it only when it is a later edit.
 */
function addMessages(list: Message[], fromRealtime = false): void {
  let touched = false;
  for (const m of list) {
    const perChat = messages.get(m.chat_id) ?? new Map<string, Message>();
    messages.set(m.chat_id, perChat);
    const known = perChat.get(m.id);
    if (known && !newer(m, known)) continue;
    perChat.set(m.id, m);
    if (m.chat_id === current) touched = true;
    // A message from the bot side ends its typing indicator.
    if (m.sender_type === 'outcoming') typingLine.stop(m.chat_id);
    if (known) continue; // an edit: already counted
    // A reply that arrives while its chat is not on screen is unread until the person looks.
    if (fromRealtime && m.sender_type === 'outcoming' && !visible(m.chat_id)) unread.set(m.chat_id, (unread.get(m.chat_id) ?? 0) + 1);
  }
  if (touched) renderMessages();
  renderBadge();
  if (current && visible(current)) void markRead(current);
}

/** Reads on their way, one per chat (a read of one chat never holds back another's). */
const reading = new Map<string, Promise<void>>();
async function markRead(chatId: string): Promise<void> {
  if (!(unread.get(chatId) ?? 0) || reading.has(chatId)) return;
  const read = (async () => {
    try {
      await api.request('POST', `/api/client/chats/${chatId}/read`);
      unread.set(chatId, 0);
      renderBadge();
    } catch (err) {
      showError(err, 'Could not mark the chat as read');
    } finally {
      reading.delete(chatId);
    }
  })();
  reading.set(chatId, read);
  return read;
}

// ---- the flow ------------------------------------------------------------------------------------------

async function loadHistory(chatId: string): Promise<void> {
  const list = await api.request<Message[]>('GET', `/api/client/chats/${chatId}/messages`);
  // The history replaces what we had of the chat, except what arrived while it was on its way (newer than
  // its last message, or a newer edit of one of its messages: addMessages keeps the later copy).
  const ids = new Set(list.map((m) => m.id));
  const last = [...ids].sort().pop() ?? '';
  messages.set(chatId, new Map([...(messages.get(chatId) ?? [])].filter(([id]) => id > last || ids.has(id))));
  addMessages(list);
  renderMessages();
}

/** Everything after the last message we have: after a reconnect, and on each poll without realtime. */
/** How many of the newest messages a catch-up reads again: a streamed reply may have been edited since. */
const REREAD = 20;

async function catchUp(chatId: string): Promise<void> {
  // From just before the last REREAD messages we have: new ones, and the latest version of recent ones.
  const known = [...(messages.get(chatId)?.keys() ?? [])].sort();
  let after: string | undefined = known.length > REREAD ? known[known.length - REREAD - 1] : undefined;
  for (let first = true; ; first = false) {
    if (!first) after = lastId(chatId);
    const page = await api.request<Message[]>('GET', `/api/client/chats/${chatId}/messages${after ? `?after=${after}` : ''}`);
    addMessages(page, true);
    if (page.length < 100) return;
  }
}

async function selectChat(chatId: string): Promise<void> {
  current = chatId;
  renderChatList();
  renderMessages(); // what we already have of it, at once; the history follows
  await loadHistory(chatId);
  if (visible(chatId)) await markRead(chatId);
}

async function loadChats(): Promise<void> {
  chats = await api.request<Chat[]>('GET', '/api/client/chats');
  for (const c of chats) unread.set(c.id, c.unread_msg_by_user);
  if (chats.length === 0) {
    // Single-chat mode (and the first chat in any mode): create one when there is none.
    chats = [await api.request<Chat>('POST', '/api/client/chats', { json: { name: 'Chat' } })];
  }
}

/** What a publication of the user's channel changes on the page. */
function onPublication(event: Publication): void {
  if (event.type === 'message') {
    const message = event.data;
    if (!chats.some((c) => c.id === message.chat_id)) void loadChats().then(renderChatList);
    addMessages([message], true);
    return;
  }
  if (event.type === 'file') {
    fileSettled(event.data);
    return;
  }
  const action = event.data;
  if (action.action === 'typing') {
    typingLine.start(action.chat_id, action.sender);
  } else if (action.action === 'read') {
    unread.set(action.chat_id, 0);
    renderBadge();
  }
}

function startPolling(): void {
  setStatus('updates every few seconds');
  setInterval(() => {
    if (!current) return;
    catchUp(current)
      .then(clearError)
      .catch((err) => showError(err, 'Could not fetch new messages'));
  }, POLL_MS);
}

async function send(content: string, extra: Pick<MessageRequest, 'content_type' | 'files'> = {}): Promise<void> {
  if (!current) return;
  const json: MessageRequest = { content, content_type: 'text', ...extra };
  const sent = await api.request<Message>('POST', `/api/client/chats/${current}/messages`, { json });
  addMessages([sent]);
}

async function attach(file: File): Promise<void> {
  const progress = $<HTMLProgressElement>('upload-progress');
  progress.value = 0;
  progress.hidden = false;
  try {
    const uploaded = await uploadFile(api, file, (fraction) => (progress.value = fraction));
    await send('', { content_type: uploaded.type, files: [uploaded.id] });
  } finally {
    progress.hidden = true;
  }
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
    if (!content) return;
    const button = $<HTMLButtonElement>('send');
    button.disabled = true;
    send(content)
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
    if (!file) return;
    attach(file)
      .then(clearError)
      .catch((err) => showError(err, `Could not send ${file.name}`))
      .finally(() => (input.value = ''));
  });
  $('toggle').addEventListener('click', () => {
    open = !open;
    $('panel').hidden = !open;
    $('toggle').textContent = open ? 'Minimize' : 'Open chat';
    $('toggle').setAttribute('aria-expanded', String(open));
    if (current && visible(current)) void markRead(current);
  });
  document.addEventListener('visibilitychange', () => {
    if (current && visible(current)) void markRead(current);
  });
  $('new-chat').addEventListener('click', () => {
    api
      .request<Chat>('POST', '/api/client/chats', { json: { name: `Chat ${chats.length + 1}` } })
      .then(async (chat) => {
        chats = [chat, ...chats];
        await selectChat(chat.id);
      })
      .catch((err) => showError(err, 'Could not start a new chat'));
  });
}

async function main(): Promise<void> {
  const config = await loadConfig();
  api = new Api(config.api, config.clientKey);
  const session = await api.startSession();
  wireUi(session.widget);
  await loadChats();
  // Single-chat mode works with the first chat only; with multiple_chats the list shows them all.
  await selectChat(chats[0].id);
  if (session.realtime) {
    connectRealtime(session.realtime, api, {
      publication: onPublication,
      // Fetch what was sent before the subscription took hold: since the history was loaded (the first time;
      // e.g. from another tab) or while a dropped socket was away.
      subscribed: () => void (current && catchUp(current).catch((err) => showError(err, 'Could not catch up'))),
      status: setStatus,
    });
  } else {
    startPolling();
  }
  document.body.dataset.ready = 'true';
}

main().catch((err) => showError(err, 'The chat could not start'));
