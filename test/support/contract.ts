// The contract's types for tests, generated from docs/openapi.yaml (`npm run openapi` writes packages/client/src/api-types.ts):
// a test that reads a field the document does not have fails tsc, as the page's code does.
import type { components } from '../../packages/client/src/api-types';

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type User = Schemas['User'];
export type Message = Schemas['Message'];
export type Chat = Schemas['Chat'];
export type RealtimeBlock = Schemas['RealtimeBlock'];
export type FileInfo = Schemas['UploadedFile'];
export type BotChatPage = Schemas['BotChatPage'];

type AllKeys<U> = U extends unknown ? keyof U : never;
type PublicationData = Schemas['RealtimePublication']['data'];

/**
 * A publication as a test reads it: `type` tells the members apart, and `data` has the other members' fields as
 * `undefined` (`d.data?.id === sent.id` needs no narrowing first; `d.type === 'message'` narrows `data` to a Message).
 */
export type Publication = Schemas['RealtimePublication'] extends infer P
  ? P extends { type: infer T; data: infer D }
    ? { type: T; data: D & { [K in Exclude<AllKeys<PublicationData>, keyof D>]?: undefined } }
    : never
  : never;

/** The session's realtime block; a session without one (realtime off) fails the test saying so. */
export function realtimeOf(session: Pick<Session, 'realtime'>): RealtimeBlock {
  if (!session.realtime) throw new Error('the session has no realtime block (is realtime off on this stack?)');
  return session.realtime;
}

/** A field the contract makes nullable or optional that this test's request must have filled (fails naming it). */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`${what} is ${String(value)}`);
  return value;
}

/** The download URL of a message's first file (a file of a sent message always has one). */
export const firstFileUrl = (message: { files?: Message['files'] }): string => present(present(message.files, 'the message’s files')[0]?.url, 'its first file’s url');
