// A bot's form message as a real <form>: a labelled input of its type per field, the browser's own validation first,
// then the server's refusal (naming the field) in the form's alert line; once answered, disabled and showing the values.
import type { FormAttributes, FormField, Message } from '../packages/client/src';
import { el } from './dom';
import type { Send } from './interactive-view';

type Control = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

function control(f: FormField): Control {
  if (f.type === 'textarea') {
    const t = el('textarea');
    t.rows = 3;
    if (f.placeholder) t.placeholder = f.placeholder;
    return t;
  }
  if (f.type === 'select') {
    const s = el('select');
    // An empty first option: a required select is then refused until a real option is picked.
    const none = el('option', '', f.placeholder ?? 'Choose…');
    none.value = '';
    s.append(none, ...(f.options ?? []).map((o) => Object.assign(el('option', '', o.title), { value: o.value })));
    return s;
  }
  const i = el('input');
  i.type = f.type;
  if (f.type !== 'text') i.autocomplete = f.type;
  if (f.placeholder) i.placeholder = f.placeholder;
  return i;
}

export function renderForm(form: HTMLFormElement, m: Message, a: FormAttributes, send: Send, alert: HTMLElement): void {
  const done = a.submitted_values;
  const fields = el('fieldset');
  fields.disabled = done !== undefined;
  const controls = new Map<string, Control>();
  for (const f of a.items) {
    const id = `field-${m.id}-${f.name}`;
    const row = el('div', 'field');
    const label = el('label', '', f.label);
    label.htmlFor = id;
    // Seen as a star; a screen reader hears `required` from the input itself.
    if (f.required) label.append(Object.assign(el('span', 'required', ' *'), { ariaHidden: 'true' }));
    const input = control(f);
    input.id = id;
    input.name = f.name;
    input.required = f.required === true;
    if (done) input.value = done[f.name] ?? '';
    controls.set(f.name, input);
    row.append(label, input);
    fields.append(row);
  }
  form.append(fields);
  if (done) return;
  const submit = el('button', 'submit', 'Send');
  submit.type = 'submit';
  form.append(submit);
  // The submit event comes only once the browser's validation passed (type, required).
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const values: Record<string, string> = {};
    controls.forEach((c, name) => {
      c.removeAttribute('aria-invalid');
      c.removeAttribute('aria-describedby');
      if (c.value.trim()) values[name] = c.value;
    });
    let refused: Control | undefined;
    // The server names a field as values.<name>: shown with the field's label, and the field marked and focused.
    const explain = (message: string) => {
      const hit = /^values\.([\w-]+): (.*)$/.exec(message);
      const field = hit && a.items.find((f) => f.name === hit[1]);
      if (!hit || !field) return message;
      refused = controls.get(field.name);
      return `${field.label}: ${hit[2]}`;
    };
    void send({ values }, explain).then((ok) => {
      if (ok || !refused) return;
      refused.setAttribute('aria-invalid', 'true');
      refused.setAttribute('aria-describedby', alert.id);
      refused.focus();
    });
  });
}
