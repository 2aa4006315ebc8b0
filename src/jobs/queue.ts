import { and, asc, count, desc, eq, inArray, lt, lte, sql, type SQL } from 'drizzle-orm';
import { WRITE_TRANSACTION, type Executor } from '../db/client.js';
import { jobs } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import { isPromise } from '../maybe.js';
import { paginate, type Page } from '../pagination.js';
import { byClaimOrder, isFinalFailure, kindInScope, newJobRows, noAttemptsLeft, noLease, type JobListQuery, type JobRow, type JobScope, type NewJob } from './queue-common.js';

export type { Job, JobListQuery, JobRow, JobScope, NewJob } from './queue-common.js';

const p = (name: string) => sql.placeholder(name);

/**
 * What runs inside one of this queue's transactions answers at once: better-sqlite3 commits when
 * the callback returns, so a promise would be work left outside the transaction. A bug: refused,
 * and the transaction rolled back.
 */
function atOnce<T>(answer: T): T {
  if (isPromise(answer)) {
    answer.catch(() => {}); // refused below; its own failure would add nothing
    throw new TypeError('A job handler or settle listener answered a promise inside a SQLite transaction, which must be synchronous');
  }
  return answer;
}

/**
 * The job queue's mechanics, for every kind alike: enqueue, claim, lease, heartbeat, give-back,
 * failure with retry or for good, success, cancel. Each state change is one statement or one
 * synchronous transaction, and every change to a running job checks that the worker still
 * holds its lease. What a job does is its handler's business (see loop.ts).
 */
export class JobQueue {
  // Prepared once: the loop runs these on every poll. Times are bound as epoch milliseconds.
  private readonly claimDue;
  private readonly extendLease;
  private readonly failExpiredExhausted;
  private readonly returnExpiredToPending;
  private readonly giveBackJob;
  private readonly recordFailure;
  private readonly deferJob;

  constructor(
    private readonly db: Executor,
    scope: JobScope = {},
  ) {
    const inScope = kindInScope(jobs.kind, scope);
    const running = (owner: SQL | string) => and(eq(jobs.id, p('id')), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running'));
    // One statement claims: the subquery picks the due jobs, the update takes them and counts the attempt.
    this.claimDue = db
      .update(jobs)
      .set({
        status: 'running',
        attempts: sql`${jobs.attempts} + 1`,
        leaseOwner: sql`${p('owner')}`,
        leaseUntil: sql`${p('leaseUntil')}`,
        startedAt: sql`${p('now')}`,
        updatedAt: sql`${p('now')}`,
      })
      .where(
        inArray(
          jobs.id,
          db
            .select({ id: jobs.id })
            .from(jobs)
            .where(and(eq(jobs.status, 'pending'), lte(jobs.runAfter, sql`${p('now')}`), inScope))
            .orderBy(asc(jobs.runAfter), asc(jobs.createdAt), asc(jobs.position))
            .limit(p('limit')),
        ),
      )
      .returning()
      .prepare();
    this.extendLease = db
      .update(jobs)
      .set({ leaseUntil: sql`${p('leaseUntil')}` })
      .where(running(sql`${p('owner')}`))
      .prepare();
    const expired = and(eq(jobs.status, 'running'), lt(jobs.leaseUntil, sql`${p('cutoff')}`), inScope);
    this.failExpiredExhausted = db
      .update(jobs)
      .set({ status: 'failed', finishedAt: sql`${p('now')}`, updatedAt: sql`${p('now')}`, lastError: sql`${p('reason')}`, ...noLease })
      .where(and(expired, sql`${jobs.attempts} >= ${jobs.maxAttempts}`))
      .prepare();
    this.returnExpiredToPending = db
      .update(jobs)
      .set({ status: 'pending', runAfter: sql`${p('now')}`, updatedAt: sql`${p('now')}`, lastError: sql`${p('reason')}`, ...noLease })
      .where(expired)
      .prepare();
    this.giveBackJob = db
      .update(jobs)
      .set({ status: 'pending', attempts: sql`max(${jobs.attempts} - 1, 0)`, runAfter: sql`${p('now')}`, updatedAt: sql`${p('now')}`, ...noLease })
      .where(running(sql`${p('owner')}`))
      .prepare();
    this.recordFailure = db
      .update(jobs)
      .set({
        status: sql`${p('status')}`,
        runAfter: sql`${p('runAfter')}`,
        finishedAt: sql`${p('finishedAt')}`,
        lastError: sql`${p('lastError')}`,
        updatedAt: sql`${p('now')}`,
        ...noLease,
      })
      .where(running(sql`${p('owner')}`))
      .prepare();
    this.deferJob = db
      .update(jobs)
      .set({
        status: 'pending',
        attempts: sql`max(${jobs.attempts} - 1, 0)`,
        waits: sql`${jobs.waits} + 1`,
        runAfter: sql`${p('runAfter')}`,
        lastError: sql`${p('lastError')}`,
        updatedAt: sql`${p('now')}`,
        ...noLease,
      })
      .where(running(sql`${p('owner')}`))
      .prepare();
  }

  /** Adds jobs, all of them or none; inside a caller's transaction when given one (an outbox). */
  enqueue(siteId: string, items: readonly NewJob[], maxAttempts: number, now = new Date(), db: Executor = this.db): JobRow[] {
    const rows = newJobRows(siteId, items, maxAttempts, now);
    db.transaction((tx) => {
      for (let i = 0; i < rows.length; i += 50) tx.insert(jobs).values(rows.slice(i, i + 50)).run();
    });
    return rows;
  }

  /**
   * Adds one job unless one of its kind is already pending for the site (it will do the work
   * this one would): for kinds that catch up on a site's state, such as embeddings. Inside a
   * caller's transaction when given one. Answers the job added, or null.
   */
  enqueueUnlessPending(siteId: string, item: NewJob, maxAttempts: number, now = new Date(), db: Executor = this.db): JobRow | null {
    return db.transaction((tx) => {
      const pending = tx
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.siteId, siteId), eq(jobs.kind, item.kind), eq(jobs.status, 'pending')))
        .limit(1)
        .get();
      return pending ? null : this.enqueue(siteId, [item], maxAttempts, now, tx)[0]!;
    });
  }

  get(siteId: string, kind: string, jobId: string): JobRow {
    const row = this.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.siteId, siteId), eq(jobs.kind, kind)))
      .get();
    if (!row) throw notFound('task');
    return row;
  }

  list(siteId: string, kind: string, query: JobListQuery): Page<JobRow> {
    const filters: SQL[] = [eq(jobs.siteId, siteId), eq(jobs.kind, kind)];
    if (query.groupId) filters.push(eq(jobs.groupId, query.groupId));
    if (query.status) filters.push(eq(jobs.status, query.status));
    const where = and(...filters);
    return paginate(
      query.page,
      query.limit,
      () => this.db.select({ n: count() }).from(jobs).where(where).get()!.n,
      (offset, limit) => this.db.select().from(jobs).where(where).orderBy(desc(jobs.createdAt), jobs.position).limit(limit).offset(offset).all(),
    );
  }

  /**
   * Deletes jobs of a kind that finished (succeeded, failed or cancelled) before `before`:
   * for kinds whose own records say what happened (webhook deliveries), so the queue keeps
   * no unbounded history of them.
   */
  purgeFinished(kind: string, before: Date): number {
    return this.db
      .delete(jobs)
      .where(and(eq(jobs.kind, kind), inArray(jobs.status, ['succeeded', 'failed', 'cancelled']), lt(jobs.finishedAt, before)))
      .run().changes;
  }

  /** Cancels a pending job; anything else (running, finished) is a 409. */
  cancel(siteId: string, kind: string, jobId: string, now = new Date()): JobRow {
    return this.db.transaction((tx) => {
      const job = this.get(siteId, kind, jobId);
      if (job.status !== 'pending') throw conflict(`Only a pending task can be cancelled; this one is ${job.status}`);
      const changes = { status: 'cancelled' as const, finishedAt: now, updatedAt: now };
      tx.update(jobs).set(changes).where(eq(jobs.id, jobId)).run();
      return { ...job, ...changes };
    });
  }

  /** Claims up to `limit` due jobs atomically, counting the attempt and taking a lease; oldest due first. */
  claim(owner: string, limit: number, now: number, leaseMs: number): JobRow[] {
    if (limit <= 0) return [];
    const claimed = this.claimDue.all({ owner, leaseUntil: now + leaseMs, now, limit });
    return claimed.sort(byClaimOrder);
  }

  /** Extends the lease of jobs this worker is running. */
  heartbeat(owner: string, jobIds: readonly string[], now: number, leaseMs: number): void {
    this.db.transaction(() => {
      for (const id of jobIds) this.extendLease.run({ id, owner, leaseUntil: now + leaseMs });
    });
  }

  /**
   * Returns running jobs to pending: those whose lease expired (`expiredBefore`), or all of
   * them at start-up, when no other process of this database can be running them. A job that
   * has used all its attempts fails instead.
   */
  release(now: number, expiredBefore: number | null, reason: string): number {
    // Every running job holds a lease, so "all of them" is "leases ending before the end of time".
    const cutoff = expiredBefore ?? Number.MAX_SAFE_INTEGER;
    return this.db.transaction(
      () =>
        this.failExpiredExhausted.run({ now, cutoff, reason: noAttemptsLeft(reason) }).changes +
        this.returnExpiredToPending.run({ now, cutoff, reason }).changes,
    );
  }

  /** Gives a running job back untouched (shutdown): the attempt it used is not held against it. */
  giveBack(owner: string, jobId: string, now: number): void {
    this.giveBackJob.run({ id: jobId, owner, now });
  }

  /**
   * Commits a job's effect and its success in one transaction, only while this worker still
   * holds the job: a job's effect therefore happens at most once, even if it ran twice.
   * `commit` returns what the job's record keeps as its result, at once (never a promise).
   * False when the lease was lost.
   */
  succeed(owner: string, jobId: string, now: number, commit: (tx: Executor) => unknown): boolean {
    return this.db.transaction((tx) => {
      const held = tx
        .select({ id: jobs.id })
        .from(jobs)
        .where(and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running')))
        .get();
      if (!held) return false;
      const result = atOnce(commit(tx));
      tx.update(jobs)
        .set({ status: 'succeeded', result, finishedAt: new Date(now), updatedAt: new Date(now), lastError: null, ...noLease })
        .where(eq(jobs.id, jobId))
        .run();
      return true;
    }, WRITE_TRANSACTION);
  }

  /**
   * Puts a job off until `runAfter` because what it needs is unavailable (not its own fault):
   * the attempt is not held against it. False when the lease was lost.
   */
  defer(owner: string, jobId: string, message: string, runAfter: number, now: number): boolean {
    return this.deferJob.run({ id: jobId, owner, runAfter, lastError: message, now }).changes > 0;
  }

  /**
   * Records a failed attempt: retried at `retryAt`, or failed for good when permanent or out of
   * attempts (then `onFailed` runs in the same transaction, and answers at once).
   */
  fail(
    owner: string,
    job: JobRow,
    message: string,
    permanent: boolean,
    retryAt: number,
    now: number,
    onFailed?: (tx: Executor) => unknown,
  ): 'retry' | 'failed' | 'lease lost' {
    const final = isFinalFailure(job, permanent);
    return this.db.transaction((tx) => {
      const { changes } = this.recordFailure.run({
        id: job.id,
        owner,
        status: final ? 'failed' : 'pending',
        runAfter: final ? job.runAfter.getTime() : retryAt,
        finishedAt: final ? now : null,
        lastError: message,
        now,
      });
      if (changes === 0) return 'lease lost';
      if (final) atOnce(onFailed?.(tx));
      return final ? 'failed' : 'retry';
    });
  }
}
