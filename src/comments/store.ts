import { randomUUID } from 'node:crypto';
import type { CommentRow, Site } from '../db/schema.js';
import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { notFound, validationError } from '../errors.js';
import type { CommentStatus } from '../limits.js';
import type { CommentFilter, CommentWithPost } from './port.js';
import { foldEmail, type CheckedComment } from './rules.js';

export type { CommentWithPost };

/** What the spam guard (or a rule) decided about a reader's comment. */
export type Screening = { outcome: 'pass' } | { outcome: 'hold'; reason: string } | { outcome: 'spam'; reason: string };

/** The post a comment is for, as the store needs it. */
export interface CommentedPost {
  id: string;
  title: string;
  slug: string;
  commentsEnabled: boolean;
}

export type CommentEvent = 'comment.created' | 'comment.approved';
/** Steps run in the transaction that made the event (the webhook outbox). */
export type CommentListener = (type: CommentEvent, comment: CommentRow, post: { id: string; title: string; slug: string }) => Steps<void>;

/** Most approved comments a post page shows (oldest first). */
export const MAX_COMMENTS_ON_PAGE = 1000;

/**
 * Readers' comments and their moderation. A change that shows to readers (a comment
 * approved, an approved one hidden or deleted) moves the site's content version in its own
 * transaction, so cached pages, feeds and content-API answers follow on every instance.
 */
export class CommentStore {
  private readonly listeners: CommentListener[] = [];

  constructor(private readonly db: StepDatabase) {}

  /** Runs `listener` inside each transaction that creates or approves a comment. */
  onEvent(listener: CommentListener): void {
    this.listeners.push(listener);
  }

  private *emit(type: CommentEvent, comment: CommentRow, post: { id: string; title: string; slug: string }): Steps<void> {
    for (const listener of this.listeners) yield* listener(type, comment, post);
  }

  /**
   * A reader's comment on a post readers can see: approved at once only when the site is
   * `open`, the screening passed and its author's earlier comment on the site was approved;
   * else pending (held with the screening's reason) or spam.
   */
  submit(site: Site, post: CommentedPost, input: CheckedComment, screening: Screening, now = new Date()): Promise<CommentRow> {
    if (site.commentsMode === 'off' || !post.commentsEnabled) throw validationError('Comments are closed on this post', [{ path: '/body', message: 'comments are closed' }]);
    return this.db.write(() => this.submitSteps(site, post, input, screening, false, now));
  }

  /** A reply written as the site by staff: published at once. */
  staffReply(site: Site, post: CommentedPost, input: CheckedComment, now = new Date()): Promise<CommentRow> {
    return this.db.write(() => this.submitSteps(site, post, input, { outcome: 'pass' }, true, now));
  }

  private *submitSteps(site: Site, post: CommentedPost, input: CheckedComment, screening: Screening, byStaff: boolean, now: Date): Steps<CommentRow> {
    if (input.parentId !== null) {
      const parent = yield* ask('comments', 'find', site.id, input.parentId);
      // Replies are one level deep, to a comment readers can see on the same post.
      if (!parent || parent.postId !== post.id || parent.parentId !== null || parent.status !== 'approved') {
        throw validationError('parentId must be a published comment of this post that is not itself a reply', [{ path: '/body/parentId', message: 'is not a comment to reply to' }]);
      }
    }
    let status: CommentStatus = 'pending';
    let heldFor: string | null = null;
    if (byStaff) status = 'approved';
    else if (screening.outcome === 'spam') [status, heldFor] = ['spam', screening.reason];
    else if (screening.outcome === 'hold') heldFor = screening.reason;
    else if (site.commentsMode === 'open' && input.email !== null && (yield* ask('comments', 'knownAuthor', site.id, input.email))) status = 'approved';
    const row: CommentRow = {
      id: randomUUID(),
      siteId: site.id,
      postId: post.id,
      parentId: input.parentId,
      authorName: input.name,
      authorEmail: input.email,
      body: input.body,
      status,
      heldFor,
      byStaff,
      createdAt: now,
    };
    yield* ask('comments', 'insert', row);
    if (status === 'approved') yield* ask('sites', 'touchContent', site.id, now);
    // Spam is kept for staff to look at, and told to nobody.
    if (status !== 'spam') yield* this.emit('comment.created', row, post);
    return row;
  }

  /** A comment of the site, or 404. */
  get(siteId: string, id: string): Promise<CommentRow> {
    return this.db.read(function* () {
      const row = yield* ask('comments', 'find', siteId, id);
      if (!row) throw notFound('comment');
      return row;
    });
  }

  /** Approves a comment, or marks it pending or spam; answers it as it now is. */
  moderate(siteId: string, id: string, status: CommentStatus, post: (postId: string) => Steps<{ id: string; title: string; slug: string } | undefined>, now = new Date()): Promise<CommentRow> {
    return this.db.write(() => this.moderateSteps(siteId, id, status, post, now));
  }

  private *moderateSteps(siteId: string, id: string, status: CommentStatus, post: (postId: string) => Steps<{ id: string; title: string; slug: string } | undefined>, now: Date): Steps<CommentRow> {
    const row = yield* ask('comments', 'find', siteId, id);
    if (!row) throw notFound('comment');
    if (row.status === status) return row;
    yield* ask('comments', 'setStatus', id, status, row.heldFor);
    const after = { ...row, status };
    if (row.status === 'approved' || status === 'approved') yield* ask('sites', 'touchContent', siteId, now);
    if (status === 'approved') {
      const target = yield* post(row.postId);
      if (target) yield* this.emit('comment.approved', after, target);
    }
    return after;
  }

  /** Deletes a comment and its replies. */
  delete(siteId: string, id: string, now = new Date()): Promise<void> {
    return this.db.write(function* () {
      const row = yield* ask('comments', 'find', siteId, id);
      if (!row) throw notFound('comment');
      const gone = yield* ask('comments', 'remove', id);
      if (gone.includes('approved')) yield* ask('sites', 'touchContent', siteId, now);
    });
  }

  /** A post's approved comments, oldest first, and how many there are. */
  approved(postId: string, page: number, limit: number): Promise<{ rows: CommentRow[]; total: number }> {
    return this.db.read(() => ask('comments', 'approved', postId, limit, (page - 1) * limit));
  }

  list(siteId: string, filter: CommentFilter, page: number, limit: number): Promise<{ rows: CommentWithPost[]; total: number }> {
    return this.db.read(() => ask('comments', 'list', siteId, filter, limit, (page - 1) * limit));
  }

  count(siteId: string, status: CommentStatus, postId?: string): Promise<number> {
    return this.db.read(() => ask('comments', 'count', siteId, status, postId));
  }

  /** Whether a person takes mail about pending comments on a site: their choice, else on for owners only. */
  mailChoice(userId: string, siteId: string, role: string): Promise<boolean> {
    return this.db.read(function* () {
      return (yield* ask('comments', 'mailChoice', userId, siteId)) ?? role === 'owner';
    });
  }

  setMailChoice(userId: string, siteId: string, enabled: boolean): Promise<void> {
    return this.db.write(() => ask('comments', 'setMailChoice', userId, siteId, enabled));
  }

  /** Forgets an email on every comment of the site; answers how many comments held it. */
  eraseEmail(siteId: string, email: string): Promise<number> {
    return this.db.write(() => ask('comments', 'eraseEmail', siteId, foldEmail(email)));
  }
}
