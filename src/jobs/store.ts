import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { conflict, notFound } from '../errors.js';
import type { Page } from '../pagination.js';
import type {} from './port.js'; // the jobs port the steps below ask
import { byClaimOrder, isFinalFailure, newJobRows, noAttemptsLeft, type JobListQuery, type JobRow, type JobScope, type NewJob } from './rules.js';

export type { Job, JobFilter, JobListQuery, JobRow, JobScope, NewJob } from './rules.js';

/*
 * The job queue's mechanics, for every kind alike and on both databases: enqueue, claim, lease,
 * heartbeat, give-back, failure with retry or for good, success, cancel. Each state change is
 * one statement or one transaction, and every change to a running job checks that the worker
 * still holds its lease. What a job does is its handler's business (see loop.ts).
 */

/** Adds jobs, all of them or none: inside the caller's transaction when composed there (an outbox). */
export function* enqueueSteps(siteId: string, items: readonly NewJob[], maxAttempts: number, now = new Date()): Steps<JobRow[]> {
  const rows = newJobRows(siteId, items, maxAttempts, now);
  if (rows.length > 0) yield* ask('jobs', 'insert', rows);
  return rows;
}

/**
 * Adds one job unless one of its kind is already pending for the site (it will do the work
 * this one would): for kinds that catch up on a site's state, such as embeddings. Answers the
 * job added, or null.
 */
export function* enqueueUnlessPendingSteps(siteId: string, item: NewJob, maxAttempts: number, now = new Date()): Steps<JobRow | null> {
  if (yield* ask('jobs', 'hasPending', siteId, item.kind)) return null;
  const [added] = yield* enqueueSteps(siteId, [item], maxAttempts, now);
  return added!;
}

/**
 * Returns running jobs of the scope to pending: those whose lease expired (`expiredBefore`),
 * or all of them (null), which only holds where no other process can be running them. A job
 * that has used all its attempts fails instead.
 */
export function* releaseSteps(scope: JobScope, now: number, expiredBefore: number | null, reason: string): Steps<number> {
  return yield* ask('jobs', 'release', scope, now, expiredBefore, reason, noAttemptsLeft(reason));
}

/**
 * How a database runs a callback once the write transaction under way has committed: how a
 * store wakes a job loop for the jobs it has just queued. Built per database by the wiring.
 */
export type AfterCommit = (callback: () => void) => void;

export interface JobQueueOptions {
  /**
   * No other process runs this database's jobs (SQLite, whose DATA_DIR lock keeps one server
   * to it): jobs found running at start were left by a process that is gone. Never where
   * several instances share the database (PostgreSQL).
   */
  soleWorker: boolean;
  /** The kinds this queue claims and releases (all by default); see `scoped`. */
  scope?: JobScope;
}

function* found(row: Steps<JobRow | undefined>): Steps<JobRow> {
  const job = yield* row;
  if (!job) throw notFound('task');
  return job;
}

export class JobQueue {
  private readonly scope: JobScope;

  constructor(
    private readonly db: StepDatabase,
    private readonly options: JobQueueOptions,
  ) {
    this.scope = options.scope ?? {};
  }

  get soleWorker(): boolean {
    return this.options.soleWorker;
  }

  /** The same queue, claiming and releasing only the kinds of `scope` (a loop of their own). */
  scoped(scope: JobScope): JobQueue {
    return new JobQueue(this.db, { ...this.options, scope });
  }

  /** Adds jobs, all of them or none. */
  enqueue(siteId: string, items: readonly NewJob[], maxAttempts: number, now = new Date()): Promise<JobRow[]> {
    return this.db.write(() => enqueueSteps(siteId, items, maxAttempts, now));
  }

  /** See enqueueUnlessPendingSteps. */
  enqueueUnlessPending(siteId: string, item: NewJob, maxAttempts: number, now = new Date()): Promise<JobRow | null> {
    return this.db.write(() => enqueueUnlessPendingSteps(siteId, item, maxAttempts, now));
  }

  get(siteId: string, kind: string, jobId: string): Promise<JobRow> {
    return this.db.read(() => found(ask('jobs', 'find', siteId, kind, jobId, false)));
  }

  list(siteId: string, kind: string, query: JobListQuery): Promise<Page<JobRow>> {
    const { page, limit, groupId, status } = query;
    return this.db.read(function* () {
      const { total, rows } = yield* ask('jobs', 'page', { siteId, kind, groupId, status }, (page - 1) * limit, limit);
      return { items: rows, pagination: { page, limit, total, pages: Math.ceil(total / limit) } };
    });
  }

  /**
   * Deletes jobs of a kind that finished (succeeded, failed or cancelled) before `before`:
   * for kinds whose own records say what happened (webhook deliveries), so the queue keeps
   * no unbounded history of them.
   */
  purgeFinished(kind: string, before: Date): Promise<number> {
    return this.db.read(() => ask('jobs', 'purgeFinished', kind, before.getTime()));
  }

  /** Cancels a pending job; anything else (running, finished) is a 409. */
  cancel(siteId: string, kind: string, jobId: string, now = new Date()): Promise<JobRow> {
    return this.db.write(function* () {
      // Locked, so that no worker claims it between the look and the change.
      const job = yield* found(ask('jobs', 'find', siteId, kind, jobId, true));
      if (job.status !== 'pending') throw conflict(`Only a pending task can be cancelled; this one is ${job.status}`);
      yield* ask('jobs', 'setCancelled', jobId, now.getTime());
      return { ...job, status: 'cancelled' as const, finishedAt: now, updatedAt: now };
    });
  }

  /** Claims up to `limit` due jobs atomically, counting the attempt and taking a lease; oldest due first. */
  async claim(owner: string, limit: number, now: number, leaseMs: number): Promise<JobRow[]> {
    if (limit <= 0) return [];
    const claimed = await this.db.read(() => ask('jobs', 'claim', this.scope, owner, limit, now, now + leaseMs));
    return claimed.sort(byClaimOrder);
  }

  /** Extends the lease of jobs this worker is running. */
  async heartbeat(owner: string, jobIds: readonly string[], now: number, leaseMs: number): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db.write(() => ask('jobs', 'extendLeases', owner, jobIds, now + leaseMs));
  }

  /** See releaseSteps; only the kinds of this queue's scope. */
  release(now: number, expiredBefore: number | null, reason: string): Promise<number> {
    return this.db.write(() => releaseSteps(this.scope, now, expiredBefore, reason));
  }

  /** Gives a running job back untouched (shutdown): the attempt it used is not held against it. */
  async giveBack(owner: string, jobId: string, now: number): Promise<void> {
    await this.db.read(() => ask('jobs', 'giveBack', owner, jobId, now));
  }

  /**
   * Commits a job's effect and its success in one transaction, only while this worker still
   * holds the job: a job's effect therefore happens at most once, even if it ran twice.
   * `commit` answers what the job's record keeps as its result. False when the lease was lost.
   * The job's row stays locked until the transaction ends, so its lease cannot be released or
   * its job claimed again while the effect commits.
   */
  succeed(owner: string, jobId: string, now: number, commit: () => Steps<unknown>): Promise<boolean> {
    return this.db.write(function* () {
      if (!(yield* ask('jobs', 'holds', owner, jobId))) return false;
      const result = yield* commit();
      yield* ask('jobs', 'markSucceeded', jobId, result, now);
      return true;
    });
  }

  /**
   * Puts a job off until `runAfter` because what it needs is unavailable (not its own fault):
   * the attempt is not held against it. False when the lease was lost.
   */
  defer(owner: string, jobId: string, message: string, runAfter: number, now: number): Promise<boolean> {
    return this.db.read(() => ask('jobs', 'defer', owner, jobId, message, runAfter, now));
  }

  /**
   * Records a failed attempt: retried at `retryAt`, or failed for good when permanent or out of
   * attempts (then `onFailed` runs in the same transaction).
   */
  fail(
    owner: string,
    job: JobRow,
    message: string,
    permanent: boolean,
    retryAt: number,
    now: number,
    onFailed?: () => Steps<unknown>,
  ): Promise<'retry' | 'failed' | 'lease lost'> {
    const final = isFinalFailure(job, permanent);
    const failure = { status: final ? ('failed' as const) : ('pending' as const), runAfter: final ? job.runAfter.getTime() : retryAt, finishedAt: final ? now : null, lastError: message };
    return this.db.write(function* () {
      if (!(yield* ask('jobs', 'recordFailure', owner, job.id, failure, now))) return 'lease lost' as const;
      if (!final) return 'retry' as const;
      if (onFailed) yield* onFailed();
      return 'failed' as const;
    });
  }
}
