import { afterCommit, ask, inSavepoint, type StepDatabase, type Steps } from '../db/steps.js';
import { RawJson } from '../json.js';
import { paginationOf } from '../pagination.js';
import { PostJsonCache } from './json-cache.js';
import { ListAnchors } from './list-anchors.js';
import { SlugTakenMeanwhile } from './port.js';
import {
  checkSchedule,
  countChangeOf,
  found,
  isByStatus,
  totalOf,
  type ListQuery,
  type PostChange,
  type PostInput,
  type PostOrigin,
  type PostPatch,
  type PostRow,
  type TextLimits,
  type WriteContext,
} from './rules.js';
import { jsonArray, type PostsJsonPage } from './view.js';
import { checkPatch, deleteSteps, insertSteps, previewTokenSteps, publishScheduledSteps, requestReviewSteps, toggleSteps, updateSteps } from './write-steps.js';

export type { ListQuery, PostChange, PostInput, PostOrigin, PostPatch, PostRow, WriteContext };

/** Runs inside the transaction of the change it is told about: what it writes commits with the change. */
export type PostChangeListener = (change: PostChange) => Steps<void>;

/**
 * Tries a write that picks a slug gets before giving up: another attempt is needed only when a
 * writer that bypasses this store took the slug between the look and the write.
 */
const SLUG_ATTEMPTS = 5;

const isSlugTakenMeanwhile = (error: unknown) => error instanceof SlugTakenMeanwhile;


/**
 * Posts of a site, on either database. Each write is one transaction holding the site's write
 * lock (see PostPort.lockSite): the newest creation time, the slug counters and the free slugs
 * are read and written without another writer of the site in between, also across instances.
 * The unique (site, slug) index stays the last word on slugs: a write that picks one runs in a
 * savepoint, again should a writer outside the store have taken it meanwhile.
 *
 * Reads are kept per content version of the site (PostJsonCache), and deep pages of lists by
 * status start at anchors (ListAnchors) instead of stepping over every entry before them.
 */
export class PostStore {
  private readonly listeners: PostChangeListener[] = [];
  private readonly anchors = new ListAnchors();
  private readonly kept = new PostJsonCache();

  constructor(
    private readonly db: StepDatabase,
    /** What the database can store beyond well-formed text. */
    private readonly text: TextLimits,
  ) {}

  /**
   * Calls `listener` inside the transaction of every change to a post (create, edit, publish,
   * unpublish, delete), so what it writes (an outbox row, a counter) commits with the change.
   */
  onChange(listener: PostChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Every change moves the site's content version (public pages are kept per version) and its
   * counts, then tells the listeners. Once committed, the posts' JSON kept learns which post the
   * version changed, so the others kept stay good.
   */
  private *changed(change: PostChange): Steps<void> {
    const postId = (change.after ?? change.before)?.id ?? '';
    const version = yield* ask('posts', 'recordChange', change.siteId, change.at, countChangeOf(change), postId);
    this.anchors.moved(change, version);
    if (postId) yield* afterCommit(() => this.kept.committed(change.siteId, version, postId));
    for (const listener of this.listeners) yield* listener(change);
  }

  /** A write's steps under the site's lock; those that pick a slug in a savepoint of their own (made afresh for each attempt). */
  private *locked<T>(siteId: string, steps: () => Steps<{ result: T; change: PostChange }>, { picksSlug, context }: { picksSlug: boolean; context?: WriteContext }): Steps<T> {
    yield* ask('posts', 'lockSite', siteId);
    const { result, change } = picksSlug ? yield* inSavepoint(steps, { attempts: SLUG_ATTEMPTS, retryIf: isSlugTakenMeanwhile }) : yield* steps();
    if (context?.by) change.by = context.by;
    if (context?.restored) change.restored = true;
    yield* this.changed(change);
    return result;
  }

  /**
   * A post change another writer committed (another instance, as PostgreSQL's notifications
   * tell it): the version it made changed `postId` alone, so the other posts kept stay good.
   */
  changeCommitted(siteId: string, version: number, postId: string): void {
    this.kept.committed(siteId, version, postId);
  }

  /** Creating a post as steps, for a caller's transaction (a job committing its post with its own success). */
  createSteps(siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date(), context?: WriteContext): Steps<PostRow> {
    return this.locked(siteId, () => insertSteps(siteId, input, origin, now, this.text), { picksSlug: true, context });
  }

  /** Creating a post through the API: a schedule must lie ahead (checkSchedule). */
  async create(siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date(), context?: WriteContext): Promise<PostRow> {
    checkSchedule(input, now);
    return this.db.write(() => this.createSteps(siteId, input, origin, now, context));
  }

  /**
   * Publishing a scheduled post as of its `publishAt`, as steps for the transaction of the job
   * that does it (see publishScheduledSteps): null, and no change, when its schedule changed.
   */
  *publishScheduledSteps(siteId: string, postId: string, publishAt: Date, now = new Date()): Steps<PostRow | null> {
    yield* ask('posts', 'lockSite', siteId);
    const written = yield* publishScheduledSteps(siteId, postId, publishAt, now);
    if (!written) return null;
    yield* this.changed(written.change);
    return written.result;
  }

  get(siteId: string, postId: string): Promise<PostRow> {
    return this.db.read(() => this.getSteps(siteId, postId));
  }

  // Steps are methods, made once: a generator function made anew per call costs V8 microseconds.
  private *getSteps(siteId: string, postId: string): Steps<PostRow> {
    return found(yield* ask('posts', 'find', siteId, postId));
  }

  /** The post as the API shows it (`postResource`), as JSON text. */
  getJson(siteId: string, postId: string): Promise<RawJson> {
    return this.db.read(() => this.getJsonSteps(siteId, postId));
  }

  private *getJsonSteps(siteId: string, postId: string): Steps<RawJson> {
    // The version first: see PostJsonCache.
    const version = yield* ask('posts', 'contentVersion', siteId);
    const hit = this.kept.lookupPost(siteId, version, postId);
    if (hit) return hit;
    return this.kept.keepPost(siteId, version, postId, new RawJson(found(yield* ask('posts', 'findJson', siteId, postId))));
  }

  toggle(siteId: string, postId: string, now = new Date(), context?: WriteContext): Promise<PostRow> {
    return this.db.write(() => this.locked(siteId, () => toggleSteps(siteId, postId, now), { picksSlug: false, context }));
  }

  /** PATCH: `context.ifMatch` (the post's ETag the writer saw) is checked under the lock, 412 when stale. */
  async update(siteId: string, postId: string, patch: PostPatch, now = new Date(), context?: WriteContext): Promise<PostRow> {
    checkPatch(patch, this.text);
    checkSchedule(patch, now);
    return this.db.write(() => this.updateSteps(siteId, postId, patch, now, context));
  }

  /** PATCH as steps, for a caller's transaction (a revision restored). */
  updateSteps(siteId: string, postId: string, patch: PostPatch, now = new Date(), context?: WriteContext): Steps<PostRow> {
    return this.locked(siteId, () => updateSteps(siteId, postId, patch, now, context?.ifMatch), { picksSlug: true, context });
  }

  /** "Submit for review": the draft is marked for an editor. */
  requestReview(siteId: string, postId: string, now = new Date(), context?: WriteContext): Promise<PostRow> {
    return this.db.write(() => this.locked(siteId, () => requestReviewSteps(siteId, postId, now), { picksSlug: false, context }));
  }

  /** Sets (a token) or revokes (null) the draft's share-preview link. */
  setPreviewToken(siteId: string, postId: string, token: string | null, now = new Date()): Promise<PostRow> {
    return this.db.write(() => this.locked(siteId, () => previewTokenSteps(siteId, postId, token, now), { picksSlug: false }));
  }

  /** The draft a share-preview link opens: none once published or revoked. */
  async byPreviewToken(token: string): Promise<PostRow | undefined> {
    const post = await this.db.read(() => ask('posts', 'findByPreviewToken', token));
    return post && post.isDraft ? post : undefined;
  }

  async delete(siteId: string, postId: string, now = new Date(), context?: WriteContext): Promise<void> {
    await this.db.write(() => this.locked(siteId, () => deleteSteps(siteId, postId, now), { picksSlug: false, context }));
  }

  /** A page of posts as the API shows them (`postResource`s), as JSON text. */
  list(siteId: string, query: ListQuery): Promise<PostsJsonPage> {
    return this.db.read(() => this.listSteps(siteId, query));
  }

  private *listSteps(siteId: string, query: ListQuery): Steps<PostsJsonPage> {
    const { kept, anchors } = this;
    // The version first: see PostJsonCache.
    const version = yield* ask('posts', 'contentVersion', siteId);
    const hit = kept.lookupPage(siteId, version, query);
    if (hit) return hit;
    const byStatus = isByStatus(query);
    // Lists by status alone read their total from the counts every write keeps; filters count.
    const total = byStatus ? totalOf(yield* ask('posts', 'counts', siteId), query.status) : yield* ask('posts', 'countMatching', siteId, query);
    const offset = (query.page - 1) * query.limit;
    const { limit } = query;
    // Read even past the total: rows written behind the store's back (an import) still list.
    const start = byStatus
      ? yield* anchors.locate(siteId, query.status, version, offset, (from, skip, count) => ask('posts', 'creationTimes', siteId, query.status, from, skip, count))
      : null;
    const items = start ? yield* ask('posts', 'pageFrom', siteId, query.status, start.from, start.skip, limit) : yield* ask('posts', 'listPage', siteId, query, offset, limit);
    return kept.keepPage(siteId, version, query, { posts: jsonArray(items), pagination: paginationOf(query.page, limit, total) });
  }
}
