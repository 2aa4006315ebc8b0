/**
 * An answer given at once (SQLite, whose statements are synchronous) or later (PostgreSQL): code
 * that works over either database's twin awaits it, or, where SQLite's answer must stay
 * synchronous, goes on with it through `then()`.
 */
export type MaybePromise<T> = T | Promise<T>;

export const isPromise = <T>(value: MaybePromise<T>): value is Promise<T> => typeof (value as { then?: unknown } | null)?.then === 'function';

/** `next` applied to `value`: at once when it is there, once it resolves when it is a promise. */
export function then<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value);
}
