import { EventEmitter } from 'node:events';
import type { Column, SQL } from 'drizzle-orm';
import { jobs } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { JobPort } from './port.js';
import { kindInScope, noLease, pendingOfGroup, type JobFilter } from './rules.js';
import { and, asc, count, desc, eq, inArray, lt, lte, sql } from '../db/orm.js';

/*
 * The job queue's statements as PostgreSQL spells them. Several instances may share the
 * database, so where SQLite relies on its single writer these rely on row locks: claims and
 * releases take rows with `FOR UPDATE SKIP LOCKED` (two workers never take the same job, and
 * neither waits on the other), and every change to a running job checks, under the row's lock,
 * that the worker still holds its lease.
 */

// Well under PostgreSQL's 65,535 parameters per statement (a job row has 20 columns).
const ROWS_PER_INSERT = 1000;

/** A value bound as `column` encodes it (a Date as an ISO instant, for timestamptz columns). */
const asColumn = (value: unknown, column: Column): SQL => sql`${sql.param(value, column)}`;

const heldBy = (owner: string, jobId: string) => and(eq(jobs.id, jobId), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running'));

function listFilter(filter: JobFilter): SQL | undefined {
  const filters: SQL[] = [eq(jobs.siteId, filter.siteId), eq(jobs.kind, filter.kind)];
  if (filter.groupId) filters.push(eq(jobs.groupId, filter.groupId));
  if (filter.status) filters.push(eq(jobs.status, filter.status));
  return and(...filters);
}

export const postgresJobs: AsyncAdapter<JobPort, PgExecutor> = {
  async insert(tx, rows) {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await tx.insert(jobs).values(rows.slice(i, i + ROWS_PER_INSERT));
  },
  async hasPending(tx, siteId, kind) {
    // Transactions that both look before either commits (two files of a site indexed at once, on
    // one instance or two) would each add one: this lock makes the second look wait.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${kind}:${siteId}`}, 0))`);
    const pending = await tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.siteId, siteId), eq(jobs.kind, kind), eq(jobs.status, 'pending')))
      .limit(1);
    return pending.length > 0;
  },
  async find(tx, siteId, kind, jobId, lock) {
    const query = tx
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.siteId, siteId), eq(jobs.kind, kind)));
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async page(tx, filter, offset, limit) {
    const where = listFilter(filter);
    // The count and the page at once: two round trips in the time of one.
    const [[counted], rows] = await Promise.all([
      tx.select({ n: count() }).from(jobs).where(where),
      tx.select().from(jobs).where(where).orderBy(desc(jobs.createdAt), jobs.position).limit(limit).offset(offset),
    ]);
    return { total: counted!.n, rows };
  },
  async purgeFinished(tx, kind, before) {
    const deleted = await tx
      .delete(jobs)
      .where(and(eq(jobs.kind, kind), inArray(jobs.status, ['succeeded', 'failed', 'cancelled']), lt(jobs.finishedAt, new Date(before))));
    return deleted.rowCount ?? 0;
  },
  async setCancelled(tx, jobId, at) {
    await tx
      .update(jobs)
      .set({ status: 'cancelled', finishedAt: new Date(at), updatedAt: new Date(at) })
      .where(eq(jobs.id, jobId));
  },
  async cancelPendingOfGroup(tx, siteId, kind, groupId, at) {
    const cancelled = await tx
      .update(jobs)
      .set({ status: 'cancelled', finishedAt: new Date(at), updatedAt: new Date(at) })
      .where(pendingOfGroup(jobs, siteId, kind, groupId));
    return cancelled.rowCount ?? 0;
  },
  claim(tx, scope, owner, limit, now, leaseUntil) {
    // One statement: the subquery locks the due jobs, skipping those another worker is claiming at this moment.
    const at = new Date(now);
    const due = tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'pending'), lte(jobs.runAfter, at), kindInScope(jobs.kind, scope)))
      .orderBy(asc(jobs.runAfter), asc(jobs.createdAt), asc(jobs.position))
      .limit(limit)
      .for('update', { skipLocked: true });
    return tx
      .update(jobs)
      .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseOwner: owner, leaseUntil: new Date(leaseUntil), startedAt: at, updatedAt: at })
      .where(inArray(jobs.id, due))
      .returning();
  },
  async extendLeases(tx, owner, jobIds, leaseUntil) {
    await tx
      .update(jobs)
      .set({ leaseUntil: new Date(leaseUntil) })
      .where(and(inArray(jobs.id, [...jobIds]), eq(jobs.leaseOwner, owner), eq(jobs.status, 'running')));
  },
  async release(tx, scope, now, cutoff, reason, exhaustedReason) {
    // One statement; a job another worker has locked at this moment (renewing its lease,
    // recording its outcome) is left for the next call rather than waited for.
    const at = new Date(now);
    const expired = tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.status, 'running'), lt(jobs.leaseUntil, cutoff === null ? sql`'infinity'::timestamptz` : new Date(cutoff)), kindInScope(jobs.kind, scope)))
      .for('update', { skipLocked: true });
    // What SQLite does in two statements (fail the exhausted, return the rest), row by row.
    const ifExhausted = (failed: SQL | Column, returned: SQL | Column) => sql`case when ${jobs.attempts} >= ${jobs.maxAttempts} then ${failed} else ${returned} end`;
    const released = await tx
      .update(jobs)
      .set({
        status: ifExhausted(sql`'failed'`, sql`'pending'`),
        finishedAt: ifExhausted(asColumn(at, jobs.finishedAt), jobs.finishedAt),
        runAfter: ifExhausted(jobs.runAfter, asColumn(at, jobs.runAfter)),
        lastError: ifExhausted(asColumn(exhaustedReason, jobs.lastError), asColumn(reason, jobs.lastError)),
        updatedAt: at,
        ...noLease,
      })
      .where(inArray(jobs.id, expired));
    return released.rowCount ?? 0;
  },
  async giveBack(tx, owner, jobId, now) {
    const at = new Date(now);
    await tx
      .update(jobs)
      .set({ status: 'pending', attempts: sql`greatest(${jobs.attempts} - 1, 0)`, runAfter: at, updatedAt: at, ...noLease })
      .where(heldBy(owner, jobId));
  },
  async holds(tx, owner, jobId) {
    const held = await tx.select({ id: jobs.id }).from(jobs).where(heldBy(owner, jobId)).for('update');
    return held.length > 0;
  },
  async markSucceeded(tx, jobId, result, now) {
    const at = new Date(now);
    await tx
      .update(jobs)
      .set({ status: 'succeeded', result, finishedAt: at, updatedAt: at, lastError: null, ...noLease })
      .where(eq(jobs.id, jobId));
  },
  async setPayload(tx, jobId, payload) {
    await tx.update(jobs).set({ payload }).where(eq(jobs.id, jobId));
  },
  async recordFailure(tx, owner, jobId, failure, now) {
    const recorded = await tx
      .update(jobs)
      .set({
        status: failure.status,
        runAfter: new Date(failure.runAfter),
        finishedAt: failure.finishedAt === null ? null : new Date(failure.finishedAt),
        lastError: failure.lastError,
        updatedAt: new Date(now),
        ...noLease,
      })
      .where(heldBy(owner, jobId));
    return (recorded.rowCount ?? 0) > 0;
  },
  async defer(tx, owner, jobId, message, runAfter, now) {
    const deferred = await tx
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
      .where(heldBy(owner, jobId));
    return (deferred.rowCount ?? 0) > 0;
  },
};

/**
 * After a PostgreSQL write transaction: it ends by giving its connection back to the pool, so
 * the callback runs after the next connection given back (usually that transaction's; if
 * another's came first, a loop woken early finds nothing yet and its next poll does the work).
 */
export function postgresAfterCommit(db: PgExecutor): (callback: () => void) => void {
  // Drizzle keeps the pool under its database object as `$client`.
  const pool = (db as { $client?: unknown }).$client;
  if (!(pool instanceof EventEmitter)) return (callback) => void setImmediate(callback);
  const waiting: (() => void)[] = [];
  pool.on('release', () => {
    if (waiting.length === 0) return;
    const due = waiting.splice(0);
    setImmediate(() => due.forEach((callback) => callback()));
  });
  return (callback) => void waiting.push(callback);
}
