// Live bot replies: the typing indicator and edited (streamed) messages, through the Bot API, the stream
// publisher and the real `centrifuge` client; every refusal, and edits applied in order under concurrency.
import { botItems, call, newBot, streamPassed, userWithChat, type Reply } from '../support/api';
import { liveClient, until, type Publication } from '../support/realtime';
import { sleep } from '../support/wait';
import { present, realtimeOf, type Message } from '../support/contract';
import type { BodyOf } from '../support/paths';

/** A Bot API request (`path` after /api/bot), its reply typed by the request as call() types it. */
const botApi = <M extends string, U extends string>(secretKey: string, method: M, path: U, json?: unknown, body?: string): Promise<Reply<BodyOf<M, `/api/bot${U}`>>> =>
  call(method, `/api/bot${path}`, { headers: { authorization: `Bearer ${secretKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, json, body });

/** When an applied edit was made (an edited message always has it). */
const editedAt = (m: Message): string => present(m.edited_at, `message ${m.id}’s edited_at`);

async function liveChat() {
  const setup = await userWithChat();
  const live = await liveClient(realtimeOf(setup.session));
  return { ...setup, live };
}

describe('typing', () => {
  test('POST typing → 200; the user gets a typing action for the chat, nothing in the history; repeated calls coalesce', async () => {
    const { secretKey, chatId, token, live } = await liveChat();
    try {
      const first = Date.now();
      const res = await botApi(secretKey, 'POST', `/chats/${chatId}/typing`);
      expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
      // A loop of calls within the interval publishes nothing more.
      let lastAnswered = first;
      for (let i = 0; i < 5; i++) {
        expect((await botApi(secretKey, 'POST', `/chats/${chatId}/typing`, {})).status).toBe(200);
        lastAnswered = Date.now();
      }
      const typing = (d: Publication) => d.type === 'action' && d.data.action === 'typing';
      expect(await live.waitFor(typing)).toEqual({ type: 'action', data: { action: 'typing', chat_id: chatId, sender: 'bot' } });
      // A later message of the chat marks the end: every typing record before it was published first.
      const marker = await streamPassed(token, chatId);
      await live.waitFor((d) => d.data?.id === marker.id);
      // Each publication is at least the interval after the one before, from the first call's start on: every call
      // answered within 2 s gives the first one only; a loaded machine that stretches the loop allows one more per 2 s.
      const published = live.publications.filter(typing).length;
      expect(published).toBe(Math.min(published, 1 + Math.floor((lastAnswered - first) / 2000)));
      if (lastAnswered < first + 2000) expect(published).toBe(1);
      // An operator types too (its own indicator), and after the interval the bot's shows again.
      expect((await botApi(secretKey, 'POST', `/chats/${chatId}/typing`, { sender: 'operator' })).status).toBe(200);
      await live.waitFor((d) => typing(d) && d.data.sender === 'operator');
      const byBot = () => live.publications.filter((d) => typing(d) && d.data.sender === 'bot').length;
      const before = byBot();
      await sleep(2100); // the server's typing interval (2 s) is what is shown: its clock must pass it
      expect((await botApi(secretKey, 'POST', `/chats/${chatId}/typing`)).status).toBe(200);
      await until(() => byBot() === before + 1, 5000, 'another typing action');
      expect((await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body.map((m) => m.id)).toEqual([marker.id]);
    } finally {
      live.close();
    }
  });

  test('refusals: wrong key 401, another bot’s chat 404, bad body 400, all {error}, nothing written', async () => {
    const { secretKey, chatId, bot } = await userWithChat();
    const other = await newBot();
    const before = await botItems(bot.id);
    const cases: [string, Promise<Reply<unknown>>, number][] = [
      ['wrong key', botApi('sk_wrong', 'POST', `/chats/${chatId}/typing`), 401],
      ['another bot', botApi(other.secretKey, 'POST', `/chats/${chatId}/typing`), 404],
      ['unknown chat', botApi(secretKey, 'POST', '/chats/00000000-0000-4000-8000-000000000000/typing'), 404],
      ['bad chat id', botApi(secretKey, 'POST', '/chats/nope/typing'), 400],
      ['bad sender', botApi(secretKey, 'POST', `/chats/${chatId}/typing`, { sender: 'robot' }), 400],
      ['not JSON', botApi(secretKey, 'POST', `/chats/${chatId}/typing`, undefined, '{nope'), 400],
    ];
    for (const [what, pending, status] of cases) {
      const res = await pending;
      expect({ what, status: res.status, body: res.body }).toEqual({ what, status, body: { error: expect.any(String) } });
    }
    expect(await botItems(bot.id)).toEqual(before);
  });
});

describe('edits', () => {
  test('PATCH a bot message → 200 with the same id and created_at, the new content, is_edited; the user gets the new version and the history has it', async () => {
    const { secretKey, chatId, token, live } = await liveChat();
    try {
      const sent = await botApi(secretKey, 'POST', `/chats/${chatId}/messages`, { content: 'Thinking' });
      expect(sent.status).toBe(201);
      await live.waitFor((d) => d.type === 'message' && d.data.id === sent.body.id);
      const edited = await botApi(secretKey, 'PATCH', `/chats/${chatId}/messages/${sent.body.id}`, { content: 'Thinking done: 42' });
      expect(edited.status).toBe(200);
      expect(edited.body).toEqual({ ...sent.body, content: 'Thinking done: 42', is_edited: true, edited_at: expect.any(String) });
      expect(editedAt(edited.body) > sent.body.created_at).toBe(true);
      const pushed = await live.waitFor((d) => d.type === 'message' && d.data.id === sent.body.id && d.data.is_edited);
      expect(pushed.data).toEqual(edited.body);
      const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
      expect(history.body).toEqual([edited.body]);
      // An operator's message can be edited the same way.
      const op = await botApi(secretKey, 'POST', `/chats/${chatId}/messages`, { content: 'Hi, Ann here', sender: 'operator' });
      expect((await botApi(secretKey, 'PATCH', `/chats/${chatId}/messages/${op.body.id}`, { content: 'Hi, Ann from support here' })).body).toMatchObject({ sender: 'operator', is_edited: true });
    } finally {
      live.close();
    }
  });

  test("refusals: a user's message 403, unknown message or another bot's chat 404, bad body or id 400, wrong key 401; nothing written", async () => {
    const { secretKey, chatId, token, bot } = await userWithChat();
    const other = await newBot();
    const mine = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'from the user' } });
    const reply = await botApi(secretKey, 'POST', `/chats/${chatId}/messages`, { content: 'from the bot' });
    const path = (id: string) => `/chats/${chatId}/messages/${id}`;
    const before = await botItems(bot.id);
    const cases: [string, Promise<Reply<unknown>>, number][] = [
      ["the user's message", botApi(secretKey, 'PATCH', path(mine.body.id), { content: 'hijacked' }), 403],
      ['unknown message', botApi(secretKey, 'PATCH', path('1795000000000000000'), { content: 'x' }), 404],
      ["another bot's chat", botApi(other.secretKey, 'PATCH', path(reply.body.id), { content: 'x' }), 404],
      ['wrong key', botApi('sk_wrong', 'PATCH', path(reply.body.id), { content: 'x' }), 401],
      ['bad message id', botApi(secretKey, 'PATCH', path('abc'), { content: 'x' }), 400],
      ['empty content', botApi(secretKey, 'PATCH', path(reply.body.id), { content: '  ' }), 400],
      ['no content', botApi(secretKey, 'PATCH', path(reply.body.id), {}), 400],
      ['content too long', botApi(secretKey, 'PATCH', path(reply.body.id), { content: 'x'.repeat(10_001) }), 400],
      ['bad version', botApi(secretKey, 'PATCH', path(reply.body.id), { content: 'x', version: 0 }), 400],
      ['not JSON', botApi(secretKey, 'PATCH', path(reply.body.id), undefined, '{nope'), 400],
    ];
    for (const [what, pending, status] of cases) {
      const res = await pending;
      expect({ what, status: res.status, body: res.body }).toEqual({ what, status, body: { error: expect.any(String) } });
    }
    expect(await botItems(bot.id)).toEqual(before);
  });

  test('streaming under concurrency: edits numbered by the bot apply in order (an older one arriving late is a 409 and writes nothing); the last publication is the latest version', async () => {
    const { secretKey, chatId, token, live } = await liveChat();
    try {
      const sent = await botApi(secretKey, 'POST', `/chats/${chatId}/messages`, { content: 'v0' });
      const versions = Array.from({ length: 20 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
      const results = await Promise.all(
        versions.map((version) => botApi(secretKey, 'PATCH', `/chats/${chatId}/messages/${sent.body.id}`, { content: `v${version}`, version })),
      );
      for (const r of results) expect([200, 409]).toContain(r.status);
      const applied = results.filter((r) => r.status === 200).map((r) => r.body);
      // What was applied, in the order it was applied (edited_at only moves forward), has rising versions.
      const inOrder = [...applied].sort((a, b) => editedAt(a).localeCompare(editedAt(b))).map((m) => Number(m.content.slice(1)));
      expect(inOrder).toEqual([...inOrder].sort((a, b) => a - b));
      expect(new Set(applied.map((m) => m.edited_at)).size).toBe(applied.length);
      const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
      expect(history.body[0]).toMatchObject({ id: sent.body.id, content: 'v20', is_edited: true });
      // The publications of the message arrive in the order of its versions; the last is the latest.
      await until(() => live.publications.some((d) => d.data?.id === sent.body.id && d.data.content === 'v20'), 10_000, 'the latest version');
      const marker = await streamPassed(token, chatId);
      await live.waitFor((d) => d.data?.id === marker.id);
      const copies = live.publications.filter((d) => d.type === 'message' && d.data.id === sent.body.id).map((d) => d.data);
      expect(copies.at(-1)).toEqual(history.body[0]);
      expect(copies.map((m) => m.edited_at ?? '')).toEqual(copies.map((m) => m.edited_at ?? '').sort());

      // Without numbers, concurrent edits all apply, each after the one before: the history keeps the last.
      const plain = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((c) => botApi(secretKey, 'PATCH', `/chats/${chatId}/messages/${sent.body.id}`, { content: c })));
      expect(plain.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const last = present(plain.map((r) => r.body).sort((a, b) => editedAt(a).localeCompare(editedAt(b))).at(-1), 'the last edit');
      expect((await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body[0].content).toBe(last.content);
    } finally {
      live.close();
    }
  });
});
