// The event filters of the stream consumers (the same patterns CDK gives Lambda), as the local poller applies them.
import { matchesFilter } from '../../lib/local/stream-records';
import { PUBLISHER, WEBHOOK_DISPATCHER } from '../../lib/consumers';

const record = (eventName: string, image: Record<string, unknown>) => ({ eventName, dynamodb: { NewImage: image } });
const passes = (filters: Record<string, unknown>[], r: unknown) => filters.some((f) => matchesFilter(f, r));

const message = (extra: Record<string, unknown> = {}) => ({ entity: { S: 'message' }, sender_type: { S: 'incoming' }, ...extra });

test('publisher: new messages of either direction and read marks; nothing else', () => {
  expect(passes(PUBLISHER.filters, record('INSERT', message()))).toBe(true);
  expect(passes(PUBLISHER.filters, record('INSERT', message({ sender_type: { S: 'outcoming' } })))).toBe(true);
  expect(passes(PUBLISHER.filters, record('MODIFY', { entity: { S: 'chat' }, last_event: { S: 'read' } }))).toBe(true);
  expect(passes(PUBLISHER.filters, record('MODIFY', { entity: { S: 'chat' }, last_event: { S: 'message' } }))).toBe(false);
  expect(passes(PUBLISHER.filters, record('MODIFY', { entity: { S: 'chat' }, last_event: { S: 'operator_read' } }))).toBe(false);
  expect(passes(PUBLISHER.filters, record('INSERT', { entity: { S: 'chat' } }))).toBe(false);
  expect(passes(PUBLISHER.filters, record('REMOVE', message()))).toBe(false);
});

test('publisher: an edited message (a new version) and typing indicators; typing items removed by TTL are not', () => {
  const edited = message({ sender_type: { S: 'outcoming' }, is_edited: { BOOL: true } });
  expect(passes(PUBLISHER.filters, record('MODIFY', edited))).toBe(true);
  expect(passes(PUBLISHER.filters, record('MODIFY', message({ sender_type: { S: 'outcoming' }, is_edited: { BOOL: false } })))).toBe(false);
  const typing = { entity: { S: 'typing' }, sender: { S: 'bot' } };
  expect(passes(PUBLISHER.filters, record('INSERT', typing))).toBe(true);
  expect(passes(PUBLISHER.filters, record('MODIFY', typing))).toBe(true);
  expect(passes(PUBLISHER.filters, record('REMOVE', typing))).toBe(false);
  // Neither reaches the webhooks.
  expect(passes(WEBHOOK_DISPATCHER.filters, record('MODIFY', { ...edited, webhook: { BOOL: true } }))).toBe(false);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('INSERT', typing))).toBe(false);
});

test('webhook dispatcher: only new messages marked for it (user messages of a bot with a webhook, replies of one with reminders)', () => {
  expect(passes(WEBHOOK_DISPATCHER.filters, record('INSERT', message({ webhook: { BOOL: true } })))).toBe(true);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('INSERT', message()))).toBe(false);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('INSERT', message({ sender_type: { S: 'outcoming' }, webhook: { BOOL: true } })))).toBe(true);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('INSERT', message({ sender_type: { S: 'outcoming' } })))).toBe(false);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('MODIFY', message({ webhook: { BOOL: true } })))).toBe(false);
});

test('webhook dispatcher: a change of an interactive message (the handler sends message.response only for a new answer); no other message change', () => {
  const interactive = message({ sender_type: { S: 'outcoming' }, content_type: { S: 'input_select' } });
  expect(passes(WEBHOOK_DISPATCHER.filters, record('MODIFY', interactive))).toBe(true);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('MODIFY', message({ sender_type: { S: 'outcoming' }, content_type: { S: 'text' } })))).toBe(false);
  expect(passes(WEBHOOK_DISPATCHER.filters, record('REMOVE', interactive))).toBe(false);
});
