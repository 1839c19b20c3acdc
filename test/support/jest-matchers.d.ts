/// <reference types="jest" />
// @types/jest gives the asymmetric matchers (expect.objectContaining, expect.any, ...) the type `any`, which then
// spreads through every expected object a test builds; here they are `unknown`, which toEqual and toMatchObject take.
declare namespace jest {
  interface Expect {
    anything(): unknown;
    any(classType: unknown): unknown;
    arrayContaining<E = unknown>(arr: readonly E[]): unknown;
    closeTo(num: number, numDigits?: number): unknown;
    objectContaining<E = object>(obj: E): unknown;
    stringMatching(str: string | RegExp): unknown;
    stringContaining(str: string): unknown;
  }
  interface InverseAsymmetricMatchers {
    arrayContaining<E = unknown>(arr: readonly E[]): unknown;
    objectContaining<E = object>(obj: E): unknown;
    stringMatching(str: string | RegExp): unknown;
    stringContaining(str: string): unknown;
  }
}
