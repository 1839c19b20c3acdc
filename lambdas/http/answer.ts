// The visitor's answer to an interactive message (POST …/messages/{message_id}/response): its body, by shape (valibot).
import * as v from 'valibot';
import type { HttpRequest } from './http';
import { LIMITS } from '../policies/limits';
import { parse, text, unicodeString } from './validate';
import type { Answer } from '../flows/answer';

/** One of four shapes; which one a message takes is its content_type's (flows/answer.ts checks the fit). */
export const AnswerBody = v.union(
  [
    v.strictObject({ value: text(1, LIMITS.choiceValueLength) }),
    v.strictObject({ card: v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0')), payload: text(1, LIMITS.payloadBytes) }),
    v.strictObject({ values: v.record(v.pipe(v.string(), v.maxLength(64, 'must be at most 64 characters')), v.pipe(unicodeString, v.maxLength(LIMITS.answerLength.textarea, `must be at most ${LIMITS.answerLength.textarea} characters`))) }),
    v.strictObject({
      rating: v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1, 'must be from 1 to 5'), v.maxValue(5, 'must be from 1 to 5')),
      comment: v.optional(text(0, LIMITS.csatCommentLength)),
    }),
  ],
  'must be {"value"}, {"card", "payload"}, {"values"} or {"rating", "comment"?}',
);

export const answerBody = (req: HttpRequest): Answer => parse(AnswerBody, req.json());
