import { and, count, desc, eq, gte, inArray, lt, max, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { driverRow, placeholderRow, prepared, WRITE_TRANSACTION, type Executor } from '../db/client.js';
import { postCounts, postSlugRedirects, posts, slugCounters } from '../db/schema.js';
import { POST_LIST_STATUSES } from '../limits.js';
import { paginate, type Page } from '../pagination.js';
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
 * A page of posts in one statement: the page's rows are found in the list index first (a deep
 * offset skips index entries, not whole posts) and only those 20 are read whole.
 */
function listPage(db: Executor, where: SQL | undefined, limit: number | Placeholder, offset: number | Placeholder) {
  const page = db.select({ rowid: sql`rowid` }).from(posts).where(where).orderBy(...LIST_ORDER).limit(limit).offset(offset);
  // The page's rows in the page's order (the outer sort is of those rows only).
  return db.select().from(posts).where(inArray(sql`rowid`, page)).orderBy(...LIST_ORDER, desc(sql`rowid`));
}

/** Lists by status alone are the common case: one statement per status, prepared once. */
const listPageByStatus = Object.fromEntries(
  [undefined, ...POST_LIST_STATUSES].map((status) => [
    String(status),
    (db: Executor) =>
      listPage(db, and(eq(posts.siteId, sql.placeholder('siteId')), statusFilter(posts, status)), sql.placeholder('limit'), sql.placeholder('offset')).prepare(),
  ]),
);

/** The statement a list query runs for one page (exported for the query-plan test). */
export function listPageQuery(db: Executor, siteId: string, query: ListQuery, offset: number) {
  return listPage(db, and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...searchFilters(posts, query, hasTag)), query.limit, offset);
}

function listPosts(db: Executor, siteId: string, query: ListQuery): Page<PostRow> {
  const search = searchFilters(posts, query, hasTag);
  const filtered = search.length > 0;
  return paginate(
    query.page,
    query.limit,
    // Lists by state alone read their total from the counts every write keeps; filters count.
    () =>
      filtered
        ? db.select({ n: count() }).from(posts).where(and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...search)).get()!.n
        : totalOf(prepared(db, selectCounts).get({ siteId }), query.status),
    (offset, limit) =>
      filtered
        ? listPageQuery(db, siteId, { ...query, limit }, offset).all()
        : prepared(db, listPageByStatus[String(query.status)]).all({ siteId, limit, offset }),
  );
}

/**
 * Posts of a site. Methods answer promises, as a database that answers over the network
 * would; each one is a single synchronous statement or transaction underneath.
 */
export class PostService {
  private readonly listeners: PostChangeListener[] = [];

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
    touchSiteContent(tx, change.siteId, change.at);
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

  async list(siteId: string, query: ListQuery): Promise<Page<PostRow>> {
    return listPosts(this.db, siteId, query);
  }
}
