// Interactive messages: the bot sends quick replies, cards, a form and a rating; every read shows their content_attributes.
import { botItems, call, newSession, userWithChat, type CallOptions } from '../support/api';
import { liveClientsClosedAfterEach } from '../support/realtime';
import { png } from '../support/files';
import { realtimeOf, type Message } from '../support/contract';

const live = liveClientsClosedAfterEach();
const bot = <M extends string, U extends string>(method: M, path: U, secret: string, opts: CallOptions = {}) =>
  call(method, `/api/bot${path}` as const, { ...opts, headers: { ...opts.headers, authorization: `Bearer ${secret}` } });

const quickReplies = { items: [{ title: 'My order', value: 'order' }, { title: 'Returns', value: 'returns' }] };
const cards = {
  items: [
    {
      title: 'Blue mug',
      description: '350 ml',
      media_url: 'https://shop.example/mug.jpg',
      actions: [
        { type: 'link', text: 'Open', uri: 'https://shop.example/mug' },
        { type: 'postback', text: 'Buy', payload: '{"sku":"MUG-1"}' },
      ],
    },
  ],
};
const form = {
  items: [
    { name: 'name', label: 'Your name', type: 'text', required: true },
    { name: 'email', label: 'E-mail', type: 'email', placeholder: 'you@example.com' },
    { name: 'size', label: 'Size', type: 'select', options: [{ title: 'Small', value: 's' }, { title: 'Large', value: 'l' }] },
  ],
};
const SENT = [
  ['input_select', quickReplies],
  ['cards', cards],
  ['form', form],
  ['input_csat', {}],
] as const;

test('each interactive type is sent, shown in both histories and published to the user with its content_attributes', async () => {
  const { secretKey, session, token, chatId } = await userWithChat();
  const rt = await live(realtimeOf(session));
  const sent: Message[] = [];
  for (const [type, attributes] of SENT) {
    const res = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: `Question ${type}`, content_type: type, content_attributes: attributes } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ content: `Question ${type}`, content_type: type, content_attributes: attributes, sender: 'bot', files: null });
    sent.push(res.body);
  }
  for (const m of sent) await rt.waitFor((p) => p.type === 'message' && p.data?.id === m.id && p.data.content_attributes !== undefined);
  expect(rt.publications.filter((p) => p.type === 'message').map((p) => p.data)).toEqual(sent);
  expect((await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body).toEqual(sent);
  expect((await bot('GET', `/chats/${chatId}/messages`, secretKey)).body).toEqual(sent);
  // A text message carries no content_attributes at all.
  const plain = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: 'hi' } });
  expect(plain.body).not.toHaveProperty('content_attributes');
});

async function uploadPhoto(token: string): Promise<string> {
  const fd = new FormData();
  fd.append('file', new Blob([png(64)], { type: 'image/png' }), 'mug.png');
  const photo = await call('POST', '/api/client/files', { token, body: fd });
  expect(photo.status).toBe(201);
  return photo.body.id;
}

test('a card shows a photo of this chat by file id: the message attaches it, so its URL is in files; another user’s photo is a 403', async () => {
  const { bot: b, secretKey, token, chatId } = await userWithChat();
  const photoId = await uploadPhoto(token);
  const attributes = { items: [{ title: 'Mug', media_url: photoId, actions: [] }] };
  const res = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: 'This one?', content_type: 'cards', content_attributes: attributes } });
  expect(res.status).toBe(201);
  expect(res.body.content_attributes).toEqual(attributes);
  expect(res.body.files).toEqual([expect.objectContaining({ id: photoId, type: 'photo', url: expect.stringMatching(/^http/) })]);

  const strangersPhoto = await uploadPhoto((await newSession(b.client_key)).session_token);
  const before = await botItems(b.id);
  const refused = await bot('POST', `/chats/${chatId}/messages`, secretKey, {
    json: { content: 'This one?', content_type: 'cards', content_attributes: { items: [{ title: 'Mug', media_url: strangersPhoto, actions: [] }] } },
  });
  expect(refused.status).toBe(403);
  expect(refused.body).toEqual({ error: `content_attributes.items.0.media_url: file ${strangersPhoto} was not uploaded by this user` });
  expect(await botItems(b.id)).toEqual(before);
});

const q = (content_type: string, content_attributes: unknown, more: object = {}) => ({ content: 'Pick one', content_type, content_attributes, ...more });
const choices = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `t${i}`, value: `v${i}` }));
const card = (more: object = {}) => ({ title: 'Mug', actions: [], ...more });
const field = (more: object = {}) => ({ name: 'f', label: 'F', type: 'text', ...more });
const BAD: [string, object, string][] = [
  ['unknown type', q('carousel', quickReplies), 'content_type: must be one of text, photo, video, audio, voice, document, input_select, cards, form, input_csat'],
  ['attributes missing', { content: 'Pick one', content_type: 'input_select' }, 'content_attributes: is required'],
  ['attributes on text', q('text', quickReplies), 'content_attributes: is only for content_type input_select, cards, form, input_csat'],
  ['no question', q('input_select', quickReplies, { content: ' ' }), 'content: must not be empty for content_type input_select (it is the question)'],
  ['no quick replies', q('input_select', { items: [] }), 'content_attributes.items: must have 1 to 13 items'],
  ['14 quick replies', q('input_select', { items: choices(14) }), 'content_attributes.items: must have 1 to 13 items'],
  ['value missing', q('input_select', { items: [{ title: 'a' }] }), 'content_attributes.items.0.value: is required'],
  ['title too long', q('input_select', { items: [{ title: 'x'.repeat(81), value: 'a' }] }), 'content_attributes.items.0.title: must be at most 80 characters'],
  ['value too long', q('input_select', { items: [{ title: 'a', value: 'x'.repeat(201) }] }), 'content_attributes.items.0.value: must be at most 200 characters'],
  ['11 cards', q('cards', { items: Array.from({ length: 11 }, () => card()) }), 'content_attributes.items: must have 1 to 10 items'],
  ['4 actions', q('cards', { items: [card({ actions: Array.from({ length: 4 }, () => ({ type: 'link', text: 'a', uri: 'https://a.example' })) })] }), 'content_attributes.items.0.actions: must have 0 to 3 actions'],
  ['action type', q('cards', { items: [card({ actions: [{ type: 'call', text: 'a' }] })] }), 'content_attributes.items.0.actions.0.type: must be "link" or "postback"'],
  ['javascript link', q('cards', { items: [card({ actions: [{ type: 'link', text: 'a', uri: 'javascript:alert(1)' }] })] }), 'content_attributes.items.0.actions.0.uri: must be an http(s) URL'],
  ['payload over 1,000 bytes', q('cards', { items: [card({ actions: [{ type: 'postback', text: 'a', payload: 'é'.repeat(501) }] })] }), 'content_attributes.items.0.actions.0.payload: must be at most 1000 bytes as UTF-8'],
  ['media not http', q('cards', { items: [card({ media_url: 'data:image/png;base64,AA' })] }), 'content_attributes.items.0.media_url: must be an http(s) URL or a file id of this chat'],
  ['unknown media file', q('cards', { items: [card(), card({ media_url: '00000000-0000-4000-8000-000000000000' })] }), 'content_attributes.items.1.media_url: no uploaded file has id 00000000-0000-4000-8000-000000000000'],
  ['11 fields', q('form', { items: Array.from({ length: 11 }, (_, i) => field({ name: `f${i}` })) }), 'content_attributes.items: must have 1 to 10 items'],
  ['field type', q('form', { items: [field({ type: 'date' })] }), 'content_attributes.items.0.type: must be one of text, email, tel, textarea, select'],
  ['select without options', q('form', { items: [field({ type: 'select' })] }), 'content_attributes.items.0.options: must be given for a select field, and only for one'],
  ['options on text', q('form', { items: [field({ options: choices(1) })] }), 'content_attributes.items.0.options: must be given for a select field, and only for one'],
  ['repeated name', q('form', { items: [field(), field()] }), 'content_attributes.items: must not repeat a field name'],
  ['bad name', q('form', { items: [field({ name: 'a b' })] }), 'content_attributes.items.0.name: must be 1 to 64 letters, digits, _ or -'],
  ['rating as array', q('input_csat', []), 'content_attributes: must be an object ({})'],
  ['over 16 KB', q('cards', { items: Array.from({ length: 10 }, () => card({ description: 'é'.repeat(500), media_url: `https://a.example/${'x'.repeat(2000)}` })) }), 'content_attributes: must be at most 16384 bytes as JSON'],
];

test('a body that does not fit its content_type is a 400 naming the field, and writes nothing', async () => {
  const { bot: b, secretKey, chatId } = await userWithChat();
  const before = await botItems(b.id);
  for (const [name, json, error] of BAD) {
    const res = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json });
    expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 400, body: { error } });
  }
  expect(await botItems(b.id)).toEqual(before);
});

test('a user cannot send an interactive type', async () => {
  const { bot: b, token, chatId } = await userWithChat();
  const before = await botItems(b.id);
  const res = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: q('input_select', quickReplies) });
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'content_type: must be one of text, photo, video, audio, voice, document' });
  expect(await botItems(b.id)).toEqual(before);
});
