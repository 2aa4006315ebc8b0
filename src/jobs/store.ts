import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { and, count, desc, eq, inArray, type SQL } from 'drizzle-orm';
import type { Db, DbHandle } from '../db/client.js';
import { tasks, type PostRow, type TaskRow } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import { paginate, type Page } from '../pagination.js';
import type { TaskParams } from './batch.js';

export type TaskStatus = TaskRow['status'];

export interface NewTask {
  topic: string;
  params: TaskParams;
  scheduledFor: Date;
}

/** Writes a batch's tasks in one transaction: all of them or none. */
export function createTasks(db: Db, siteId: string, batchId: string, items: readonly NewTask[], maxAttempts: number, now = new Date()): TaskRow[] {
  const rows: TaskRow[] = items.map((item, position) => ({
    id: randomUUID(),
    siteId,
    batchId,
    position,
    status: 'pending',
    topic: item.topic,
    params: item.params,
    scheduledFor: item.scheduledFor,
    runAfter: item.scheduledFor,
    attempts: 0,
    maxAttempts,
    leaseOwner: null,
    leaseUntil: null,
    startedAt: null,
    finishedAt: null,
    lastError: null,
    postId: null,
    missingFileIds: null,
    createdAt: now,
    updatedAt: now,
  }));
  db.transaction((tx) => {
    for (let i = 0; i < rows.length; i += 50) tx.insert(tasks).values(rows.slice(i, i + 50)).run();
  });
  return rows;
}

export function getTask(db: Db, siteId: string, taskId: string): TaskRow {
  const row = db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.siteId, siteId)))
    .get();
  if (!row) throw notFound('task');
  return row;
}

export function listTasks(db: Db, siteId: string, query: { page: number; limit: number; batchId?: string; status?: TaskStatus }): Page<TaskRow> {
  const filters: SQL[] = [eq(tasks.siteId, siteId)];
  if (query.batchId) filters.push(eq(tasks.batchId, query.batchId));
  if (query.status) filters.push(eq(tasks.status, query.status));
  const where = and(...filters);
  return paginate(
    query.page,
    query.limit,
    () => db.select({ n: count() }).from(tasks).where(where).get()!.n,
    (offset, limit) => db.select().from(tasks).where(where).orderBy(desc(tasks.createdAt), tasks.position).limit(limit).offset(offset).all(),
  );
}

/** Cancels a pending task; anything else (running, finished) is a 409. */
export function cancelTask(db: Db, siteId: string, taskId: string, now = new Date()): TaskRow {
  return db.transaction((tx) => {
    const task = getTask(tx as unknown as Db, siteId, taskId);
    if (task.status !== 'pending') throw conflict(`Only a pending task can be cancelled; this one is ${task.status}`);
    const changes = { status: 'cancelled' as const, finishedAt: now, updatedAt: now };
    tx.update(tasks).set(changes).where(eq(tasks.id, taskId)).run();
    return { ...task, ...changes };
  });
}

export interface SuccessRecord {
  insertPost: (tx: Db) => PostRow;
  missingFileIds: string[];
}

/**
 * The task store of the job loop: every state change is one SQL statement or one synchronous
 * transaction, and every change to a running task checks that this worker still holds it.
 */
export class TaskStore {
  // Prepared once: the loop runs these on every poll.
  private readonly claimDue: Database.Statement<[string, number, number, number, number, number], string>;
  private readonly extendLease: Database.Statement<[number, string, string]>;
  private readonly failExpiredExhausted: Database.Statement;
  private readonly returnExpiredToPending: Database.Statement;
  private readonly giveBackTask: Database.Statement<[number, number, string, string]>;
  private readonly recordFailure: Database.Statement;

  constructor(private readonly handle: DbHandle) {
    const sqlite = handle.sqlite;
    this.claimDue = sqlite
      .prepare<[string, number, number, number, number, number], string>(
        `update tasks set status = 'running', attempts = attempts + 1, lease_owner = ?, lease_until = ?,
                started_at = ?, updated_at = ?
          where id in (select id from tasks where status = 'pending' and run_after <= ?
                        order by run_after, created_at, position limit ?)
         returning id`,
      )
      .pluck();
    this.extendLease = sqlite.prepare(`update tasks set lease_until = ? where id = ? and lease_owner = ? and status = 'running'`);
    this.failExpiredExhausted = sqlite.prepare(
      `update tasks set status = 'failed', finished_at = ?, updated_at = ?, lease_owner = null, lease_until = null,
              last_error = ? where status = 'running' and lease_until < ? and attempts >= max_attempts`,
    );
    this.returnExpiredToPending = sqlite.prepare(
      `update tasks set status = 'pending', run_after = ?, updated_at = ?, lease_owner = null, lease_until = null,
              last_error = ? where status = 'running' and lease_until < ?`,
    );
    this.giveBackTask = sqlite.prepare(
      `update tasks set status = 'pending', attempts = max(attempts - 1, 0), run_after = ?, updated_at = ?,
              lease_owner = null, lease_until = null where id = ? and lease_owner = ? and status = 'running'`,
    );
    this.recordFailure = sqlite.prepare(
      `update tasks set status = ?, run_after = ?, finished_at = ?, last_error = ?, updated_at = ?,
              lease_owner = null, lease_until = null where id = ? and lease_owner = ? and status = 'running'`,
    );
  }

  /** Claims up to `limit` due tasks atomically, counting the attempt and taking a lease. */
  claim(owner: string, limit: number, now: number, leaseMs: number): TaskRow[] {
    if (limit <= 0) return [];
    const ids = this.claimDue.all(owner, now + leaseMs, now, now, now, limit);
    if (ids.length === 0) return [];
    return this.handle.db
      .select()
      .from(tasks)
      .where(inArray(tasks.id, ids))
      .orderBy(tasks.runAfter, tasks.createdAt, tasks.position)
      .all();
  }

  /** Extends the lease of tasks this worker is running. */
  heartbeat(owner: string, taskIds: readonly string[], now: number, leaseMs: number): void {
    this.handle.sqlite.transaction(() => {
      for (const id of taskIds) this.extendLease.run(now + leaseMs, id, owner);
    })();
  }

  /**
   * Returns running tasks to pending: those whose lease expired (`expiredBefore`), or all of
   * them at start-up, when no other process of this database can be running them. A task
   * that has used all its attempts fails instead.
   */
  release(now: number, expiredBefore: number | null, reason: string): number {
    // Every running task holds a lease, so "all of them" is "leases ending before the end of time".
    const cutoff = expiredBefore ?? Number.MAX_SAFE_INTEGER;
    return this.handle.sqlite.transaction(
      () =>
        this.failExpiredExhausted.run(now, now, `${reason}; no attempts left`, cutoff).changes +
        this.returnExpiredToPending.run(now, now, reason, cutoff).changes,
    )();
  }

  /** Gives a running task back untouched (shutdown): the attempt it used is not held against it. */
  giveBack(owner: string, taskId: string, now: number): void {
    this.giveBackTask.run(now, now, taskId, owner);
  }

  /**
   * Inserts the task's post and marks the task succeeded in one transaction, only while this
   * worker still holds the task: a task therefore creates at most one post, even if it ran twice.
   */
  succeed(owner: string, taskId: string, record: SuccessRecord, now: number): PostRow | null {
    return this.handle.db.transaction((tx) => {
      const held = tx
        .select({ id: tasks.id })
        .from(tasks)
        .where(and(eq(tasks.id, taskId), eq(tasks.leaseOwner, owner), eq(tasks.status, 'running')))
        .get();
      if (!held) return null;
      const post = record.insertPost(tx as unknown as Db);
      tx.update(tasks)
        .set({
          status: 'succeeded',
          postId: post.id,
          finishedAt: new Date(now),
          updatedAt: new Date(now),
          leaseOwner: null,
          leaseUntil: null,
          lastError: null,
          missingFileIds: record.missingFileIds.length ? record.missingFileIds : null,
        })
        .where(eq(tasks.id, taskId))
        .run();
      return post;
    });
  }

  /** Records a failed attempt: retried at `retryAt`, or failed for good when permanent or out of attempts. */
  fail(owner: string, task: TaskRow, message: string, permanent: boolean, retryAt: number, now: number): 'retry' | 'failed' | 'lease lost' {
    const final = permanent || task.attempts >= task.maxAttempts;
    const { changes } = this.recordFailure.run(final ? 'failed' : 'pending', final ? task.runAfter.getTime() : retryAt, final ? now : null, message, now, task.id, owner);
    if (changes === 0) return 'lease lost';
    return final ? 'failed' : 'retry';
  }
}
