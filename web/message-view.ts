// One message as the chat page shows it: its text, its files (a photo inline, anything else a link that opens
// in a new tab), its time and whether it was edited.
import type { Message } from '../packages/client/src';

/** The list item of one message (text set as text, never as HTML). */
export function renderMessage(m: Message): HTMLLIElement {
  const li = document.createElement('li');
  li.className = `message ${m.sender_type}`;
  li.dataset.id = m.id;
  const who = m.sender_type === 'incoming' ? 'You' : m.sender === 'operator' ? 'Operator' : 'Bot';
  li.setAttribute('aria-label', `${who}, ${new Date(m.created_at).toLocaleString()}`);
  if (m.content) {
    const p = document.createElement('p');
    p.className = 'text';
    p.textContent = m.content;
    li.append(p);
  }
  for (const f of m.files ?? []) {
    if (!isWebUrl(f.url)) {
      // Not an http(s) address (the API never sends one): named, not linked.
      const span = document.createElement('span');
      span.textContent = f.name ?? f.type;
      li.append(span);
    } else if (f.type === 'photo') {
      const img = document.createElement('img');
      img.src = f.url;
      img.alt = f.name ?? 'photo';
      img.loading = 'lazy';
      li.append(img);
    } else {
      const a = document.createElement('a');
      a.href = f.url;
      a.textContent = f.name ?? f.type;
      a.target = '_blank';
      a.rel = 'noopener';
      li.append(a);
    }
  }
  const time = document.createElement('time');
  time.className = 'meta';
  time.dateTime = m.created_at;
  time.textContent = new Date(m.created_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (m.is_edited) time.textContent += ' · edited';
  li.append(time);
  return li;
}

/** Only http(s) addresses become a link or an image: never javascript: or data:. */
function isWebUrl(url: string | null | undefined): url is string {
  try {
    return ['http:', 'https:'].includes(new URL(url ?? '', location.href).protocol);
  } catch {
    return false;
  }
}
