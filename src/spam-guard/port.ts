/*
 * What the spam guard (guard.ts) asks its database: its signing key, which challenges were
 * already answered, and how many submissions a client made in the current window. Every
 * instance sharing the database sees the same answers, so a replay or a burst spread over
 * instances is refused as on one.
 */

/** A client's submissions in its current window. */
export interface WindowCount {
  count: number;
  windowStart: Date;
}

export interface SpamGuardPort {
  /** The secret named `name`: `candidate` unless another instance stored one first (then that one). */
  key(name: string, candidate: string, now: Date): string;
  /** Marks challenge `id` as answered until `expiresAt`; false when it already was (a replay). */
  useChallenge(id: string, expiresAt: Date): boolean;
  /**
   * Counts one submission under `key`: a window that began at or before `staleBefore` starts
   * again at `now` with 1, else its count grows by one. Answers the window after counting.
   */
  countSubmission(key: string, now: Date, staleBefore: Date): WindowCount;
  /** Deletes the challenges expired at `now` and the windows begun before `staleBefore`; answers how many rows went. */
  purge(now: Date, staleBefore: Date): number;
}

declare module '../db/steps.js' {
  interface Ports {
    spamGuard: SpamGuardPort;
  }
}
