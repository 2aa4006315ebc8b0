import type { Column, Placeholder, SQL } from 'drizzle-orm';
import { driverRow, placeholderRow, prepared, type Executor } from '../db/sqlite.js';
import type { SyncAdapter } from '../db/steps.js';
import { postCounts, postSlugRedirects, posts, sites, slugCounters } from '../db/schema.js';
import { POST_LIST_STATUSES, type PostListStatus } from '../limits.js';
import { sqliteSites } from '../sites/sqlite.js';
import type { PostPort } from './port.js';
import { isByStatus, searchFilters, statusFilter, type ListQuery } from './rules.js';
import { RESOURCE_MEMBERS } from './view.js';
import { and, count, desc, eq, gte, lt, max, sql } from '../db/orm.js';

/*
 * The posts port as SQLite answers it: synchronously, each hot statement prepared once per
 * connection (see `prepared`). The store (store.ts) holds every rule; this holds the SQL.
 */

const siteIs = eq(posts.siteId, sql.placeholder('siteId'));

const selectSlugHolder = (db: Executor) =>
  db
    .select({ id: posts.id })
    .from(posts)
    .where(and(siteIs, eq(posts.slug, sql.placeholder('slug'))))
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
const insertPostRow = (db: Executor) => db.insert(posts).values(placeholderRow(posts)).prepare();
const selectLatestCreatedAt = (db: Executor) =>
  db
    .select({ latest: max(posts.createdAt) })
    .from(posts)
    .where(siteIs)
    .prepare();
const postIs = and(eq(posts.id, sql.placeholder('postId')), siteIs);
const selectPost = (db: Executor) => db.select().from(posts).where(postIs).prepare();

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

const isoTime = (column: Column) => sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`;

const memberValue: Record<(typeof RESOURCE_MEMBERS)[number][1], (column: Column) => SQL> = {
  text: (column) => sql`${column}`,
  json: (column) => sql`json(${column})`,
  boolean: (column) => sql`json(iif(${column}, 'true', 'false'))`,
  time: isoTime,
  null: () => sql`null`,
};

/**
 * A post as the API shows it (`postResource`), built by SQLite itself from the same member list:
 * reading a page of posts as JSON text costs a fraction of mapping its rows and serializing them
 * again. A test holds the two equal.
 */
const postJson = sql<string>`json_object(${sql.join(
  // Member names are this module's own identifiers: written into the SQL, not bound on every call.
  RESOURCE_MEMBERS.map(([name, kind]) => sql`${sql.raw(`'${name}'`)}, ${memberValue[kind](posts[name as Exclude<typeof name, 'cta'>])}`),
  sql`, `,
)})`;

const selectPostJson = (db: Executor) => db.select({ json: postJson }).from(posts).where(postIs).prepare();

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

const selectCounts = (db: Executor) => db.select({ drafts: postCounts.drafts, public: postCounts.public, unlisted: postCounts.unlisted }).from(postCounts).where(eq(postCounts.siteId, sql.placeholder('siteId'))).prepare();

const selectContentVersion = (db: Executor) => db.select({ version: sites.contentVersion }).from(sites).where(eq(sites.id, sql.placeholder('siteId'))).prepare();

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
  Object.fromEntries([undefined, ...POST_LIST_STATUSES].map((status) => [String(status), (db: Executor) => build(db, and(siteIs, statusFilter(posts, status)))]));

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

const filtersOf = (siteId: string, query: ListQuery) => and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...searchFilters(posts, query, hasTag));

/** The statement a list query runs for one page (exported for the query-plan test). */
export const listPageQuery = (db: Executor, siteId: string, query: ListQuery, offset: number) => listPage(db, filtersOf(siteId, query), query.limit, offset);

const jsonOf = (rows: { json: string }[]) => rows.map((row) => row.json);

export const sqlitePosts: SyncAdapter<PostPort, Executor> = {
  // The write transaction (BEGIN IMMEDIATE) holds the database's write lock already.
  lockSite: () => {},
  creationContext: (db, siteId, slug) => ({
    latest: prepared(db, selectLatestCreatedAt).get({ siteId })?.latest ?? null,
    holder: prepared(db, selectSlugHolder).get({ siteId, slug })?.id,
  }),
  slugHolder: (db, siteId, slug) => prepared(db, selectSlugHolder).get({ siteId, slug })?.id,
  slugCounter: (db, siteId, base) => prepared(db, selectSlugCounter).get({ siteId, base })?.last,
  highestSuffix,
  saveSlugCounter: (db, siteId, base, last) => void prepared(db, saveSlugCounter).run({ siteId, base, last }),
  slugsStartingWith: (db, siteId, prefix) =>
    db
      .select({ slug: posts.slug, id: posts.id })
      .from(posts)
      // '~' sorts after every slug character ([a-z0-9-]), so this is "starts with prefix".
      .where(and(eq(posts.siteId, siteId), gte(posts.slug, prefix), lt(posts.slug, `${prefix}~`)))
      .all(),
  find: (db, siteId, postId) => prepared(db, selectPost).get({ postId, siteId }),
  findByPreviewToken: (db, token) => db.select().from(posts).where(eq(posts.previewToken, token)).get(),
  findJson: (db, siteId, postId) => prepared(db, selectPostJson).get({ postId, siteId })?.json,
  // SQLite has one writer: a slug looked at in the write's transaction stays free until it commits.
  insert: (db, row) => void prepared(db, insertPostRow).run(driverRow(posts, row)),
  update: (db, postId, changes) => void db.update(posts).set(changes).where(eq(posts.id, postId)).run(),
  remove: (db, postId) => void db.delete(posts).where(eq(posts.id, postId)).run(),
  keepRedirect: (db, post, newSlug, now) => {
    db.delete(postSlugRedirects)
      .where(and(eq(postSlugRedirects.siteId, post.siteId), eq(postSlugRedirects.slug, newSlug)))
      .run();
    db.insert(postSlugRedirects)
      .values({ siteId: post.siteId, slug: post.slug, postId: post.id, createdAt: now })
      .onConflictDoUpdate({ target: [postSlugRedirects.siteId, postSlugRedirects.slug], set: { postId: post.id, createdAt: now } })
      .run();
  },
  recordChange: (db, siteId, at, counted) => {
    const version = sqliteSites.touchContent(db, siteId, at);
    if (counted) {
      const { delta, initial } = counted;
      prepared(db, addToCounts).run({ siteId, ...delta, initialDrafts: initial.drafts, initialPublic: initial.public, initialUnlisted: initial.unlisted });
    }
    return version;
  },
  contentVersion: (db, siteId) => prepared(db, selectContentVersion).get({ siteId })?.version ?? 0,
  counts: (db, siteId) => prepared(db, selectCounts).get({ siteId }),
  countMatching: (db, siteId, query) => db.select({ n: count() }).from(posts).where(filtersOf(siteId, query)).get()!.n,
  listPage: (db, siteId, query, offset, limit) =>
    jsonOf(!isByStatus(query) ? listPageQuery(db, siteId, { ...query, limit }, offset).all() : prepared(db, listPageByStatus[String(query.status)]).all({ siteId, limit, offset })),
  // Rows as arrays (no object per row): a deep list reads thousands of them.
  creationTimes: (db, siteId, status, from, skip, count) =>
    prepared(db, creationTimesByStatus[String(status satisfies PostListStatus | undefined)]).values({ siteId, from, skip, count }).map((row) => row[0] as number),
  pageFrom: (db, siteId, status, from, skip, limit) => jsonOf(prepared(db, listPageFromByStatus[String(status)]).all({ siteId, from, offset: skip, limit })),
};
