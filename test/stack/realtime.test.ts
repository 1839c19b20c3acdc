// Realtime with the real `centrifuge` client, as a browser connects it with the session's realtime block: the
// user's own message, a bot reply sent through the Bot API, the read action, and nothing for anyone else.
import type { LiveClient } from '../support/realtime';
import { botApi, client, live as connect, openSession, say, T, userWithChat, type Session } from './client';

const clients: LiveClient[] = [];
const live = async (session: Session) => {
  const c = await connect(session);
  clients.push(c);
  return c;
};
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

const reason = 'skipped: the stack gives no realtime block (realtime is off there; only HTTP works)';
if (!T.realtime) console.log(`[integration] realtime tests ${reason}`);
const describeRealtime = T.realtime ? describe : describe.skip;

describeRealtime(T.realtime ? 'realtime' : `realtime (${reason})`, () => {
  test('the user’s own message arrives once with its HTTP id; a bot reply via the Bot API arrives; read is announced', async () => {
    const { session, token, chatId } = await userWithChat('live');
    const tab = await live(session);
    const stranger = await live(await openSession('live-stranger'));

    const sent = await say(token, chatId, 'hello over realtime');
    expect(sent.status).toBe(201);
    expect(await tab.waitFor((d) => d.data?.id === sent.body.id, T.patienceMs)).toEqual({ type: 'message', data: sent.body });

    const reply = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'Hi! A human will answer soon.', sender: 'bot' } });
    expect(reply.status).toBe(201);
    const pushed = await tab.waitFor((d) => d.data?.id === reply.body.id, T.patienceMs);
    expect(pushed).toEqual({ type: 'message', data: reply.body });
    expect(pushed.data).toMatchObject({ chat_id: chatId, sender_type: 'outcoming', sender: 'bot', content: 'Hi! A human will answer soon.' });

    expect(await client('POST', `/chats/${chatId}/read`, { token })).toMatchObject({ status: 200 });
    expect(await tab.waitFor((d) => d.type === 'action', T.patienceMs)).toEqual({ type: 'action', data: { action: 'read', chat_id: chatId } });

    // Delivered once each (the client would dedupe by id anyway), and nothing reached another user: a later
    // message of the chat marks the end (the stream hands a chat's records on in order).
    const last = await say(token, chatId, 'the last one');
    await tab.waitFor((d) => d.data?.id === last.body.id, T.patienceMs);
    expect(tab.publications.filter((d) => d.data?.id === sent.body.id)).toHaveLength(1);
    expect(tab.publications.filter((d) => d.data?.id === reply.body.id)).toHaveLength(1);
    expect(stranger.publications).toEqual([]);
  });

  test('every tab of the user gets an operator message; another user’s channel is refused (103)', async () => {
    const { session, chatId } = await userWithChat('tabs');
    const other = await openSession('tabs-other');
    const [tab1, tab2] = [await live(session), await live(session)];
    const op = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'Maria from support here', sender: 'operator' } });
    expect(op.status).toBe(201);
    for (const tab of [tab1, tab2]) {
      expect(await tab.waitFor((d) => d.data?.id === op.body.id, T.patienceMs)).toEqual({ type: 'message', data: expect.objectContaining({ sender: 'operator', sender_type: 'outcoming' }) });
    }
    const foreign = tab1.client.newSubscription(other.realtime!.channel);
    const refused = new Promise<unknown>((resolve) => foreign.once('unsubscribed', resolve));
    foreign.subscribe();
    expect(await refused).toMatchObject({ code: 103 });
  });
});
