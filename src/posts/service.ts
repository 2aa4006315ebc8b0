import { and, count, desc, eq, gte, lt, max, sql, type Column, type Placeholder, type SQL } from 'drizzle-orm';
import { driverRow, placeholderRow, prepared, WRITE_TRANSACTION, type Executor } from '../db/client.js';
import { postCounts, postSlugRedirects, posts, sites, slugCounters } from '../db/schema.js';
import { POST_LIST_STATUSES } from '../limits.js';
import { RawJson } from '../json.js';
import { paginate } from '../pagination.js';
import { touchSiteContent } from '../sites/settings.js';
import {
  countChangeOf,
  found,
  searchFilters,
  SQLITE_TEXT,
  statusFilter,
  totalOf,
  type ListQuery,
  type PostChange,
  type PostInput,
  type PostOrigin,
  type PostPatch,
  type PostRow,
} from './rules.js';
import { PostJsonCache } from './json-cache.js';
import { ListAnchors } from './list-anchors.js';
import { jsonArray, type PostsJsonPage } from './view.js';
import { checkPatch, deleteSteps, insertSteps, runSteps, toggleSteps, updateSteps, type PostStorage, type WriteSteps } from './write-steps.js';

export type { ListQuery, PostChange, PostInput, PostOrigin, PostPatch, PostRow };

/** Runs inside the transaction of the change it is told about. */
export type PostChangeListener = (tx: Executor, change: PostChange) => void;
type ChangeRecorder = PostChangeListener;

/** The highest N among the site's slugs `<base>-N`, read from the (site, slug) index; 1 when none. */
function highestSuffix(db: Executor, siteId: string, base: string): number {
  const start = base.length + 2;
  // '-' and '.' are adjacent characters, so the range is exactly "starts with <base>-".
  const row = db.get<{ n: number | null }>(sql`
    select max(cast(substr(${posts.slug}, ${start}) as integer)) as n from ${posts}
     where ${posts.siteId} = ${siteId} and ${posts.slug} > ${`${base}-`} and ${posts.slug} < ${`${base}.`}
       and substr(${posts.slug}, ${start}) not glob '*[^0-9]*'`);
  return row.n ?? 1;
}

// A post write runs these every time: each is prepared once (see `prepared`).
const selectSlugHolder = (db: Executor) =>
  db
    .select({ id: posts.id })
    .from(posts)
    .where(and(eq(posts.siteId, sql.placeholder('siteId')), eq(posts.slug, sql.placeholder('slug'))))
    .prepare();
const selectSlugCounter = (db: Executor) =>
  db
    .select({ last: slugCounters.last })
    .from(slugCounters)
    .where(and(eq(slugCounters.siteId, sql.placeholder('siteId')), eq(slugCounters.base, sql.placeholder('base'))))
    .prepare();
const saveSlugCounter = (db: Executor) =>
  db
    .insert(slugCounters)
    .values({ siteId: sql.placeholder('siteId'), base: sql.placeholder('base'), last: sql.placeholder('last') })
    .onConflictDoUpdate({ target: [slugCounters.siteId, slugCounters.base], set: { last: sql`excluded.last` } })
    .prepare();
// Every column from the row's field of the same name, encoded by driverRow.
const insertPostRow = (db: Executor) =>
  db
    .insert(posts)
    .values(placeholderRow(posts))
    .prepare();
const selectLatestCreatedAt = (db: Executor) =>
  db
    .select({ latest: max(posts.createdAt) })
    .from(posts)
    .where(eq(posts.siteId, sql.placeholder('siteId')))
    .prepare();
const selectPost = (db: Executor) =>
  db
    .select()
    .from(posts)
    .where(and(eq(posts.id, sql.placeholder('postId')), eq(posts.siteId, sql.placeholder('siteId'))))
    .prepare();

const isoTime = (column: Column) =>
  sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`;

/**
 * A post as the API shows it (`postResource` in view.ts, member for member), built by SQLite
 * itself: reading a page of posts as JSON text costs a fraction of mapping its rows and
 * serializing them again. A test holds the two equal.
 */
const postJson = sql<string>`json_object(
  'id', ${posts.id}, 'slug', ${posts.slug}, 'title', ${posts.title}, 'description', ${posts.description},
  'content', ${posts.content}, 'category', ${posts.category}, 'tags', json(${posts.tags}), 'cta', null,
  'authorId', ${posts.authorId}, 'isDraft', json(iif(${posts.isDraft}, 'true', 'false')), 'visibility', ${posts.visibility},
  'publishedAt', ${isoTime(posts.publishedAt)}, 'createdAt', ${isoTime(posts.createdAt)}, 'updatedAt', ${isoTime(posts.updatedAt)})`;

const selectPostJson = (db: Executor) =>
  db
    .select({ json: postJson })
    .from(posts)
    .where(and(eq(posts.id, sql.placeholder('postId')), eq(posts.siteId, sql.placeholder('siteId'))))
    .prepare();

/**
 * A published post's URL outlives a slug change: the old slug redirects to the post. Its
 * own earlier redirect to the new slug, if any, goes (the slug is live again).
 */
function keepRedirect(tx: Executor, post: PostRow, newSlug: string, now: Date): void {
  tx.delete(postSlugRedirects)
    .where(and(eq(postSlugRedirects.siteId, post.siteId), eq(postSlugRedirects.slug, newSlug)))
    .run();
  tx.insert(postSlugRedirects)
    .values({ siteId: post.siteId, slug: post.slug, postId: post.id, createdAt: now })
    .onConflictDoUpdate({ target: [postSlugRedirects.siteId, postSlugRedirects.slug], set: { postId: post.id, createdAt: now } })
    .run();
}

/** The answers to a write's questions about one site (see write-steps.ts), inside transaction `db`. */
function siteStorage(db: Executor, siteId: string, changed: ChangeRecorder): PostStorage {
  return {
    latestCreatedAt: () => prepared(db, selectLatestCreatedAt).get({ siteId })?.latest ?? null,
    slugHolder: (slug) => prepared(db, selectSlugHolder).get({ siteId, slug })?.id,
    slugCounter: (base) => prepared(db, selectSlugCounter).get({ siteId, base })?.last,
    highestSuffix: (base) => highestSuffix(db, siteId, base),
    saveSlugCounter: (base, last) => void prepared(db, saveSlugCounter).run({ siteId, base, last }),
    slugsStartingWith: (prefix) =>
      db
        .select({ slug: posts.slug, id: posts.id })
        .from(posts)
        // '~' sorts after every slug character ([a-z0-9-]), so this is "starts with prefix".
        .where(and(eq(posts.siteId, siteId), gte(posts.slug, prefix), lt(posts.slug, `${prefix}~`)))
        .all(),
    find: (postId) => prepared(db, selectPost).get({ postId, siteId }),
    insert: (row) => void prepared(db, insertPostRow).run(driverRow(posts, row)),
    update: (postId, changes) => void db.update(posts).set(changes).where(eq(posts.id, postId)).run(),
    remove: (postId) => void db.delete(posts).where(eq(posts.id, postId)).run(),
    keepRedirect: (post, newSlug, now) => keepRedirect(db, post, newSlug, now),
    changed: (change) => changed(db, change),
  };
}

const addToCounts = (db: Executor) =>
  db
    .insert(postCounts)
    .values({ siteId: sql.placeholder('siteId'), drafts: sql.placeholder('initialDrafts'), public: sql.placeholder('initialPublic'), unlisted: sql.placeholder('initialUnlisted') })
    .onConflictDoUpdate({
      target: postCounts.siteId,
      set: {
        drafts: sql`${postCounts.drafts} + ${sql.placeholder('drafts')}`,
        public: sql`${postCounts.public} + ${sql.placeholder('public')}`,
        unlisted: sql`${postCounts.unlisted} + ${sql.placeholder('unlisted')}`,
      },
    })
    .prepare();

/** Keeps the site's post counts in the transaction of a change. */
function countChange(tx: Executor, change: PostChange): void {
  const counted = countChangeOf(change);
  if (!counted) return;
  const { delta, initial } = counted;
  prepared(tx, addToCounts).run({
    siteId: change.siteId,
    ...delta,
    initialDrafts: initial.drafts,
    initialPublic: initial.public,
    initialUnlisted: initial.unlisted,
  });
}

const selectCounts = (db: Executor) => db.select().from(postCounts).where(eq(postCounts.siteId, sql.placeholder('siteId'))).prepare();

const hasTag = (tag: string) => sql`exists (select 1 from json_each(${posts.tags}) where fold(json_each.value) = fold(${tag}))`;

// Newest first. Creation times are unique per site (see nextCreatedAt), so this is a total
// order the list index holds as it is: a page needs no sort however deep it is. (A tie-break
// term would make SQLite sort every row before the offset when a status fixes is_draft.)
// Posts created in one millisecond before creation times were unique keep the index's order.
const LIST_ORDER = [desc(posts.createdAt)];

/**
 * A page of posts (as JSON, see postJson) in one statement: the page's rows are found in the
 * list index first (a deep offset skips index entries, not whole posts), then only those are
 * read whole, in the order the index gave them (no sort).
 */
function listPage(db: Executor, where: SQL | undefined, limit: number | Placeholder, offset: number | Placeholder) {
  const page = db
    .select({ rowid: sql<number>`${posts}.rowid`.as('page_rowid'), createdAt: sql<number>`${posts.createdAt}`.as('page_created_at') })
    .from(posts)
    .where(where)
    .orderBy(...LIST_ORDER)
    .limit(limit)
    .offset(offset)
    .as('page');
  return db.select({ json: postJson }).from(page).innerJoin(posts, sql`${posts}.rowid = ${page.rowid}`).orderBy(desc(page.createdAt));
}

const byStatus = <T>(build: (db: Executor, where: SQL | undefined) => T) =>
  Object.fromEntries(
    [undefined, ...POST_LIST_STATUSES].map((status) => [
      String(status),
      (db: Executor) => build(db, and(eq(posts.siteId, sql.placeholder('siteId')), statusFilter(posts, status))),
    ]),
  );

/** Lists by status alone are the common case: their statements are prepared once per status. */
const listPageByStatus = byStatus((db, where) => listPage(db, where, sql.placeholder('limit'), sql.placeholder('offset')).prepare());

// Creation times at or before an anchor's (the list's order is newest first). Raw SQL: the
// anchor is the stored number, not a Date for the column's encoder.
const atOrBefore = (from: number | Placeholder) => sql`${posts.createdAt} <= ${from}`;

/** A page that starts at an anchor (see list-anchors.ts): at most a stride of entries stepped over. */
const listPageFromByStatus = byStatus((db, where) => listPage(db, and(where, atOrBefore(sql.placeholder('from'))), sql.placeholder('limit'), sql.placeholder('offset')).prepare());

/** The statement of a page from its anchor (exported for the query-plan test). */
export const anchoredPageQuery = (db: Executor, siteId: string, status: ListQuery['status'], from: number, offset: number, limit: number) =>
  listPage(db, and(eq(posts.siteId, siteId), statusFilter(posts, status), atOrBefore(from)), limit, offset);

/** Creation times alone, in list order, read from the list index to find anchors. */
function creationTimes(db: Executor, where: SQL | undefined, from: number | Placeholder, count: number | Placeholder, skip: number | Placeholder) {
  return db.select({ createdAt: sql<number>`${posts.createdAt}` }).from(posts).where(and(where, atOrBefore(from))).orderBy(...LIST_ORDER).limit(count).offset(skip);
}

const creationTimesByStatus = byStatus((db, where) => creationTimes(db, where, sql.placeholder('from'), sql.placeholder('count'), sql.placeholder('skip')).prepare());

/** The statement that finds anchors (exported for the query-plan test). */
export const creationTimesQuery = (db: Executor, siteId: string, status: ListQuery['status'], from: number, count: number, skip: number) =>
  creationTimes(db, and(eq(posts.siteId, siteId), statusFilter(posts, status)), from, count, skip);

const selectContentVersion = (db: Executor) =>
  db.select({ version: sites.contentVersion }).from(sites).where(eq(sites.id, sql.placeholder('siteId'))).prepare();

/** The statement a list query runs for one page (exported for the query-plan test). */
export function listPageQuery(db: Executor, siteId: string, query: ListQuery, offset: number) {
  return listPage(db, and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...searchFilters(posts, query, hasTag)), query.limit, offset);
}

/** A page of a list by status alone: from its anchor when it is deep (see list-anchors.ts). */
function statusPage(db: Executor, anchors: ListAnchors, siteId: string, version: number, status: ListQuery['status'], offset: number, limit: number) {
  const key = String(status);
  const start = anchors.locate(siteId, status, version, offset, (from, skip, count) =>
    // Rows as arrays (no object per row): a deep list reads thousands of them.
    prepared(db, creationTimesByStatus[key]).values({ siteId, from, skip, count }).map((row) => row[0] as number),
  );
  return start
    ? prepared(db, listPageFromByStatus[key]).all({ siteId, from: start.from, offset: start.skip, limit })
    : prepared(db, listPageByStatus[key]).all({ siteId, limit, offset });
}

function listPosts(db: Executor, anchors: ListAnchors, siteId: string, version: number, query: ListQuery): PostsJsonPage {
  const search = searchFilters(posts, query, hasTag);
  const filtered = search.length > 0;
  const page = paginate(
    query.page,
    query.limit,
    // Lists by state alone read their total from the counts every write keeps; filters count.
    () =>
      filtered
        ? db.select({ n: count() }).from(posts).where(and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...search)).get()!.n
        : totalOf(prepared(db, selectCounts).get({ siteId }), query.status),
    (offset, limit) => (filtered ? listPageQuery(db, siteId, { ...query, limit }, offset).all() : statusPage(db, anchors, siteId, version, query.status, offset, limit)),
  );
  return { posts: jsonArray(page.items.map((row) => row.json)), pagination: page.pagination };
}

/**
 * Posts of a site. Methods answer promises, as a database that answers over the network
 * would; each one is a single synchronous statement or transaction underneath.
 */
export class PostService {
  private readonly listeners: PostChangeListener[] = [];
  private readonly anchors = new ListAnchors();
  private readonly kept = new PostJsonCache();

  constructor(private readonly db: Executor) {}

  /**
   * Calls `listener` inside the transaction of every change to a post (create, edit, publish,
   * unpublish, delete), so what it writes (an outbox row, a counter) commits with the change.
   */
  onChange(listener: PostChangeListener): void {
    this.listeners.push(listener);
  }

  /** Every change moves the site's content version (public pages are cached per version) and its counts, then tells the listeners. */
  private readonly changed: ChangeRecorder = (tx, change) => {
    this.anchors.moved(change, touchSiteContent(tx, change.siteId, change.at));
    countChange(tx, change);
    for (const listener of this.listeners) listener(tx, change);
  };

  /** Runs a write's steps in `tx` (synchronous: the slug check and the insert are one step). */
  private run<T>(tx: Executor, siteId: string, steps: WriteSteps<T>): T {
    return runSteps(steps, siteStorage(tx, siteId, this.changed));
  }

  private write<T>(siteId: string, steps: WriteSteps<T>): T {
    return this.db.transaction((tx) => this.run(tx, siteId, steps), WRITE_TRANSACTION);
  }

  async create(siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date()): Promise<PostRow> {
    return this.db.transaction((tx) => this.insert(tx, siteId, input, origin, now), WRITE_TRANSACTION);
  }

  /** Inserts inside a caller's transaction (a job committing its post with its own success). */
  insert(tx: Executor, siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date()): PostRow {
    return this.run(tx, siteId, insertSteps(siteId, input, origin, now, SQLITE_TEXT));
  }

  async get(siteId: string, postId: string): Promise<PostRow> {
    return found(prepared(this.db, selectPost).get({ postId, siteId }));
  }

  /** The post as the API shows it (`postResource`), as JSON text. */
  async getJson(siteId: string, postId: string): Promise<RawJson> {
    // The version first: see PostJsonCache.
    return this.kept.post(siteId, this.contentVersion(siteId), postId, () => new RawJson(found(prepared(this.db, selectPostJson).get({ postId, siteId })).json));
  }

  async toggle(siteId: string, postId: string, now = new Date()): Promise<PostRow> {
    return this.write(siteId, toggleSteps(siteId, postId, now));
  }

  async update(siteId: string, postId: string, patch: PostPatch, now = new Date()): Promise<PostRow> {
    checkPatch(patch, SQLITE_TEXT);
    return this.write(siteId, updateSteps(siteId, postId, patch, now));
  }

  async delete(siteId: string, postId: string, now = new Date()): Promise<void> {
    this.write(siteId, deleteSteps(siteId, postId, now));
  }

  /** A page of posts as the API shows them (`postResource`s), as JSON text. */
  async list(siteId: string, query: ListQuery): Promise<PostsJsonPage> {
    // The version first: see PostJsonCache.
    const version = this.contentVersion(siteId);
    return this.kept.page(siteId, version, query, () => listPosts(this.db, this.anchors, siteId, version, query));
  }

  private contentVersion(siteId: string): number {
    return prepared(this.db, selectContentVersion).get({ siteId })?.version ?? 0;
  }
}
