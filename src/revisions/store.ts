import { randomUUID } from 'node:crypto';
import type { PendingChangeRow, PostRevisionRow, PostRow } from '../db/schema.js';
import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { conflict, ifMatchHolds, notFound, preconditionFailed } from '../errors.js';
import { checkStorableText, cleanTitle, found, nextUpdatedAt, optional, postEtag, type PostChange, type TextLimits } from '../posts/rules.js';
import type { PostStore } from '../posts/store.js';
import type { RevisionListed } from './port.js';

/** Revisions kept per post: older ones are thinned as new ones come. */
export const REVISIONS_KEPT = 50;

/** The text a revision keeps, and a pending change holds. */
export interface PostText {
  title: string;
  description: string | null;
  content: string | null;
}

export type PendingFields = Partial<{ title: string; description: string | null; content: string | null }>;

/** A pending change's ETag: the post's version and the change's own, so either moving is seen. */
export const pendingEtag = (post: PostRow, pending: PendingChangeRow | undefined) =>
  pending ? `"${post.updatedAt.getTime().toString(36)}.${pending.updatedAt.getTime().toString(36)}"` : postEtag(post.updatedAt);

const textOf = (row: PostText): PostText => ({ title: row.title, description: row.description, content: row.content });
const sameText = (a: PostText, b: PostText) => a.title === b.title && a.description === b.description && a.content === b.content;

/**
 * A post's history and its waiting edits, written once for both databases: a revision per save
 * of title, description or content (kept within the post's write, see `onPostChange`), the last
 * REVISIONS_KEPT per post; and a published post's pending change, which readers do not see
 * until a PATCH of the post ("Update") applies it.
 */
export class RevisionStore {
  constructor(
    private readonly db: StepDatabase,
    private readonly posts: PostStore,
    private readonly text: TextLimits,
  ) {}

  /** Listens to every post write (PostStore.onChange): a save that changes the text keeps a revision. */
  readonly onPostChange = (change: PostChange): Steps<void> => this.recordSteps(change);

  private *recordSteps(change: PostChange): Steps<void> {
    const { before, after } = change;
    if (!after || (before && sameText(before, after))) return;
    yield* this.keepSteps(after.siteId, after.id, textOf(after), change.by ?? null, change.restored ? 'restore' : 'save', change.at);
  }

  private *keepSteps(siteId: string, postId: string, text: PostText, by: string | null, kind: PostRevisionRow['kind'], at: Date): Steps<void> {
    yield* ask('revisions', 'insert', { id: randomUUID(), postId, siteId, ...text, authorId: by, kind, createdAt: at });
    yield* ask('revisions', 'thin', postId, REVISIONS_KEPT);
  }

  /** The post's revisions, newest first (404 for a post the site does not have). */
  list(siteId: string, postId: string): Promise<RevisionListed[]> {
    return this.db.read(function* () {
      found(yield* ask('posts', 'find', siteId, postId));
      return yield* ask('revisions', 'list', siteId, postId, REVISIONS_KEPT);
    });
  }

  /** The post's pending change (null: none) and the ETag a save of it must send as If-Match. */
  pending(siteId: string, postId: string): Promise<{ post: PostRow; pending: PendingChangeRow | null; etag: string }> {
    return this.db.read(function* () {
      const post = found(yield* ask('posts', 'find', siteId, postId));
      const pending = yield* ask('revisions', 'pending', siteId, postId);
      return { post, pending: pending ?? null, etag: pendingEtag(post, pending) };
    });
  }

  /**
   * Saves edits of a published post as its pending change (merged over the one waiting, else
   * over the live text) and keeps a revision of them. 409 for a draft (its edits are saved to it),
   * 412 when `ifMatch` is not the ETag `pending` answered.
   */
  savePending(siteId: string, postId: string, fields: PendingFields, by: string | null, ifMatch?: string, now = new Date()): Promise<{ pending: PendingChangeRow; etag: string }> {
    checkStorableText(fields, this.text);
    const title = fields.title === undefined ? undefined : cleanTitle(fields.title);
    return this.db.write(() => this.savePendingSteps(siteId, postId, { ...fields, ...(title === undefined ? {} : { title }) }, by, ifMatch, 'pending', now));
  }

  private *savePendingSteps(
    siteId: string,
    postId: string,
    fields: PendingFields,
    by: string | null,
    ifMatch: string | undefined,
    kind: PostRevisionRow['kind'],
    now: Date,
  ): Steps<{ pending: PendingChangeRow; etag: string }> {
    yield* ask('posts', 'lockSite', siteId);
    const post = found(yield* ask('posts', 'find', siteId, postId));
    if (post.isDraft) throw conflict("A draft's edits are saved to the post itself (PATCH); only a published post's wait for Update");
    const waiting = yield* ask('revisions', 'pending', siteId, postId);
    const etag = pendingEtag(post, waiting);
    if (!ifMatchHolds(ifMatch, etag)) {
      throw preconditionFailed('The post changed since you opened it (someone saved it meanwhile, perhaps in another tab): reload it to see the other changes before saving', { etag });
    }
    const base = waiting ?? post;
    const row: PendingChangeRow = {
      postId,
      siteId,
      title: fields.title ?? base.title,
      description: fields.description === undefined ? base.description : optional(fields.description),
      content: fields.content === undefined ? base.content : optional(fields.content),
      authorId: by,
      updatedAt: waiting ? nextUpdatedAt(waiting.updatedAt, now) : now,
    };
    yield* ask('revisions', 'savePending', row);
    if (!waiting || !sameText(waiting, row)) yield* this.keepSteps(siteId, postId, textOf(row), by, kind, now);
    return { pending: row, etag: pendingEtag(post, row) };
  }

  /** Drops the post's pending change (the live text stays); whether there was one. */
  discardPending(siteId: string, postId: string): Promise<boolean> {
    return this.db.write(function* () {
      yield* ask('posts', 'lockSite', siteId);
      found(yield* ask('posts', 'find', siteId, postId));
      return yield* ask('revisions', 'clearPending', postId);
    });
  }

  /**
   * Puts a revision's text back, as a new revision: into a draft itself, or into a published
   * post's pending change (readers see it after Update, like any edit of a published post).
   */
  restore(siteId: string, postId: string, revisionId: string, by: string | null, now = new Date()): Promise<{ post: PostRow; pending: PendingChangeRow | null }> {
    return this.db.write(() => this.restoreSteps(siteId, postId, revisionId, by, now));
  }

  private *restoreSteps(siteId: string, postId: string, revisionId: string, by: string | null, now: Date): Steps<{ post: PostRow; pending: PendingChangeRow | null }> {
    const post = found(yield* ask('posts', 'find', siteId, postId));
    const revision = yield* ask('revisions', 'get', siteId, postId, revisionId);
    if (!revision) throw notFound('revision');
    const text = textOf(revision);
    if (!post.isDraft) {
      const { pending } = yield* this.savePendingSteps(siteId, postId, text, by, undefined, 'restore', now);
      return { post, pending };
    }
    const after = yield* this.posts.updateSteps(siteId, postId, text, now, { by, restored: true });
    return { post: after, pending: null };
  }

  /** The names readers see for these users (display name when set), by id. */
  displayNames(userIds: readonly string[]): Promise<Map<string, string>> {
    return this.db.read(function* () {
      const rows = yield* ask('revisions', 'displayNames', userIds);
      return new Map(rows.filter((row) => row.displayName).map((row) => [row.id, row.displayName!]));
    });
  }
}
