import type { Executor } from '../db/sqlite.js';
import { postPendingChanges, postRevisions, users } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { RevisionPort } from './port.js';
import { and, desc, eq, inArray, lt, sql } from '../db/orm.js';

/** The revisions port as SQLite answers it, at once, inside the store's transaction. */
export const sqliteRevisions: SyncAdapter<RevisionPort, Executor> = {
  insert: (tx, row) => void tx.insert(postRevisions).values(row).run(),
  thin: (tx, postId, keep) => {
    const oldestKept = tx
      .select({ at: postRevisions.createdAt })
      .from(postRevisions)
      .where(eq(postRevisions.postId, postId))
      .orderBy(desc(postRevisions.createdAt))
      .limit(1)
      .offset(keep - 1)
      .get();
    if (oldestKept) tx.delete(postRevisions).where(and(eq(postRevisions.postId, postId), lt(postRevisions.createdAt, oldestKept.at))).run();
  },
  list: (tx, siteId, postId, limit) =>
    tx
      .select({ revision: postRevisions, authorName: sql<string | null>`coalesce(${users.displayName}, ${users.email})` })
      .from(postRevisions)
      .leftJoin(users, eq(users.id, postRevisions.authorId))
      .where(and(eq(postRevisions.siteId, siteId), eq(postRevisions.postId, postId)))
      .orderBy(desc(postRevisions.createdAt), desc(postRevisions.id))
      .limit(limit)
      .all()
      .map(({ revision, authorName }) => ({ ...revision, authorName })),
  get: (tx, siteId, postId, revisionId) =>
    tx
      .select()
      .from(postRevisions)
      .where(and(eq(postRevisions.siteId, siteId), eq(postRevisions.postId, postId), eq(postRevisions.id, revisionId)))
      .get(),
  pending: (tx, siteId, postId) => tx.select().from(postPendingChanges).where(and(eq(postPendingChanges.siteId, siteId), eq(postPendingChanges.postId, postId))).get(),
  savePending: (tx, row) => {
    const { postId: _postId, ...changes } = row;
    tx.insert(postPendingChanges).values(row).onConflictDoUpdate({ target: postPendingChanges.postId, set: changes }).run();
  },
  clearPending: (tx, postId) => tx.delete(postPendingChanges).where(eq(postPendingChanges.postId, postId)).run().changes > 0,
  displayNames: (tx, userIds) =>
    userIds.length === 0 ? [] : tx.select({ id: users.id, displayName: users.displayName, email: users.email }).from(users).where(inArray(users.id, [...userIds])).all(),
};
