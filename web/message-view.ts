// One message as the chat page and the widget show it: its text, its files (a photo inline, anything else a link
// that opens in a new tab), a bot's question with what answers it (interactive-view.ts), its time and whether it
// was edited.
import type { Message } from '../packages/client/src';
import { el, isWebUrl } from './dom';
import { cardMediaIds, isInteractive, renderInteractive, type AnswerFn } from './interactive-view';

/** The list item of one message (text set as text, never as HTML); `answer` sends a reply to a bot's question. */
export function renderMessage(m: Message, answer: AnswerFn): HTMLLIElement {
  const li = el('li', `message ${m.sender_type}`);
  li.dataset.id = m.id;
  const who = m.sender_type === 'incoming' ? 'You' : m.sender === 'operator' ? 'Operator' : 'Bot';
  li.setAttribute('aria-label', `${who}, ${new Date(m.created_at).toLocaleString()}`);
  const interactive = isInteractive(m);
  let questionId: string | undefined;
  if (m.content) {
    const p = el('p', 'text', m.content);
    if (interactive) p.id = questionId = `question-${m.id}`;
    li.append(p);
  }
  const inCards = cardMediaIds(m);
  for (const f of m.files ?? []) {
    if (f.id && inCards.has(f.id)) continue; // a card's image, shown in its card
    if (!isWebUrl(f.url)) {
      // Not an http(s) address (the API never sends one): named, not linked.
      li.append(el('span', '', f.name ?? f.type));
    } else if (f.type === 'photo') {
      const img = el('img');
      img.src = f.url;
      img.alt = f.name ?? 'photo';
      img.loading = 'lazy';
      li.append(img);
    } else {
      const a = el('a', '', f.name ?? f.type);
      a.href = f.url;
      a.target = '_blank';
      a.rel = 'noopener';
      li.append(a);
    }
  }
  if (interactive) li.append(renderInteractive(m, answer, questionId));
  const time = el('time', 'meta');
  time.dateTime = m.created_at;
  time.textContent = new Date(m.created_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (m.is_edited) time.textContent += ' · edited';
  li.append(time);
  return li;
}
