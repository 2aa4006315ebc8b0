import type { SQL } from 'drizzle-orm';
import { prepared, type Executor } from '../db/sqlite.js';
import { jobs } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { JobPort } from './port.js';
import { kindInScope, noLease, pendingOfGroup, type JobFilter, type JobScope } from './rules.js';
import { and, asc, count, desc, eq, inArray, lt, lte, sql } from '../db/orm.js';

/*
 * The job queue's statements as SQLite spells them. One writer at a time (the DATA_DIR lock
 * keeps one server to the file, BEGIN IMMEDIATE one transaction), so no row locks: a claim is
 * one `UPDATE ... RETURNING` over a subquery of due jobs. The statements the loop runs on every
 * poll are prepared once per connection; times are bound as epoch milliseconds.
 */

const p = (name: string) => sql`${sql.placeholder(name)}`;
// Every insert stays well under SQLite's bound-parameter limit (a job row has 20 columns).
const ROWS_PER_INSERT = 50;

const heldBy = and(eq(jobs.id, sql.placeholder('id')), eq(jobs.leaseOwner, sql.placeholder('owner')), eq(jobs.status, 'running'));

const extendLeaseStatement = (db: Executor) => db.update(jobs).set({ leaseUntil: p('leaseUntil') }).where(heldBy).prepare();
const holdsStatement = (db: Executor) => db.select({ id: jobs.id }).from(jobs).where(heldBy).prepare();
const giveBackStatement = (db: Executor) =>
  db
    .update(jobs)
    .set({ status: 'pending', attempts: sql`max(${jobs.attempts} - 1, 0)`, runAfter: p('now'), updatedAt: p('now'), ...noLease })
    .where(heldBy)
    .prepare();
const recordFailureStatement = (db: Executor) =>
  db
    .update(jobs)
    .set({ status: p('status'), runAfter: p('runAfter'), finishedAt: p('finishedAt'), lastError: p('lastError'), updatedAt: p('now'), ...noLease })
    .where(heldBy)
    .prepare();
const deferStatement = (db: Executor) =>
  db
    .update(jobs)
    .set({
      status: 'pending',
      attempts: sql`max(${jobs.attempts} - 1, 0)`,
      waits: sql`${jobs.waits} + 1`,
      runAfter: p('runAfter'),
      lastError: p('lastError'),
      updatedAt: p('now'),
      ...noLease,
    })
    .where(heldBy)
    .prepare();

/** The statements that depend on a loop's scope (which kinds it claims and releases). */
function scopedStatements(db: Executor, scope: JobScope) {
  const inScope = kindInScope(jobs.kind, scope);
  const due = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.status, 'pending'), lte(jobs.runAfter, p('now')), inScope))
    .orderBy(asc(jobs.runAfter), asc(jobs.createdAt), asc(jobs.position))
    .limit(sql.placeholder('limit'));
  const expired = and(eq(jobs.status, 'running'), lt(jobs.leaseUntil, p('cutoff')), inScope);
  return {
    // One statement claims: the subquery picks the due jobs, the update takes them and counts the attempt.
    claim: db
      .update(jobs)
      .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, leaseOwner: p('owner'), leaseUntil: p('leaseUntil'), startedAt: p('now'), updatedAt: p('now') })
      .where(inArray(jobs.id, due))
      .returning()
      .prepare(),
    failExhausted: db
      .update(jobs)
      .set({ status: 'failed', finishedAt: p('now'), updatedAt: p('now'), lastError: p('reason'), ...noLease })
      .where(and(expired, sql`${jobs.attempts} >= ${jobs.maxAttempts}`))
      .prepare(),
    returnToPending: db
      .update(jobs)
      .set({ status: 'pending', runAfter: p('now'), updatedAt: p('now'), lastError: p('reason'), ...noLease })
      .where(expired)
      .prepare(),
  };
}

const scopedCache = () => new Map<string, ReturnType<typeof scopedStatements>>();

function scoped(db: Executor, scope: JobScope) {
  const cache = prepared(db, scopedCache);
  const key = JSON.stringify([scope.only ?? null, scope.except ?? null]);
  let statements = cache.get(key);
  if (!statements) cache.set(key, (statements = scopedStatements(db, scope)));
  return statements;
}

function listFilter(filter: JobFilter): SQL | undefined {
  const filters: SQL[] = [eq(jobs.siteId, filter.siteId), eq(jobs.kind, filter.kind)];
  if (filter.groupId) filters.push(eq(jobs.groupId, filter.groupId));
  if (filter.status) filters.push(eq(jobs.status, filter.status));
  return and(...filters);
}

export const sqliteJobs: SyncAdapter<JobPort, Executor> = {
  insert(tx, rows) {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) tx.insert(jobs).values(rows.slice(i, i + ROWS_PER_INSERT)).run();
  },
  // One writer at a time: nobody can add the job between this look and the caller's insert.
  hasPending: (tx, siteId, kind) =>
    tx
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(eq(jobs.siteId, siteId), eq(jobs.kind, kind), eq(jobs.status, 'pending')))
      .limit(1)
      .get() !== undefined,
  find: (tx, siteId, kind, jobId) =>
    tx
      .select()
      .from(jobs)
      .where(and(eq(jobs.id, jobId), eq(jobs.siteId, siteId), eq(jobs.kind, kind)))
      .get(),
  page(tx, filter, offset, limit) {
    const where = listFilter(filter);
    const total = tx.select({ n: count() }).from(jobs).where(where).get()!.n;
    const rows = tx.select().from(jobs).where(where).orderBy(desc(jobs.createdAt), jobs.position).limit(limit).offset(offset).all();
    return { total, rows };
  },
  purgeFinished: (tx, kind, before) =>
    tx
      .delete(jobs)
      .where(and(eq(jobs.kind, kind), inArray(jobs.status, ['succeeded', 'failed', 'cancelled']), lt(jobs.finishedAt, new Date(before))))
      .run().changes,
  setCancelled(tx, jobId, at) {
    tx.update(jobs)
      .set({ status: 'cancelled', finishedAt: new Date(at), updatedAt: new Date(at) })
      .where(eq(jobs.id, jobId))
      .run();
  },
  cancelPendingOfGroup: (tx, siteId, kind, groupId, at) =>
    tx
      .update(jobs)
      .set({ status: 'cancelled', finishedAt: new Date(at), updatedAt: new Date(at) })
      .where(pendingOfGroup(jobs, siteId, kind, groupId))
      .run().changes,
  claim: (tx, scope, owner, limit, now, leaseUntil) => scoped(tx, scope).claim.all({ owner, leaseUntil, now, limit }),
  extendLeases(tx, owner, jobIds, leaseUntil) {
    const extend = prepared(tx, extendLeaseStatement);
    for (const id of jobIds) extend.run({ id, owner, leaseUntil });
  },
  release(tx, scope, now, cutoff, reason, exhaustedReason) {
    // Every running job holds a lease, so "all of them" is "leases ending before the end of time".
    const before = cutoff ?? Number.MAX_SAFE_INTEGER;
    const { failExhausted, returnToPending } = scoped(tx, scope);
    return failExhausted.run({ now, cutoff: before, reason: exhaustedReason }).changes + returnToPending.run({ now, cutoff: before, reason }).changes;
  },
  giveBack(tx, owner, jobId, now) {
    prepared(tx, giveBackStatement).run({ id: jobId, owner, now });
  },
  holds: (tx, owner, jobId) => prepared(tx, holdsStatement).get({ id: jobId, owner }) !== undefined,
  markSucceeded(tx, jobId, result, now) {
    tx.update(jobs)
      .set({ status: 'succeeded', result, finishedAt: new Date(now), updatedAt: new Date(now), lastError: null, ...noLease })
      .where(eq(jobs.id, jobId))
      .run();
  },
  setPayload(tx, jobId, payload) {
    tx.update(jobs).set({ payload }).where(eq(jobs.id, jobId)).run();
  },
  recordFailure: (tx, owner, jobId, failure, now) => prepared(tx, recordFailureStatement).run({ id: jobId, owner, ...failure, now }).changes > 0,
  defer: (tx, owner, jobId, message, runAfter, now) => prepared(tx, deferStatement).run({ id: jobId, owner, runAfter, lastError: message, now }).changes > 0,
};

/** After a SQLite write transaction: its commit happened before the next turn of the event loop. */
export const sqliteAfterCommit = (callback: () => void): void => void setImmediate(callback);
