import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, type SQL } from 'drizzle-orm';
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

const TASK_COLUMNS = `id, site_id as siteId, batch_id as batchId, position, status, topic, params, scheduled_for as scheduledFor,
  run_after as runAfter, attempts, max_attempts as maxAttempts, lease_owner as leaseOwner, lease_until as leaseUntil,
  started_at as startedAt, finished_at as finishedAt, last_error as lastError, post_id as postId,
  missing_file_ids as missingFileIds, created_at as createdAt, updated_at as updatedAt`;

type RawTask = Omit<TaskRow, 'params' | 'missingFileIds' | 'scheduledFor' | 'runAfter' | 'leaseUntil' | 'startedAt' | 'finishedAt' | 'createdAt' | 'updatedAt'> & {
  params: string;
  missingFileIds: string | null;
  scheduledFor: number;
  runAfter: number;
  leaseUntil: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  createdAt: number;
  updatedAt: number;
};

const toDate = (ms: number | null) => (ms === null ? null : new Date(ms));

function fromRaw(raw: RawTask): TaskRow {
  return {
    ...raw,
    params: JSON.parse(raw.params),
    missingFileIds: raw.missingFileIds === null ? null : JSON.parse(raw.missingFileIds),
    scheduledFor: new Date(raw.scheduledFor),
    runAfter: new Date(raw.runAfter),
    leaseUntil: toDate(raw.leaseUntil),
    startedAt: toDate(raw.startedAt),
    finishedAt: toDate(raw.finishedAt),
    createdAt: new Date(raw.createdAt),
    updatedAt: new Date(raw.updatedAt),
  };
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
  constructor(private readonly handle: DbHandle) {}

  /** Claims up to `limit` due tasks atomically, counting the attempt and taking a lease. */
  claim(owner: string, limit: number, now: number, leaseMs: number): TaskRow[] {
    if (limit <= 0) return [];
    const rows = this.handle.sqlite
      .prepare(
        `update tasks set status = 'running', attempts = attempts + 1, lease_owner = ?, lease_until = ?,
                started_at = ?, updated_at = ?
          where id in (select id from tasks where status = 'pending' and run_after <= ?
                        order by run_after, created_at, position limit ?)
         returning ${TASK_COLUMNS}`,
      )
      .all(owner, now + leaseMs, now, now, now, limit) as RawTask[];
    return rows.map(fromRaw).sort((a, b) => a.runAfter.getTime() - b.runAfter.getTime() || a.position - b.position);
  }

  /** Extends the lease of tasks this worker is running. */
  heartbeat(owner: string, taskIds: readonly string[], now: number, leaseMs: number): void {
    const stmt = this.handle.sqlite.prepare(`update tasks set lease_until = ? where id = ? and lease_owner = ? and status = 'running'`);
    this.handle.sqlite.transaction(() => {
      for (const id of taskIds) stmt.run(now + leaseMs, id, owner);
    })();
  }

  /**
   * Returns running tasks to pending: those whose lease expired (`expiredBefore`), or all of
   * them at start-up, when no other process of this database can be running them. A task
   * that has used all its attempts fails instead.
   */
  release(now: number, expiredBefore: number | null, reason: string): number {
    const leaseFilter = expiredBefore === null ? '' : 'and lease_until < ?';
    const args = expiredBefore === null ? [] : [expiredBefore];
    return this.handle.sqlite.transaction(() => {
      const failed = this.handle.sqlite
        .prepare(
          `update tasks set status = 'failed', finished_at = ?, updated_at = ?, lease_owner = null, lease_until = null,
                  last_error = ? where status = 'running' and attempts >= max_attempts ${leaseFilter}`,
        )
        .run(now, now, `${reason}; no attempts left`, ...args).changes;
      const retried = this.handle.sqlite
        .prepare(
          `update tasks set status = 'pending', run_after = ?, updated_at = ?, lease_owner = null, lease_until = null,
                  last_error = ? where status = 'running' ${leaseFilter}`,
        )
        .run(now, now, reason, ...args).changes;
      return failed + retried;
    })();
  }

  /** Gives a running task back untouched (shutdown): the attempt it used is not held against it. */
  giveBack(owner: string, taskId: string, now: number): void {
    this.handle.sqlite
      .prepare(
        `update tasks set status = 'pending', attempts = max(attempts - 1, 0), run_after = ?, updated_at = ?,
                lease_owner = null, lease_until = null where id = ? and lease_owner = ? and status = 'running'`,
      )
      .run(now, now, taskId, owner);
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
    const { changes } = this.handle.sqlite
      .prepare(
        `update tasks set status = ?, run_after = ?, finished_at = ?, last_error = ?, updated_at = ?,
                lease_owner = null, lease_until = null where id = ? and lease_owner = ? and status = 'running'`,
      )
      .run(final ? 'failed' : 'pending', final ? task.runAfter.getTime() : retryAt, final ? now : null, message, now, task.id, owner);
    if (changes === 0) return 'lease lost';
    return final ? 'failed' : 'retry';
  }
}
