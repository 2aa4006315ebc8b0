import type { SQL } from 'drizzle-orm';
import type { Executor } from '../db/sqlite.js';
import { commentMailChoices, commentNotices, comments, memberships, posts, users } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { CommentStatus } from '../limits.js';
import type { CommentFilter, CommentsPort } from './port.js';
import { and, asc, count, desc, eq, isNull, lt, or, sql } from '../db/orm.js';

const where = (siteId: string, filter: CommentFilter): SQL =>
  and(eq(comments.siteId, siteId), filter.status ? eq(comments.status, filter.status) : undefined, filter.postId ? eq(comments.postId, filter.postId) : undefined)!;

/** Owners unless they said no, editors if they said yes. */
const RECIPIENTS = (siteId: string) =>
  and(eq(memberships.siteId, siteId), or(and(eq(memberships.role, 'owner'), or(isNull(commentMailChoices.enabled), eq(commentMailChoices.enabled, true))), and(eq(memberships.role, 'editor'), eq(commentMailChoices.enabled, true))));

/** The comments port on SQLite. */
export const sqliteComments: SyncAdapter<CommentsPort, Executor> = {
  insert: (tx, row) => void tx.insert(comments).values(row).run(),
  find: (tx, siteId, id) => tx.select().from(comments).where(and(eq(comments.siteId, siteId), eq(comments.id, id))).get(),
  setStatus: (tx, id, status, heldFor) => void tx.update(comments).set({ status, heldFor }).where(eq(comments.id, id)).run(),
  remove: (tx, id) =>
    tx
      .delete(comments)
      .where(or(eq(comments.id, id), eq(comments.parentId, id)))
      .returning({ status: comments.status })
      .all()
      .map((row) => row.status as CommentStatus),
  removeForPost: (tx, postId) => void tx.delete(comments).where(eq(comments.postId, postId)).run(),
  approved: (tx, postId, limit, offset) => {
    const filter = and(eq(comments.postId, postId), eq(comments.status, 'approved'));
    const rows = tx.select().from(comments).where(filter).orderBy(asc(comments.createdAt), asc(comments.id)).limit(limit).offset(offset).all();
    const total = tx.select({ n: count() }).from(comments).where(filter).get()!.n;
    return { rows, total };
  },
  list: (tx, siteId, filter, limit, offset) => {
    const rows = tx
      .select({ comment: comments, postTitle: posts.title, postSlug: posts.slug })
      .from(comments)
      .innerJoin(posts, eq(posts.id, comments.postId))
      .where(where(siteId, filter))
      .orderBy(desc(comments.createdAt), desc(comments.id))
      .limit(limit)
      .offset(offset)
      .all();
    const total = tx.select({ n: count() }).from(comments).where(where(siteId, filter)).get()!.n;
    return { rows: rows.map(({ comment, postTitle, postSlug }) => ({ ...comment, postTitle, postSlug })), total };
  },
  count: (tx, siteId, status, postId) => tx.select({ n: count() }).from(comments).where(where(siteId, { status, postId })).get()!.n,
  knownAuthor: (tx, siteId, email) =>
    tx
      .select({ one: sql`1` })
      .from(comments)
      .where(and(eq(comments.siteId, siteId), eq(comments.authorEmail, email), eq(comments.status, 'approved')))
      .limit(1)
      .get() !== undefined,
  eraseEmail: (tx, siteId, email) => tx.update(comments).set({ authorEmail: null }).where(and(eq(comments.siteId, siteId), eq(comments.authorEmail, email))).run().changes,
  claimNotice: (tx, siteId, postId, now, since) =>
    tx
      .insert(commentNotices)
      .values({ postId, siteId, sentAt: now })
      .onConflictDoUpdate({ target: commentNotices.postId, set: { sentAt: now }, setWhere: lt(commentNotices.sentAt, since) })
      .run().changes > 0,
  noticeRecipients: (tx, siteId) =>
    tx
      .select({ email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .leftJoin(commentMailChoices, and(eq(commentMailChoices.userId, memberships.userId), eq(commentMailChoices.siteId, memberships.siteId)))
      .where(RECIPIENTS(siteId))
      .orderBy(asc(users.email))
      .all()
      .map((row) => row.email),
  mailChoice: (tx, userId, siteId) =>
    tx.select({ enabled: commentMailChoices.enabled }).from(commentMailChoices).where(and(eq(commentMailChoices.userId, userId), eq(commentMailChoices.siteId, siteId))).get()?.enabled,
  setMailChoice: (tx, userId, siteId, enabled) =>
    void tx.insert(commentMailChoices).values({ userId, siteId, enabled }).onConflictDoUpdate({ target: [commentMailChoices.userId, commentMailChoices.siteId], set: { enabled } }).run(),
};
