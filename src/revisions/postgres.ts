import { postPendingChanges, postRevisions, users } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { RevisionPort } from './port.js';
import { and, desc, eq, inArray, lt, sql } from '../db/orm.js';

/** The revisions port as PostgreSQL answers it, with promises, inside the store's transaction. */
export const postgresRevisions: AsyncAdapter<RevisionPort, PgExecutor> = {
  insert: async (tx, row) => void (await tx.insert(postRevisions).values(row)),
  thin: async (tx, postId, keep) => {
    const [oldestKept] = await tx
      .select({ at: postRevisions.createdAt })
      .from(postRevisions)
      .where(eq(postRevisions.postId, postId))
      .orderBy(desc(postRevisions.createdAt))
      .limit(1)
      .offset(keep - 1);
    if (oldestKept) await tx.delete(postRevisions).where(and(eq(postRevisions.postId, postId), lt(postRevisions.createdAt, oldestKept.at)));
  },
  list: async (tx, siteId, postId, limit) =>
    (
      await tx
        .select({ revision: postRevisions, authorName: sql<string | null>`coalesce(${users.displayName}, ${users.email})` })
        .from(postRevisions)
        .leftJoin(users, eq(users.id, postRevisions.authorId))
        .where(and(eq(postRevisions.siteId, siteId), eq(postRevisions.postId, postId)))
        .orderBy(desc(postRevisions.createdAt), desc(postRevisions.id))
        .limit(limit)
    ).map(({ revision, authorName }) => ({ ...revision, authorName })),
  get: async (tx, siteId, postId, revisionId) =>
    (await tx.select().from(postRevisions).where(and(eq(postRevisions.siteId, siteId), eq(postRevisions.postId, postId), eq(postRevisions.id, revisionId))))[0],
  pending: async (tx, siteId, postId) =>
    (await tx.select().from(postPendingChanges).where(and(eq(postPendingChanges.siteId, siteId), eq(postPendingChanges.postId, postId))))[0],
  savePending: async (tx, row) => {
    const { postId: _postId, ...changes } = row;
    await tx.insert(postPendingChanges).values(row).onConflictDoUpdate({ target: postPendingChanges.postId, set: changes });
  },
  clearPending: async (tx, postId) => (await tx.delete(postPendingChanges).where(eq(postPendingChanges.postId, postId)).returning({ id: postPendingChanges.postId })).length > 0,
  displayNames: async (tx, userIds) =>
    userIds.length === 0 ? [] : tx.select({ id: users.id, displayName: users.displayName, email: users.email }).from(users).where(inArray(users.id, [...userIds])),
};
