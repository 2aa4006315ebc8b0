import type { JobFilter, JobRow, JobScope } from './rules.js';

/**
 * What the job queue asks its database. Times are epoch milliseconds. Where several instances
 * share the database (PostgreSQL), the adapter takes the row locks that keep each answer true
 * until the transaction ends; SQLite's single writer needs none.
 */
export interface JobPort {
  /** Adds the rows, in as many statements as the dialect needs. */
  insert(rows: readonly JobRow[]): void;
  /**
   * Whether a job of `kind` is pending for the site. Where writers run at once, a lock on the
   * site and kind, held until the transaction ends, makes a second look wait for the first's commit.
   */
  hasPending(siteId: string, kind: string): boolean;
  /** One job of the site and kind; `lock`ed against claims and changes until the transaction ends. */
  find(siteId: string, kind: string, jobId: string, lock: boolean): JobRow | undefined;
  /** A page of the list, newest first (a group in its order), and the list's length. */
  page(filter: JobFilter, offset: number, limit: number): { total: number; rows: JobRow[] };
  /** Deletes jobs of the kind that finished before `before`; answers how many. */
  purgeFinished(kind: string, before: number): number;
  setCancelled(jobId: string, at: number): void;
  /** Cancels the pending jobs of the site, kind and group (a running one is left to finish); answers how many. */
  cancelPendingOfGroup(siteId: string, kind: string, groupId: string, at: number): number;
  /**
   * Takes up to `limit` due pending jobs of the scope, oldest due first, in one statement:
   * running, the attempt counted, leased to `owner` until `leaseUntil`. Never a job another
   * worker is claiming at the same moment.
   */
  claim(scope: JobScope, owner: string, limit: number, now: number, leaseUntil: number): JobRow[];
  /** Moves the leases `owner` still holds on these jobs to `leaseUntil`. */
  extendLeases(owner: string, jobIds: readonly string[], leaseUntil: number): void;
  /**
   * Running jobs of the scope whose lease ends before `cutoff` (null: all of them) go back to
   * pending with `reason`, or fail with `exhaustedReason` when no attempt is left. A job
   * another worker has locked at this moment is left for the next call. Answers how many.
   */
  release(scope: JobScope, now: number, cutoff: number | null, reason: string, exhaustedReason: string): number;
  /** `owner`'s running job back to pending as it was before the claim (its attempt not counted). */
  giveBack(owner: string, jobId: string, now: number): void;
  /** Whether `owner` still holds running job `jobId`; the row then stays locked until the transaction ends. */
  holds(owner: string, jobId: string): boolean;
  markSucceeded(jobId: string, result: unknown, now: number): void;
  /** Replaces a job's payload (a finished job's, to keep less of it). */
  setPayload(jobId: string, payload: unknown): void;
  /** Records a failed attempt of a job `owner` holds (false: it does not): `failed` for good, or `pending` again at `runAfter`. */
  recordFailure(owner: string, jobId: string, failure: { status: 'failed' | 'pending'; runAfter: number; finishedAt: number | null; lastError: string }, now: number): boolean;
  /** Puts off a job `owner` holds until `runAfter`, its attempt not counted (false: it does not hold it). */
  defer(owner: string, jobId: string, message: string, runAfter: number, now: number): boolean;
}

declare module '../db/steps.js' {
  interface Ports {
    jobs: JobPort;
  }
}
