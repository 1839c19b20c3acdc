// The contract's types for tests, generated from docs/openapi.yaml (`npm run openapi` writes web/api-types.ts):
// a test that reads a field the document does not have fails tsc, as the page's code does.
import type { components } from '../../web/api-types';

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type User = Schemas['User'];
export type Message = Schemas['Message'];
export type Chat = Schemas['Chat'];
export type RealtimeBlock = Schemas['RealtimeBlock'];
export type FileInfo = Schemas['UploadedFile'];
export type BotChatPage = Schemas['BotChatPage'];

/** The session's realtime block; a session without one (realtime off) fails the test saying so. */
export function realtimeOf(session: Pick<Session, 'realtime'>): RealtimeBlock {
  if (!session.realtime) throw new Error('the session has no realtime block (is realtime off on this stack?)');
  return session.realtime;
}
