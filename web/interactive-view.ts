// The answerable part of a bot's interactive message, on the chat page and in the widget: quick replies, cards, a
// form (interactive-form.ts) and a rating. Each is answered once; the answered copy (a newer version of the
// message, from the answer's reply or the channel) is drawn again with its choices disabled and the choice shown.
import type { AnswerRequest, CardsAttributes, CsatAttributes, FormAttributes, InputSelectAttributes, Message } from '../packages/client/src';
import { el, isWebUrl } from './dom';
import { renderForm } from './interactive-form';

/** How the page sends an answer (Chat.answer); it resolves once the answered message is in the chat's store. */
export type AnswerFn = (messageId: string, answer: AnswerRequest) => Promise<unknown>;

/** Sends one answer from a block: its controls off meanwhile, a refusal shown in its alert line. */
export type Send = (answer: AnswerRequest, explain?: (message: string) => string) => Promise<boolean>;

const FALLBACK_LABEL: Record<string, string> = { input_select: 'Quick replies', cards: 'Cards', form: 'Form', input_csat: 'Rating' };

export const isInteractive = (m: Message): boolean => m.sender_type === 'outcoming' && !!m.content_attributes && Object.hasOwn(FALLBACK_LABEL, m.content_type);

/** The file ids a message's cards use as their image (shown in the card, not again as an attachment). */
export function cardMediaIds(m: Message): Set<string> {
  if (m.content_type !== 'cards' || !m.content_attributes) return new Set();
  return new Set((m.content_attributes as CardsAttributes).items.flatMap((c) => (c.media_url ? [c.media_url] : [])));
}

/** The block of an interactive message, labelled by its question (the element `questionId`) or by its type. */
export function renderInteractive(m: Message, answer: AnswerFn, questionId?: string): HTMLElement {
  const kind = m.content_type;
  const root = kind === 'form' || kind === 'input_csat' ? el('form', `interactive ${kind}`) : el('div', `interactive ${kind}`);
  if (!(root instanceof HTMLFormElement)) root.setAttribute('role', 'group'); // a named <form> is a form landmark already
  if (questionId) root.setAttribute('aria-labelledby', questionId);
  else root.setAttribute('aria-label', FALLBACK_LABEL[kind]);
  const alert = el('p', 'refusal');
  alert.setAttribute('role', 'alert');
  alert.id = `refusal-${m.id}`;
  alert.hidden = true;
  const send: Send = async (body, explain = (s) => s) => {
    const controls = [...root.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('button, input, textarea, select')].filter((c) => !c.disabled);
    controls.forEach((c) => (c.disabled = true));
    root.setAttribute('aria-busy', 'true');
    alert.hidden = true;
    try {
      await answer(m.id, body);
      return true;
    } catch (err) {
      controls.forEach((c) => (c.disabled = false));
      alert.textContent = explain(err instanceof Error ? err.message : String(err));
      alert.hidden = false;
      return false;
    } finally {
      root.removeAttribute('aria-busy');
    }
  };
  if (kind === 'input_select') quickReplies(root, m.content_attributes as InputSelectAttributes, send);
  else if (kind === 'cards') cards(root, m, m.content_attributes as CardsAttributes, send);
  else if (kind === 'form') renderForm(root as HTMLFormElement, m, m.content_attributes as FormAttributes, send, alert);
  else rating(root as HTMLFormElement, m, m.content_attributes as CsatAttributes, send, alert);
  root.append(alert);
  return root;
}

/** A button; once the message is answered, disabled and pressed when it was the choice. */
function choiceButton(text: string, answered: boolean, chosen: boolean, onClick: () => void, cls = 'choice'): HTMLButtonElement {
  const b = el('button', cls, text);
  b.type = 'button';
  if (answered) {
    b.disabled = true;
    b.setAttribute('aria-pressed', String(chosen));
  } else b.addEventListener('click', onClick);
  return b;
}

function quickReplies(root: HTMLElement, a: InputSelectAttributes, send: Send): void {
  const answered = a.submitted_values !== undefined;
  for (const item of a.items) root.append(choiceButton(item.title, answered, item.value === a.submitted_values, () => void send({ value: item.value })));
}

/** A card's image: a photo of the chat (by file id, its URL in the message's files) or an absolute http(s) URL. */
function mediaSrc(m: Message, media: string | undefined): string | undefined {
  if (!media) return undefined;
  const file = m.files?.find((f) => f.id === media);
  if (file) return isWebUrl(file.url) ? file.url : undefined;
  return isWebUrl(media, undefined) ? media : undefined;
}

function cards(root: HTMLElement, m: Message, a: CardsAttributes, send: Send): void {
  const done = a.submitted_values;
  a.items.forEach((card, index) => {
    const box = el('div', 'card');
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', card.title);
    const src = mediaSrc(m, card.media_url);
    if (src) {
      const img = el('img');
      img.src = src;
      img.alt = card.title;
      img.loading = 'lazy';
      box.append(img);
    }
    box.append(el('p', 'card-title', card.title));
    if (card.description) box.append(el('p', 'card-description', card.description));
    const actions = el('div', 'actions');
    for (const action of card.actions) {
      if (action.type === 'postback') {
        const chosen = done?.card === index && done.payload === action.payload;
        actions.append(choiceButton(action.text, done !== undefined, chosen, () => void send({ card: index, payload: action.payload }), 'choice action'));
      } else if (isWebUrl(action.uri, undefined)) {
        const link = el('a', 'action', action.text);
        link.href = action.uri;
        link.target = '_blank';
        link.rel = 'noopener';
        actions.append(link);
      } else actions.append(el('span', 'action', action.text)); // not http(s): named, not linked
    }
    if (card.actions.length) box.append(actions);
    root.append(box);
  });
}

const STARS = [1, 2, 3, 4, 5];

function rating(form: HTMLFormElement, m: Message, a: CsatAttributes, send: Send, alert: HTMLElement): void {
  const done = a.submitted_values;
  let chosen = done?.rating ?? 0;
  const fields = el('fieldset');
  fields.disabled = done !== undefined;
  const stars = el('div', 'stars');
  stars.setAttribute('role', 'group');
  stars.setAttribute('aria-label', 'Rating');
  const buttons = STARS.map((n) => {
    const b = el('button', 'star', '★');
    b.type = 'button';
    b.setAttribute('aria-label', `${n} star${n === 1 ? '' : 's'}`);
    b.addEventListener('click', () => {
      chosen = n;
      paint();
    });
    return b;
  });
  const paint = () =>
    buttons.forEach((b, i) => {
      b.setAttribute('aria-pressed', String(i + 1 === chosen));
      b.classList.toggle('lit', i < chosen);
    });
  paint();
  stars.append(...buttons);
  const id = `comment-${m.id}`;
  const label = el('label', '', 'Comment (optional)');
  label.htmlFor = id;
  const comment = el('textarea');
  comment.id = id;
  comment.rows = 2;
  comment.value = done?.comment ?? '';
  fields.append(stars, label, comment);
  form.append(fields);
  if (done) {
    form.append(el('p', 'summary', `Rated ${done.rating} of 5`));
    return;
  }
  const submit = el('button', 'submit', 'Send rating');
  submit.type = 'submit';
  form.append(submit);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!chosen) {
      alert.textContent = 'Choose from 1 to 5 stars first.';
      alert.hidden = false;
      buttons[0].focus();
      return;
    }
    const text = comment.value.trim();
    void send(text ? { rating: chosen, comment: text } : { rating: chosen });
  });
}
