// @nexus-chat/client: a typed client of the chat service's Client API (session, chats, messages, files, realtime).
export { createChatClient, ChatClient, type ChatClientOptions, type ClientEvents, type ClientStatus } from './client';
export { Chat, type ChatEvents, type Typing } from './chat';
export { ApiError, type Identity } from './http';
export { MessageStore, isNewer } from './store';
export { memoryStorage, type StorageLike } from './storage';
export { SMALL_FILE_BYTES, type FileLike, type SendFileOptions } from './upload';
export type { WebSocketClass } from './realtime';
export type * from './types';
export type { components, paths } from './api-types';
