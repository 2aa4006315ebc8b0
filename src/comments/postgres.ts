import type { SQL } from 'drizzle-orm';
import { commentMailChoices, commentNotices, comments, memberships, posts, users } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { CommentStatus } from '../limits.js';
import type { CommentFilter, CommentsPort } from './port.js';
import { and, asc, count, desc, eq, isNull, lt, or, sql } from '../db/orm.js';

const where = (siteId: string, filter: CommentFilter): SQL =>
  and(eq(comments.siteId, siteId), filter.status ? eq(comments.status, filter.status) : undefined, filter.postId ? eq(comments.postId, filter.postId) : undefined)!;

/** Owners unless they said no, editors if they said yes. */
const RECIPIENTS = (siteId: string) =>
  and(eq(memberships.siteId, siteId), or(and(eq(memberships.role, 'owner'), or(isNull(commentMailChoices.enabled), eq(commentMailChoices.enabled, true))), and(eq(memberships.role, 'editor'), eq(commentMailChoices.enabled, true))));

/** The comments port on PostgreSQL. */
export const postgresComments: AsyncAdapter<CommentsPort, PgExecutor> = {
  insert: async (tx, row) => void (await tx.insert(comments).values(row)),
  find: async (tx, siteId, id) => (await tx.select().from(comments).where(and(eq(comments.siteId, siteId), eq(comments.id, id))))[0],
  setStatus: async (tx, id, status, heldFor) => void (await tx.update(comments).set({ status, heldFor }).where(eq(comments.id, id))),
  remove: async (tx, id) =>
    (await tx
      .delete(comments)
      .where(or(eq(comments.id, id), eq(comments.parentId, id)))
      .returning({ status: comments.status })).map((row) => row.status as CommentStatus),
  removeForPost: async (tx, postId) => void (await tx.delete(comments).where(eq(comments.postId, postId))),
  approved: async (tx, postId, limit, offset) => {
    const filter = and(eq(comments.postId, postId), eq(comments.status, 'approved'));
    const rows = await tx.select().from(comments).where(filter).orderBy(asc(comments.createdAt), asc(comments.id)).limit(limit).offset(offset);
    const [{ n }] = (await tx.select({ n: count() }).from(comments).where(filter)) as [{ n: number }];
    return { rows, total: Number(n) };
  },
  list: async (tx, siteId, filter, limit, offset) => {
    const rows = await tx
      .select({ comment: comments, postTitle: posts.title, postSlug: posts.slug })
      .from(comments)
      .innerJoin(posts, eq(posts.id, comments.postId))
      .where(where(siteId, filter))
      .orderBy(desc(comments.createdAt), desc(comments.id))
      .limit(limit)
      .offset(offset);
    const [{ n }] = (await tx.select({ n: count() }).from(comments).where(where(siteId, filter))) as [{ n: number }];
    return { rows: rows.map(({ comment, postTitle, postSlug }) => ({ ...comment, postTitle, postSlug })), total: Number(n) };
  },
  count: async (tx, siteId, status, postId) => Number((await tx.select({ n: count() }).from(comments).where(where(siteId, { status, postId })))[0]!.n),
  knownAuthor: async (tx, siteId, email) =>
    (await tx
      .select({ one: sql`1` })
      .from(comments)
      .where(and(eq(comments.siteId, siteId), eq(comments.authorEmail, email), eq(comments.status, 'approved')))
      .limit(1)).length > 0,
  eraseEmail: async (tx, siteId, email) => (await tx.update(comments).set({ authorEmail: null }).where(and(eq(comments.siteId, siteId), eq(comments.authorEmail, email)))).rowCount ?? 0,
  claimNotice: async (tx, siteId, postId, now, since) =>
    ((
      await tx
        .insert(commentNotices)
        .values({ postId, siteId, sentAt: now })
        .onConflictDoUpdate({ target: commentNotices.postId, set: { sentAt: now }, setWhere: lt(commentNotices.sentAt, since) })
    ).rowCount ?? 0) > 0,
  noticeRecipients: async (tx, siteId) =>
    (
      await tx
        .select({ email: users.email })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .leftJoin(commentMailChoices, and(eq(commentMailChoices.userId, memberships.userId), eq(commentMailChoices.siteId, memberships.siteId)))
        .where(RECIPIENTS(siteId))
        .orderBy(asc(users.email))
    ).map((row) => row.email),
  mailChoice: async (tx, userId, siteId) =>
    (await tx.select({ enabled: commentMailChoices.enabled }).from(commentMailChoices).where(and(eq(commentMailChoices.userId, userId), eq(commentMailChoices.siteId, siteId))))[0]?.enabled,
  setMailChoice: async (tx, userId, siteId, enabled) =>
    void (await tx.insert(commentMailChoices).values({ userId, siteId, enabled }).onConflictDoUpdate({ target: [commentMailChoices.userId, commentMailChoices.siteId], set: { enabled } })),
};
