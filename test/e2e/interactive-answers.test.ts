// The visitor answers an interactive message: recorded once, published as a new version, read by the bot; every refusal writes nothing.
import { botItems, call, newSession, userWithChat, type CallOptions } from '../support/api';
import { liveClientsClosedAfterEach } from '../support/realtime';
import { realtimeOf, type Message } from '../support/contract';
import { startReceiver } from '../support/receiver';
import { until } from '../support/wait';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { verifyWebhook } from '../../examples/echo-bot';
import { checkWebhook } from '../support/openapi';

const live = liveClientsClosedAfterEach();
const bot = <M extends string, U extends string>(method: M, path: U, secret: string, opts: CallOptions = {}) =>
  call(method, `/api/bot${path}` as const, { ...opts, headers: { ...opts.headers, authorization: `Bearer ${secret}` } });

const ASKED = {
  input_select: { items: [{ title: 'My order', value: 'order' }, { title: 'Returns', value: 'returns' }] },
  cards: { items: [{ title: 'Mug', actions: [{ type: 'link', text: 'Open', uri: 'https://shop.example/mug' }] }, { title: 'Cup', actions: [{ type: 'postback', text: 'Buy', payload: 'CUP-1' }] }] },
  form: {
    items: [
      { name: 'name', label: 'Name', type: 'text', required: true },
      { name: 'email', label: 'E-mail', type: 'email', required: true },
      { name: 'size', label: 'Size', type: 'select', options: [{ title: 'Small', value: 's' }] },
    ],
  },
  input_csat: {},
} as const;

/** A chat whose bot asked one question of each type; the messages by type. */
async function asked() {
  const chat = await userWithChat();
  const sent = {} as Record<keyof typeof ASKED, Message>;
  for (const [type, attributes] of Object.entries(ASKED) as [keyof typeof ASKED, object][]) {
    const res = await bot('POST', `/chats/${chat.chatId}/messages`, chat.secretKey, { json: { content: `Question ${type}`, content_type: type, content_attributes: attributes } });
    expect(res.status).toBe(201);
    sent[type] = res.body;
  }
  const answer = (id: string, json: unknown, token = chat.token) => call('POST', `/api/client/chats/${chat.chatId}/messages/${id}/response`, { token, json });
  return { ...chat, sent, answer };
}

test('an answer is recorded, published as a newer version and read by the bot; the same answer again writes nothing, another is a 409', async () => {
  const { bot: b, secretKey, session, chatId, sent, answer } = await asked();
  const rt = await live(realtimeOf(session));
  const res = await answer(sent.input_select.id, { value: 'returns' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ ...sent.input_select, edited_at: expect.any(String), content_attributes: { ...ASKED.input_select, submitted_values: 'returns', submitted_at: res.body.edited_at } });
  const published = await rt.waitFor((p) => p.type === 'message' && p.data?.id === sent.input_select.id && p.data.content_attributes?.submitted_values !== undefined);
  expect(published.data).toEqual(res.body);
  expect((await bot('GET', `/chats/${chatId}/messages`, secretKey)).body.find((m) => m.id === sent.input_select.id)).toEqual(res.body);

  const before = await botItems(b.id);
  const again = await answer(sent.input_select.id, { value: 'returns' });
  expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: res.body });
  const other = await answer(sent.input_select.id, { value: 'order' });
  expect({ status: other.status, body: other.body }).toEqual({ status: 409, body: { error: 'This message was answered already, with another answer' } });
  expect(await botItems(b.id)).toEqual(before);
});

test('a postback, a form and a rating record what the issue names', async () => {
  const { sent, answer } = await asked();
  const postback = await answer(sent.cards.id, { card: 1, payload: 'CUP-1' });
  expect(postback.status).toBe(200);
  expect(postback.body.content_attributes?.submitted_values).toEqual({ card: 1, payload: 'CUP-1' });
  const form = await answer(sent.form.id, { values: { name: ' Ann ', email: 'ann@example.com' } });
  expect(form.status).toBe(200);
  expect(form.body.content_attributes?.submitted_values).toEqual({ name: 'Ann', email: 'ann@example.com' });
  const rating = await answer(sent.input_csat.id, { rating: 4, comment: 'Quick' });
  expect(rating.status).toBe(200);
  expect(rating.body.content_attributes?.submitted_values).toEqual({ rating: 4, comment: 'Quick' });
});

test('two different answers sent at once: exactly one wins, the other is a 409', async () => {
  const { sent, answer } = await asked();
  const replies = await Promise.all(['order', 'returns'].map((value) => answer(sent.input_select.id, { value })));
  expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
});

test('every refusal has its status and error, and writes nothing', async () => {
  const { bot: b, secretKey, token, chatId, sent, answer } = await asked();
  const own = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hello' } });
  const text = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: 'plain' } });
  const stranger = (await newSession(b.client_key)).session_token;
  const before = await botItems(b.id);
  const cases: [string, string, unknown, number, string, string?][] = [
    ['not an item', sent.input_select.id, { value: 'refund' }, 400, "value: must be one of the message's items"],
    ['empty value', sent.input_select.id, { value: '' }, 400, 'value: must not be empty'],
    ['wrong shape for the type', sent.input_select.id, { rating: 3 }, 400, 'The body does not fit a message of content_type input_select'],
    ['no shape at all', sent.input_select.id, { choice: 'order' }, 400, 'must be {"value"}, {"card", "payload"}, {"values"} or {"rating", "comment"?}'],
    ['no such card', sent.cards.id, { card: 5, payload: 'CUP-1' }, 400, 'card: the message has no card 5'],
    ['a link is no postback', sent.cards.id, { card: 0, payload: 'https://shop.example/mug' }, 400, "payload: must be a postback's payload of that card"],
    ['bad e-mail', sent.form.id, { values: { name: 'Ann', email: 'ann@' } }, 400, 'values.email: must be an e-mail address'],
    ['required missing', sent.form.id, { values: { email: 'ann@example.com' } }, 400, 'values.name: is required'],
    ['unknown field', sent.form.id, { values: { name: 'Ann', email: 'a@b.co', age: '3' } }, 400, 'values.age: the form has no such field'],
    ['not an option', sent.form.id, { values: { name: 'Ann', email: 'a@b.co', size: 'xl' } }, 400, "values.size: must be one of the field's options"],
    ['rating 6', sent.input_csat.id, { rating: 6 }, 400, 'rating: must be from 1 to 5'],
    ["the user's own message", own.body.id, { value: 'x' }, 400, "Only the bot side's interactive messages (input_select, cards, form, input_csat) take a response"],
    ['a text message', text.body.id, { value: 'x' }, 400, "Only the bot side's interactive messages (input_select, cards, form, input_csat) take a response"],
    ['unknown message', '1795432431613093898', { value: 'order' }, 404, 'Message not found'],
    ['malformed id', '42', { value: 'order' }, 400, 'Invalid message_id: expected a message id (19 digits)'],
    ["another user's chat", sent.input_select.id, { value: 'order' }, 403, '', stranger],
  ];
  for (const [name, id, json, status, error, as] of cases) {
    const res = await answer(id, json, as);
    expect({ name, status: res.status, body: res.body }).toEqual({ name, status, body: { error: error || expect.any(String) } });
  }
  expect(await botItems(b.id)).toEqual(before);
});

test("an answer and the bot side's edits keep edited_at moving forward; an edit keeps the answer", async () => {
  const { secretKey, chatId, sent, answer } = await asked();
  const edit = (content: string) => bot('PATCH', `/chats/${chatId}/messages/${sent.form.id}`, secretKey, { json: { content } });
  const edited = await edit('Your details, please');
  expect(edited.status).toBe(200);
  const answered = await answer(sent.form.id, { values: { name: 'Ann', email: 'ann@example.com' } });
  expect(answered.status).toBe(200);
  expect(answered.body.edited_at! > edited.body.edited_at!).toBe(true);
  const later = await edit('Thanks, Ann');
  expect(later.status).toBe(200);
  expect(later.body.edited_at! > answered.body.edited_at!).toBe(true);
  expect(later.body.content_attributes).toEqual(answered.body.content_attributes);
});

test('an answer reaches the bot as a signed message.response, its X-Webhook-Id the same on a retry; an edit and the same answer again send none', async () => {
  // The first delivery fails (a 500), so the answer comes again as its retry.
  const hook = await startReceiver((n) => (n === 1 ? 500 : 200));
  try {
    const { bot: b, secretKey, session, chatId, token, sent, answer } = await asked();
    const { bot: withHook } = await updateBot(b.id, { webhook_url: hook.url });
    const responses = () => hook.hits.filter((h) => h.body.event === 'message.response');
    const res = await answer(sent.form.id, { values: { name: 'Ann', email: 'ann@example.com' } });
    expect(res.status).toBe(200);
    await until(() => responses().length >= 2, 10_000, 'the message.response and its retry');
    const [first, retry] = responses();
    expect(first.body).toEqual({
      event: 'message.response',
      bot_id: b.id,
      chat: expect.objectContaining({ id: chatId }),
      user: expect.objectContaining({ id: session.user.id, external_id: session.user.external_id }),
      message: res.body,
    });
    expect(res.body.content_attributes?.submitted_values).toEqual({ name: 'Ann', email: 'ann@example.com' });
    expect(retry.raw).toBe(first.raw);
    expect(first.headers['x-webhook-id']).toBe(`${sent.form.id}:response`);
    expect(retry.headers['x-webhook-id']).toBe(first.headers['x-webhook-id']);
    for (const h of [first, retry]) {
      expect(checkWebhook('message.response', h.headers, h.body)).toEqual([]);
      const ts = h.headers['x-webhook-timestamp'] as string;
      expect(verifyWebhook(withHook.webhook_secret as string, h.raw, ts, h.headers['x-webhook-signature'] as string)).toBe(true);
    }

    // An edit of the answered message and the same answer again change nothing the bot hears of; a user message
    // after them is the mark: its message.created comes once what the dispatcher got before it was handled.
    expect((await bot('PATCH', `/chats/${chatId}/messages/${sent.form.id}`, secretKey, { json: { content: 'Thanks!' } })).status).toBe(200);
    expect((await bot('PATCH', `/chats/${chatId}/messages/${sent.input_csat.id}`, secretKey, { json: { content: 'Rate us later' } })).status).toBe(200);
    expect((await answer(sent.form.id, { values: { name: 'Ann', email: 'ann@example.com' } })).status).toBe(200);
    const mark = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'after the answer' } });
    expect(mark.status).toBe(201);
    await until(() => hook.hits.some((h) => h.body.event === 'message.created' && h.body.message.id === mark.body.id), 10_000, 'the message.created mark');
    expect(responses().length).toBe(2);
  } finally {
    hook.close();
  }
});
