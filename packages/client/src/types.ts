// The Client API's types, named from api-types.ts (generated from docs/openapi.yaml): nothing hand-written.
import type { components } from './api-types';

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type User = Schemas['User'];
export type Widget = Schemas['Widget'];
export type RealtimeBlock = Schemas['RealtimeBlock'];
export type ChatInfo = Schemas['Chat'];
export type ChatRequest = Schemas['ChatRequest'];
export type Message = Schemas['Message'];
export type MessageRequest = Schemas['MessageRequest'];
export type UploadedFile = Schemas['UploadedFile'];
export type UploadTicket = Schemas['UploadTicket'];
export type FileType = Schemas['FileType'];
/** The visitor's answer to an interactive message: {value} | {card, payload} | {values} | {rating, comment?}. */
export type AnswerRequest = Schemas['AnswerRequest'];
export type Choice = Schemas['Choice'];
export type Card = Schemas['Card'];
export type CardAction = Schemas['CardAction'];
export type FormField = Schemas['FormField'];
export type InputSelectAttributes = Schemas['InputSelectAttributes'];
export type CardsAttributes = Schemas['CardsAttributes'];
export type FormAttributes = Schemas['FormAttributes'];
export type CsatAttributes = Schemas['CsatAttributes'];
/** What arrives on the user's channel. */
export type Publication = Schemas['RealtimePublication'];
