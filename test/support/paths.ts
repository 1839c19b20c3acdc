// A reply's body typed by its request: the method and the concrete path (`/api/client/chats/${id}/messages?limit=5`)
// pick the documented operation of docs/openapi.yaml (packages/client/src/api-types.ts), and its success body is the reply's type.
import type { components, paths } from '../../packages/client/src/api-types';

type Documented = Extract<keyof paths, string>;
type ErrorBody = components['schemas']['Error'];

type Segments<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [S];
type WithoutQuery<U extends string> = U extends `${infer Path}?${string}` ? Path : U;
/** A `{name}` segment of the document takes any one segment of the request; every other must be the same. */
type SameRoute<Req extends string[], Doc extends string[]> = Req extends [infer R, ...infer RestR extends string[]]
  ? Doc extends [infer D, ...infer RestD extends string[]]
    ? D extends `{${string}}`
      ? SameRoute<RestR, RestD>
      : [R] extends [D]
        ? SameRoute<RestR, RestD>
        : false
    : false
  : Doc extends []
    ? true
    : false;

/** The documented path template a request path is an instance of (never when there is none). */
export type RouteOf<U extends string> = { [P in Documented]: SameRoute<Segments<WithoutQuery<U>>, Segments<P>> extends true ? P : never }[Documented];

type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type SuccessOf<Op> = Op extends { responses: infer R } ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]> : never;
type OperationOf<M extends string, P extends Documented> = Lowercase<M> extends keyof paths[P] ? paths[P][Lowercase<M>] : never;

/**
 * A request whose path or method is not a literal the document has (a path built from parts, a route of the
 * table): its body is read as the contract's error, or named by the caller (`call<T>`).
 */
type Untyped = Partial<ErrorBody>;

/**
 * What a request's reply body holds: the operation's success body, with the contract's `error` beside it (a test
 * reads one or the other by the status it expects); an undocumented request's body is the error alone.
 */
export type BodyOf<M extends string, U extends string> = [RouteOf<U>] extends [never]
  ? Untyped
  : [OperationOf<M, RouteOf<U>>] extends [never]
    ? Untyped
    : SuccessOf<OperationOf<M, RouteOf<U>>> & Partial<ErrorBody>;
