import { and, asc, count, desc, eq, inArray, lt, lte, sql, type Column, type SQL } from 'drizzle-orm';
import type { PgExecutor } from '../db/postgres.js';
import { jobs } from '../db/pg-schema.js';
import { conflict, notFound } from '../errors.js';
import type { MaybePromise } from '../maybe.js';
import { paginateAsync, type Page } from '../pagination.js';
import { byClaimOrder, isFinalFailure, kindInScope, newJobRows, noAttemptsLeft, noLease, type JobListQuery, type JobRow, type JobScope, type NewJob } from './queue-common.js';

export type { Job, JobListQuery, JobRow, JobScope, NewJob } from './queue-common.js';

// Well under PostgreSQL's 65,535 parameters per statement (a job row has 20 columns).
const ROWS_PER_INSERT = 1000;

/** A value bound as `column` encodes it (a Date as an ISO instant, for timestamptz columns). */
const asColumn = (value: unknown, column: Column): SQL => sql`${sql.param(value, column)}`;

/**
 * The PostgreSQL twin of JobQueue (queue.ts): the same methods with the same rules, each
 * answering a promise. Several instances of the service may share the database, so where
 * SQLite relies on its single writer, this queue relies on row locks: claims and releases
 * take rows with `FOR UPDATE SKIP LOCKED` (two workers never take the same job, and neither
 * waits on the other), and every change to a running job checks, under the row's lock, that
 * the worker still holds its lease. Times are epoch milliseconds, as for JobQueue.
 */
export class PgJobQueue {
  private readonly inScope: SQL | undefined;

  constructor(
    private readonly db: PgExecutor,
    scope: JobScope = {},
  ) {
    this.inScope = kindInScope(jobs.kind, scope);
  }

  /** The condition that `owner` still holds running job `jobId`. */
  private heldBy(owner: string, jobId: string): SQL | undefined {
    return and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running'));
  }

  /** Adds jobs, all of them or none; inside a caller's transaction when given one (an outbox). */
  async enqueue(siteId: string, items: readonly NewJob[], maxAttempts: number, now = new Date(), db: PgExecutor = this.db): Promise<JobRow[]> {
    const rows = newJobRows(siteId, items, maxAttempts, now);
    await db.transaction(async (tx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await tx.insert(jobs).values(rows.slice(i, i + ROWS_PER_INSERT));
    });
    return rows;
  }

  /**
   * The twin of JobQueue.enqueueUnlessPending. Transactions that both look before either commits
   * (two files of a site indexed at once, on one instance or two) would each add one: a lock on
   * the site and kind, held until the caller's transaction ends, makes the second look wait.
   */
  async enqueueUnlessPending(siteId: string, item: NewJob, maxAttempts: number, now = new Date(), db: PgExecutor = this.db): Promise<JobRow | null> {
    return db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${item.kind}:${siteId}`}, 0))`);
      const [pending] = await tx
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.siteId, siteId), eq(jobs.kind, item.kind), eq(jobs.status, 'pending')))
        .limit(1);
      return pending ? null : (await this.enqueue(siteId, [item], maxAttempts, now, tx))[0]!;
    });
  }

  async get(siteId: string, kind: string, jobId: string): Promise<JobRow> {
    const [row] = await this.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.siteId, siteId), eq(jobs.kind, kind)));
    if (!row) throw notFound('task');
    return row;
  }

  list(siteId: string, kind: string, query: JobListQuery): Promise<Page<JobRow>> {
    const filters: SQL[] = [eq(jobs.siteId, siteId), eq(jobs.kind, kind)];
    if (query.groupId) filters.push(eq(jobs.groupId, query.groupId));
    if (query.status) filters.push(eq(jobs.status, query.status));
    const where = and(...filters);
    return paginateAsync(
      query.page,
      query.limit,
      async () => (await this.db.select({ n: count() }).from(jobs).where(where))[0]!.n,
      (offset, limit) => this.db.select().from(jobs).where(where).orderBy(desc(jobs.createdAt), jobs.position).limit(limit).offset(offset),
    );
  }

  /**
   * Deletes jobs of a kind that finished (succeeded, failed or cancelled) before `before`:
   * for kinds whose own records say what happened (webhook deliveries), so the queue keeps
   * no unbounded history of them.
   */
  async purgeFinished(kind: string, before: Date): Promise<number> {
    const deleted = await this.db
      .delete(jobs)
      .where(and(eq(jobs.kind, kind), inArray(jobs.status, ['succeeded', 'failed', 'cancelled']), lt(jobs.finishedAt, before)));
    return deleted.rowCount ?? 0;
  }

  /** Cancels a pending job; anything else (running, finished) is a 409. */
  cancel(siteId: string, kind: string, jobId: string, now = new Date()): Promise<JobRow> {
    return this.db.transaction(async (tx) => {
      // Locked, so that no worker claims it between the look and the change.
      const [job] = await tx
        .select()
        .from(jobs)
        .where(and(eq(jobs.id, jobId), eq(jobs.siteId, siteId), eq(jobs.kind, kind)))
        .for('update');
      if (!job) throw notFound('task');
      if (job.status !== 'pending') throw conflict(`Only a pending task can be cancelled; this one is ${job.status}`);
      const changes = { status: 'cancelled' as const, finishedAt: now, updatedAt: now };
      await tx.update(jobs).set(changes).where(eq(jobs.id, jobId));
      return { ...job, ...changes };
    });
  }

  /**
   * Claims up to `limit` due jobs atomically, counting the attempt and taking a lease; oldest
   * due first. One statement: the subquery locks the due jobs, skipping those another worker
   * is claiming at this moment, and the update takes them.
   */
  async claim(owner: string, limit: number, now: number, leaseMs: number): Promise<JobRow[]> {
    if (limit <= 0) return [];
    const at = new Date(now);
    const due = this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'pending'), lte(jobs.runAfter, at), this.inScope))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt), asc(jobs.position))
      .limit(limit)
      .for('update', { skipLocked: true });
    const claimed = await this.db
      .update(jobs)
      .set({
        status: 'running',
        attempts: sql`${jobs.attempts} + 1`,
        leaseOwner: owner,
        leaseUntil: new Date(now + leaseMs),
        startedAt: at,
        updatedAt: at,
      })
      .where(inArray(jobs.id, due))
      .returning();
    return claimed.sort(byClaimOrder);
  }

  /** Extends the lease of jobs this worker is running. */
  async heartbeat(owner: string, jobIds: readonly string[], now: number, leaseMs: number): Promise<void> {
    if (jobIds.length === 0) return;
    await this.db
      .update(jobs)
      .set({ leaseUntil: new Date(now + leaseMs) })
      .where(and(inArray(jobs.id, [...jobIds]), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running')));
  }

  /**
   * Returns running jobs to pending: those whose lease expired (`expiredBefore`), or all of
   * them (null). A job that has used all its attempts fails instead. One statement; a job
   * another worker has locked at this moment (renewing its lease, recording its outcome) is
   * left for the next call rather than waited for.
   *
   * Note: with several instances on one database, "all of them" includes jobs that other,
   * living instances are running: null is only for when no other instance can be.
   */
  async release(now: number, expiredBefore: number | null, reason: string): Promise<number> {
    const at = new Date(now);
    const cutoff = expiredBefore === null ? sql`'infinity'::timestamptz` : new Date(expiredBefore);
    const expired = this.db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'running'), lt(jobs.leaseUntil, cutoff), this.inScope))
      .for('update', { skipLocked: true });
    // What SQLite does in two statements (fail the exhausted, return the rest), row by row.
    const ifExhausted = (failed: SQL | Column, returned: SQL | Column) =>
      sql`case when ${jobs.attempts} >= ${jobs.maxAttempts} then ${failed} else ${returned} end`;
    const released = await this.db
      .update(jobs)
      .set({
        status: ifExhausted(sql`'failed'`, sql`'pending'`),
        finishedAt: ifExhausted(asColumn(at, jobs.finishedAt), jobs.finishedAt),
        runAfter: ifExhausted(jobs.runAfter, asColumn(at, jobs.runAfter)),
        lastError: ifExhausted(asColumn(noAttemptsLeft(reason), jobs.lastError), asColumn(reason, jobs.lastError)),
        updatedAt: at,
        ...noLease,
      })
      .where(inArray(jobs.id, expired));
    return released.rowCount ?? 0;
  }

  /** Gives a running job back untouched (shutdown): the attempt it used is not held against it. */
  async giveBack(owner: string, jobId: string, now: number): Promise<void> {
    const at = new Date(now);
    await this.db
      .update(jobs)
      .set({ status: 'pending', attempts: sql`greatest(${jobs.attempts} - 1, 0)`, runAfter: at, updatedAt: at, ...noLease })
      .where(this.heldBy(owner, jobId));
  }

  /**
   * Commits a job's effect and its success in one transaction, only while this worker still
   * holds the job: a job's effect therefore happens at most once, even if it ran twice.
   * `commit` returns what the job's record keeps as its result. False when the lease was lost.
   * The job's row stays locked until the transaction ends, so its lease cannot be released
   * or its job claimed again while the effect commits.
   */
  succeed(owner: string, jobId: string, now: number, commit: (tx: PgExecutor) => MaybePromise<unknown>): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [held] = await tx.select({ id: jobs.id }).from(jobs).where(this.heldBy(owner, jobId)).for('update');
      if (!held) return false;
      const result = await commit(tx);
      const at = new Date(now);
      await tx
        .update(jobs)
        .set({ status: 'succeeded', result, finishedAt: at, updatedAt: at, lastError: null, ...noLease })
        .where(eq(jobs.id, jobId));
      return true;
    });
  }

  /**
   * Puts a job off until `runAfter` because what it needs is unavailable (not its own fault):
   * the attempt is not held against it. False when the lease was lost.
   */
  async defer(owner: string, jobId: string, message: string, runAfter: number, now: number): Promise<boolean> {
    const deferred = await this.db
      .update(jobs)
      .set({
        status: 'pending',
        attempts: sql`greatest(${jobs.attempts} - 1, 0)`,
        waits: sql`${jobs.waits} + 1`,
        runAfter: new Date(runAfter),
        lastError: message,
        updatedAt: new Date(now),
        ...noLease,
      })
      .where(this.heldBy(owner, jobId));
    return (deferred.rowCount ?? 0) > 0;
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
    onFailed?: (tx: PgExecutor) => MaybePromise<unknown>,
  ): Promise<'retry' | 'failed' | 'lease lost'> {
    const final = isFinalFailure(job, permanent);
    return this.db.transaction(async (tx) => {
      const recorded = await tx
        .update(jobs)
        .set({
          status: final ? 'failed' : 'pending',
          runAfter: final ? job.runAfter : new Date(retryAt),
          finishedAt: final ? new Date(now) : null,
          lastError: message,
          updatedAt: new Date(now),
          ...noLease,
        })
        .where(this.heldBy(owner, job.id));
      if (!recorded.rowCount) return 'lease lost';
      if (final) await onFailed?.(tx);
      return final ? 'failed' : 'retry';
    });
  }
}
