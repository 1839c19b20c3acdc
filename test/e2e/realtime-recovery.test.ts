// Centrifuge recovery with the real `centrifuge` client (`recoverable: true`) over the local WebSocket gateway:
// after a drop the client gets what it missed, once each, in order (an edit of an old message too); a position
// the history no longer covers is told so; bad recover input is a protocol error; a redelivered record keeps its
// one offset, and so does a record tried again after its chat update failed beside its position.
import type { PublicationContext, SubscribedContext } from 'centrifuge';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { marshall } from '@aws-sdk/util-dynamodb';
import { userWithChat } from '../support/api';
import { textMessage } from '../support/fixtures';
import { framesOf, liveClientsClosedAfterEach, rawSocket, until, type Frame } from '../support/realtime';
import { realtimeOf } from '../support/contract';
import { createMessage } from '../../lambdas/flows/send';
import { editMessage } from '../../lambdas/flows/edit';
import { handler as publisher } from '../../lambdas/realtime/publish';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, queryAll, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { subscribe } from '../../lambdas/centrifuge/hub';
import { handOver, streamReply } from '../../lambdas/centrifuge/recovery';

const live = liveClientsClosedAfterEach();

/** A user with a chat, its realtime block, and how to make a bot reply in it (through the stream, as a bot's would). */
async function chatOfUser() {
  const { session, chatId, bot } = await userWithChat();
  const to = { userId: session.user.id, botId: bot.id, chatId };
  const reply = async (content: string) => (await createMessage(textMessage(to, content))).item;
  return { rt: realtimeOf(session), to, chatId, reply };
}

/** A recoverable client that keeps each publication's offset and content, and its subscribed events after the first. */
async function recoverableClient(rt: ReturnType<typeof realtimeOf>) {
  const c = await live(rt, { subscription: { recoverable: true } });
  const got: { offset?: number; id: string; content: string }[] = [];
  c.sub.on('publication', (ctx: PublicationContext) => {
    const { data } = ctx.data as { data: { id: string; content: string } };
    got.push({ offset: ctx.offset, id: data.id, content: data.content });
  });
  const resubscribed: SubscribedContext[] = [];
  c.sub.on('subscribed', (ctx) => resubscribed.push(ctx));
  return { c, got, resubscribed };
}

const connect = (token: string) => JSON.stringify({ id: 1, connect: { token } });

test('a dropped socket gets what it missed on resubscribe (recovered: true): a new reply and an edit of a message 21 back, once each, in order', async () => {
  const { rt, to, chatId, reply } = await chatOfUser();
  const { c, got, resubscribed } = await recoverableClient(rt);
  const old = await reply('the oldest');
  for (let i = 0; i < 20; i++) await reply(`filler ${i}`);
  const last = await reply('the last before the drop');
  await until(() => got.some((p) => p.id === last.id), 15_000, 'the messages before the drop');
  // Another socket of the user, without recovery, shows when what the dropped one misses is out.
  const watcher = await live(rt);
  c.client.disconnect();
  const missed = await reply('while away');
  await editMessage(to, chatId, old.id, { content: 'the oldest, edited' });
  await watcher.waitFor((d) => d.data?.id === old.id && d.data.content === 'the oldest, edited');
  const seen = got.length;
  c.client.connect();
  await until(() => resubscribed.length > 0, 15_000, 'the resubscribe');
  expect(resubscribed[0]).toMatchObject({ recovered: true, wasRecovering: true, hasRecoveredPublications: true });
  // A later reply marks the end: nothing more of the missed ones arrives after it.
  const after = await reply('after the reconnect');
  await until(() => got.some((p) => p.id === after.id), 15_000, 'the live reply after recovery');
  const since = got.slice(seen);
  expect(since.map((p) => [p.id, p.content])).toEqual([
    [missed.id, 'while away'],
    [old.id, 'the oldest, edited'],
    [after.id, 'after the reconnect'],
  ]);
  // Positioned one after another: the offsets go on from the last one seen, without a gap.
  const base = got[seen - 1].offset!;
  expect(since.map((p) => p.offset)).toEqual([base + 1, base + 2, base + 3]);
});

test('a socket closed server-side while replies and edits go out: after its reconnect each arrives once, in order', async () => {
  const { rt, to, chatId, reply } = await chatOfUser();
  const { c, got, resubscribed } = await recoverableClient(rt);
  const first = await reply('first');
  await until(() => got.some((p) => p.id === first.id), 15_000, 'the first reply');
  // Closed as API Gateway does (idle timeout, deploy): the client reconnects on its own, racing what is sent.
  const del = await fetch(`${process.env.WS_MANAGEMENT_ENDPOINT}/@connections/${encodeURIComponent(c.clientId())}`, { method: 'DELETE' });
  expect(del.status).toBe(204);
  const sent = [];
  for (let i = 0; i < 4; i++) {
    sent.push(await reply(`during ${i}`));
    await editMessage(to, chatId, first.id, { content: `first, edit ${i}` });
  }
  await until(() => resubscribed.length > 0, 15_000, 'the resubscribe');
  expect(resubscribed[0]).toMatchObject({ recovered: true, wasRecovering: true });
  const end = await reply('the end');
  await until(() => got.some((p) => p.id === end.id), 15_000, 'the last reply');
  const during = sent.flatMap((m, i) => [[m.id, `during ${i}`], [first.id, `first, edit ${i}`]]);
  expect(got.map((p) => [p.id, p.content])).toEqual([[first.id, 'first'], ...during, [end.id, 'the end']]);
  expect(got.map((p) => p.offset)).toEqual(got.map((_, i) => got[0].offset! + i));
});

test('recovery from a position the history does not cover: recovered false, the current position, no publications', async () => {
  const { rt, reply } = await chatOfUser();
  const r = await rawSocket(rt.url);
  const subscribe = (id: number, fields: object) => JSON.stringify({ id, subscribe: { channel: rt.channel, recoverable: true, ...fields } });
  const [, first] = await r.request([connect(rt.token), subscribe(2, {})].join('\n'));
  expect(first).toEqual({ id: 2, subscribe: { recoverable: true, positioned: true, epoch: expect.any(String), offset: 0 } });
  const epoch = (first.subscribe as unknown as { epoch: string }).epoch;
  const frames: Frame[] = [];
  r.ws.on('message', (d) => frames.push(...framesOf(d)));
  const sent = [await reply('one'), await reply('two')];
  await until(() => frames.filter((f) => f.push?.pub).length === 2, 15_000, 'both publications');
  const current = { recoverable: true, positioned: true, epoch, offset: 2, recovered: false, was_recovering: true };
  // Another epoch (the stream made again: after its TTL, or an erasure), and an offset past the position.
  expect(await r.request(subscribe(3, { recover: true, epoch: 'stale', offset: 1 }))).toEqual([{ id: 3, subscribe: current }]);
  expect(await r.request(subscribe(4, { recover: true, epoch, offset: 7 }))).toEqual([{ id: 4, subscribe: current }]);
  // Covered: the publications after the offset, and the offset recovered from (each publication moves it on).
  expect(await r.request(subscribe(5, { recover: true, epoch, offset: 1 }))).toEqual([
    { id: 5, subscribe: { recoverable: true, positioned: true, epoch, offset: 1, recovered: true, was_recovering: true, publications: [{ offset: 2, data: { type: 'message', data: expect.objectContaining({ id: sent[1].id }) } }] } },
  ]);
  r.ws.close();
});

test('a subscription without positions makes no stream: nothing written or kept for it; a recoverable one then makes it, and the plain socket still gets every publication', async () => {
  const { rt, reply } = await chatOfUser();
  const streamItem = async () => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.channelStream(rt.channel), ConsistentRead: true }))).Item;
  const kept = async () => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.channelHistoryPartition(rt.channel) }, ConsistentRead: true });
  const plain = await rawSocket(rt.url);
  const [, subscribed] = await plain.request([connect(rt.token), JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })].join('\n'));
  expect(subscribed).toEqual({ id: 2, subscribe: {} });
  const frames: Frame[] = [];
  plain.ws.on('message', (d) => frames.push(...framesOf(d)));
  const pubOf = (id: string) => frames.find((f) => f.push?.pub?.data?.data?.id === id)?.push?.pub as { offset?: number } | undefined;
  const first = await reply('to the plain socket');
  await until(() => pubOf(first.id) !== undefined, 15_000, 'the first reply');
  expect(pubOf(first.id)!.offset).toBeUndefined();
  expect(await streamItem()).toBeUndefined();
  expect(await kept()).toEqual([]);
  // A recoverable socket of the same user: the stream starts at offset 0, and the next publication is its first.
  const { got } = await recoverableClient(rt);
  const second = await reply('to both');
  await until(() => got.some((p) => p.id === second.id) && pubOf(second.id) !== undefined, 15_000, 'the second reply on both sockets');
  expect(got.find((p) => p.id === second.id)!.offset).toBe(1);
  expect((await kept()).map((h) => (h.data as { data: { id: string } }).data.id)).toEqual([second.id]);
  plain.ws.close();
});

test('bad recover input is a protocol error (107), never a crash; the connection stays usable', async () => {
  const { rt } = await chatOfUser();
  const r = await rawSocket(rt.url);
  await r.request(connect(rt.token));
  const bad = [{ offset: 'abc' }, { offset: -1 }, { offset: 1.5 }, { offset: 2 ** 60 }, { offset: '99999999999999999999' }, { offset: {} }, { epoch: 5 }, { epoch: 'x'.repeat(65) }, { recover: 'yes' }, { recoverable: 1 }];
  const frame = bad.map((fields, i) => JSON.stringify({ id: 10 + i, subscribe: { channel: rt.channel, recover: true, ...fields } })).join('\n');
  expect(await r.request(frame)).toEqual(bad.map((_, i) => ({ id: 10 + i, error: { code: 107, message: expect.stringMatching(/^bad request: /) } })));
  // A decimal string is an offset too (a uint64 as protobuf's JSON writes it).
  const [ok] = await r.request(JSON.stringify({ id: 30, subscribe: { channel: rt.channel, recoverable: true, recover: true, offset: '0' } }));
  expect(ok).toMatchObject({ id: 30, subscribe: { recovered: true, offset: 0 } });
  r.ws.close();
});

test('a publication positioned while a subscribe is sending its reply reaches the socket once, after the reply, before the next live one', async () => {
  const { rt, reply } = await chatOfUser();
  const item = await reply('a message to copy');
  const r = await rawSocket(rt.url);
  const frames: Frame[] = [];
  r.ws.on('message', (d) => frames.push(...framesOf(d)));
  const [connected] = await r.request(connect(rt.token));
  const connectionId = connected.connect!.client;
  // The subscribe's steps, with a publication positioned between its reply and its hand-over.
  await subscribe(connectionId, rt.channel, undefined, true);
  const { stream } = await streamReply(connectionId, rt.channel, { positions: true });
  const record = (n: number) => ({
    eventName: 'INSERT',
    dynamodb: { SequenceNumber: `9${String(n).padStart(30, '0')}`, NewImage: marshall({ entity: 'message', ...item, id: String(BigInt(item.id) + BigInt(n)), count_in_chat: false }, { removeUndefinedValues: true }) },
  });
  expect(await publisher({ Records: [record(1)] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
  await handOver(connectionId, rt.channel, stream);
  expect(await publisher({ Records: [record(2)] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
  const ids = [1, 2].map((n) => String(BigInt(item.id) + BigInt(n)));
  await until(() => frames.some((f) => f.push?.pub?.data?.data?.id === ids[1]), 15_000, 'the live publication');
  // Each post to the socket is done before the call that made it returns: a live post of the first would come before the hand-over's.
  const pubs = frames.flatMap((f) => (f.push?.pub && ids.includes(String(f.push.pub.data?.data?.id)) ? [{ id: f.push.pub.data?.data?.id, offset: (f.push.pub as { offset?: number }).offset }] : []));
  expect(pubs).toEqual([
    { id: ids[0], offset: stream.offset + 1 },
    { id: ids[1], offset: stream.offset + 2 },
  ]);
  r.ws.close();
});

test('a redelivered stream record keeps its one offset and history entry; one before the last positioned is not posted again; a given-up record blocks no offset', async () => {
  const { rt, reply } = await chatOfUser();
  const { got } = await recoverableClient(rt);
  const item = await reply('positioned by the stream');
  await until(() => got.some((p) => p.id === item.id), 15_000, 'the reply');
  // The publisher itself, on two records after the stream's own (sequence numbers above it), run as a batch
  // retried whole would run them again.
  const record = (n: number) => ({
    eventName: 'INSERT',
    eventID: `redelivered-${n}`,
    dynamodb: { SequenceNumber: `9${String(n).padStart(30, '0')}`, NewImage: marshall({ entity: 'message', ...item, id: String(BigInt(item.id) + BigInt(n)), count_in_chat: false }, { removeUndefinedValues: true }) },
  });
  const batch = { Records: [record(1), record(2)] } as unknown as DynamoDBStreamEvent;
  expect(await publisher(batch)).toEqual({ batchItemFailures: [] });
  expect(await publisher(batch)).toEqual({ batchItemFailures: [] });
  const ids = [1, 2, 3].map((n) => String(BigInt(item.id) + BigInt(n)));
  const history = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.channelHistoryPartition(rt.channel) }, ConsistentRead: true });
  expect(history.map((h) => (h.data as { data: { id: string } }).data.id)).toEqual([item.id, ...ids.slice(0, 2)]);
  // A history item an earlier record wrote at the next offset before it was given up (its position never moved):
  // the next record takes the offset over. That record marks the end (the stream's own would now count as before these).
  const stream = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.channelStream(rt.channel), ConsistentRead: true }))).Item as { epoch: string; offset: number };
  const abandoned = { ...keys.channelHistory(rt.channel, stream.epoch, stream.offset + 1), data: { type: 'message', data: { id: 'abandoned' } }, seq: record(1).dynamodb.SequenceNumber.padStart(40, '0') };
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: abandoned }));
  expect(await publisher({ Records: [record(3)] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
  await until(() => got.some((p) => p.id === ids[2]), 15_000, 'the last record');
  // The first record is posted once; the last positioned one may be posted again (its posts may not all have
  // gone out), with the offset it has.
  const base = got.find((p) => p.id === item.id)!.offset!;
  expect(got.filter((p) => p.id === ids[0]).map((p) => p.offset)).toEqual([base + 1]);
  expect(new Set(got.filter((p) => p.id === ids[1]).map((p) => p.offset))).toEqual(new Set([base + 2]));
  expect(got.find((p) => p.id === ids[2])!.offset).toBe(base + 3);
});

test('a chat update refused beside a position written: the record is tried again, keeps its one offset and history entry, and is posted once, counted once', async () => {
  const { rt, to, chatId, reply } = await chatOfUser();
  const { got } = await recoverableClient(rt);
  const item = await reply('positioned by the stream');
  await until(() => got.some((p) => p.id === item.id), 15_000, 'the reply');
  const chatKey = keys.chat(to.userId, chatId);
  const unread = async () => ((await dynamo.send(new GetCommand({ TableName: tableName(), Key: chatKey, ConsistentRead: true }))).Item as { unread_msg_by_user: number }).unread_msg_by_user;
  const before = await unread();
  // A counted reply's record after the stream's own, run by the publisher itself.
  const id = String(BigInt(item.id) + 1n);
  const record = { eventName: 'INSERT', eventID: 'counted', dynamodb: { SequenceNumber: `9${'1'.padStart(30, '0')}`, NewImage: marshall({ entity: 'message', ...item, id, count_in_chat: true }, { removeUndefinedValues: true }) } };
  // AWS refuses the chat's first update (a throttle the SDK's retries gave up on); every other call goes through.
  const send = dynamo.send.bind(dynamo);
  const historyPuts: string[] = [];
  let chatUpdates = 0;
  const faulty = (command: UpdateCommand | PutCommand) => {
    if (command instanceof UpdateCommand && command.input.Key?.sk === chatKey.sk && command.input.Key.pk === chatKey.pk && chatUpdates++ === 0) {
      return Promise.reject(Object.assign(new Error('injected throttle'), { name: 'ProvisionedThroughputExceededException' }));
    }
    if (command instanceof PutCommand && command.input.Item?.pk === keys.channelHistoryPartition(rt.channel)) historyPuts.push(String(command.input.Item.sk));
    return send(command as never);
  };
  const spy = jest.spyOn(dynamo, 'send').mockImplementation(faulty as never);
  try {
    expect(await publisher({ Records: [record] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
  } finally {
    spy.mockRestore();
  }
  await until(() => got.some((p) => p.id === id), 15_000, 'the counted reply');
  const base = got.find((p) => p.id === item.id)!.offset!;
  expect(got.filter((p) => p.id === id).map((p) => p.offset)).toEqual([base + 1]);
  // The first try positioned it beside the refused update; the retry wrote the same history item again.
  expect(chatUpdates).toBeGreaterThanOrEqual(2);
  expect(historyPuts.length).toBeGreaterThanOrEqual(2);
  expect(new Set(historyPuts).size).toBe(1);
  const stream = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.channelStream(rt.channel), ConsistentRead: true }))).Item as { epoch: string; offset: number };
  expect(stream.offset).toBe(base + 1);
  const history = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.channelHistoryPartition(rt.channel) }, ConsistentRead: true });
  expect(history.filter((h) => (h.data as { data: { id: string } }).data.id === id).map((h) => String(h.sk))).toEqual([keys.channelHistory(rt.channel, stream.epoch, base + 1).sk]);
  expect(await unread()).toBe(before + 1);
});
