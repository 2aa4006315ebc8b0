import { and, count, desc, eq, inArray, max, sql, type SQL } from 'drizzle-orm';
import type { AsyncAdapter } from '../db/steps.js';
import { postCounts, postSlugRedirects, posts, sites, slugCounters } from '../db/pg-schema.js';
import { refusedByUnique, type PgExecutor } from '../db/postgres.js';
import { SlugTakenMeanwhile, type PostPort } from './port.js';
import { searchFilters, statusFilter, type ListQuery } from './rules.js';
import { postJsonText } from './view.js';

/*
 * The posts port as PostgreSQL answers it. Several instances may write at once: the store locks
 * the site's row first (lockSite), counts and the content version are atomic increments, and the
 * unique (site, slug) index is the last word on slugs (a violation is SlugTakenMeanwhile, and the
 * store picks again). Transactions must be READ COMMITTED (the default): each statement then
 * sees what the writers before the lock committed.
 */

const first = <T>(rows: T[]): T | undefined => rows[0];

/** Turns the (site, slug) index's refusal into the error the store retries on. */
const slugChecked = refusedByUnique('posts_site_slug_unique', (cause) => new SlugTakenMeanwhile({ cause }));

/** The highest N among the site's slugs `<base>-N`; 1 when none. */
async function highestSuffix(db: PgExecutor, siteId: string, base: string): Promise<number> {
  const start = base.length + 2;
  const suffix = sql`substr(${posts.slug}, ${start})`;
  // numeric, capped where SQLite's cast to integer saturates: a huge number set by hand neither fails nor differs.
  const [row] = await db
    .select({ n: sql<string | null>`max(least(${suffix}::numeric, 9223372036854775807))::text` })
    .from(posts)
    // starts_with, not a range of slugs: the range depends on the database's collation.
    .where(and(eq(posts.siteId, siteId), sql`starts_with(${posts.slug}, ${`${base}-`})`, sql`${suffix} ~ '^[0-9]+$'`));
  return row?.n == null ? 1 : Number(row.n);
}

const hasTag = (tag: string) => sql`exists (select 1 from jsonb_array_elements_text(${posts.tags}) as tag(value) where fold(tag.value) = fold(${tag}))`;

// Newest first, as on SQLite: creation times are unique per site (see nextCreatedAt); `rowid`
// (insertion order, as SQLite's) orders posts created in one millisecond before they were.
const LIST_ORDER = [desc(posts.createdAt), desc(sql`rowid`)];

const filtersOf = (siteId: string, query: Pick<ListQuery, 'status' | 'tag' | 'category' | 'q'>) =>
  and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...searchFilters(posts, query as ListQuery, hasTag));

/**
 * A page of posts in one statement: the page's rows found in the list index first
 * (posts_site_list_order_idx, in LIST_ORDER: a deep offset skips index entries, not whole rows),
 * then only those read whole, as on SQLite.
 */
function listPage(db: PgExecutor, where: SQL | undefined, limit: number, offset: number) {
  const page = db.select({ rowid: sql`rowid` }).from(posts).where(where).orderBy(...LIST_ORDER).limit(limit).offset(offset);
  return db.select().from(posts).where(inArray(sql`rowid`, page)).orderBy(...LIST_ORDER);
}

/** The statement a list query runs for one page (exported for the query-plan test). */
export const pgListPageQuery = (db: PgExecutor, siteId: string, query: ListQuery, offset: number) => listPage(db, filtersOf(siteId, query), query.limit, offset);

// Creation times at or before an anchor's (see list-anchors.ts): the stored milliseconds.
/** Latest instant a Date can hold (ms): the list anchors start "from the top" at Number.MAX_SAFE_INTEGER, past it. */
const MAX_DATE_MS = 8.64e15;
const atOrBefore = (from: number) => (from >= MAX_DATE_MS ? sql`true` : sql`${posts.createdAt} <= ${new Date(from).toISOString()}::timestamptz`);

// No text here holds U+0000 (PostgreSQL refuses it), so a filter with one matches nothing; as a parameter, it would fail.
const holdsNul = (query: ListQuery) => [query.tag, query.category, query.q].some((text) => text?.includes('\0'));

export const postgresPosts: AsyncAdapter<PostPort, PgExecutor> = {
  lockSite: async (db, siteId) => {
    // FOR NO KEY UPDATE: inserts elsewhere that reference the site (jobs: a foreign key's lock) do not wait for it.
    await db.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).for('no key update');
  },
  latestCreatedAt: async (db, siteId) => first(await db.select({ latest: max(posts.createdAt) }).from(posts).where(eq(posts.siteId, siteId)))?.latest ?? null,
  slugHolder: async (db, siteId, slug) => first(await db.select({ id: posts.id }).from(posts).where(and(eq(posts.siteId, siteId), eq(posts.slug, slug))))?.id,
  slugCounter: async (db, siteId, base) =>
    first(
      await db
        .select({ last: slugCounters.last })
        .from(slugCounters)
        .where(and(eq(slugCounters.siteId, siteId), eq(slugCounters.base, base))),
    )?.last,
  highestSuffix,
  saveSlugCounter: async (db, siteId, base, last) => {
    await db
      .insert(slugCounters)
      .values({ siteId, base, last })
      .onConflictDoUpdate({ target: [slugCounters.siteId, slugCounters.base], set: { last: sql`excluded.last` } });
  },
  slugsStartingWith: (db, siteId, prefix) =>
    db
      .select({ slug: posts.slug, id: posts.id })
      .from(posts)
      .where(and(eq(posts.siteId, siteId), sql`starts_with(${posts.slug}, ${prefix})`)),
  find: async (db, siteId, postId) => first(await db.select().from(posts).where(and(eq(posts.siteId, siteId), eq(posts.id, postId)))),
  findJson: async (db, siteId, postId) => {
    const post = first(await db.select().from(posts).where(and(eq(posts.siteId, siteId), eq(posts.id, postId))));
    return post && postJsonText(post);
  },
  insert: (db, row) => slugChecked(db.insert(posts).values(row).execute()),
  update: (db, postId, changes) => slugChecked(db.update(posts).set(changes).where(eq(posts.id, postId)).execute()),
  remove: async (db, postId) => {
    await db.delete(posts).where(eq(posts.id, postId));
  },
  keepRedirect: async (db, post, newSlug, now) => {
    await db.delete(postSlugRedirects).where(and(eq(postSlugRedirects.siteId, post.siteId), eq(postSlugRedirects.slug, newSlug)));
    await db
      .insert(postSlugRedirects)
      .values({ siteId: post.siteId, slug: post.slug, postId: post.id, createdAt: now })
      .onConflictDoUpdate({ target: [postSlugRedirects.siteId, postSlugRedirects.slug], set: { postId: post.id, createdAt: now } });
  },
  addToCounts: async (db, siteId, delta, initial) => {
    await db
      .insert(postCounts)
      .values({ siteId, ...initial })
      .onConflictDoUpdate({
        target: postCounts.siteId,
        set: {
          drafts: sql`${postCounts.drafts} + ${delta.drafts}`,
          public: sql`${postCounts.public} + ${delta.public}`,
          unlisted: sql`${postCounts.unlisted} + ${delta.unlisted}`,
        },
      });
  },
  contentVersion: async (db, siteId) => first(await db.select({ version: sites.contentVersion }).from(sites).where(eq(sites.id, siteId)))?.version ?? 0,
  counts: async (db, siteId) =>
    first(await db.select({ drafts: postCounts.drafts, public: postCounts.public, unlisted: postCounts.unlisted }).from(postCounts).where(eq(postCounts.siteId, siteId))),
  countMatching: async (db, siteId, query) => (holdsNul(query) ? 0 : first(await db.select({ n: count() }).from(posts).where(filtersOf(siteId, query)))!.n),
  listPage: async (db, siteId, query, offset, limit) => (holdsNul(query) ? [] : (await listPage(db, filtersOf(siteId, query), limit, offset)).map(postJsonText)),
  creationTimes: async (db, siteId, status, from, skip, count) =>
    (
      await db
        .select({ createdAt: posts.createdAt })
        .from(posts)
        .where(and(filtersOf(siteId, { status }), atOrBefore(from)))
        .orderBy(...LIST_ORDER)
        .limit(count)
        .offset(skip)
    ).map((row) => row.createdAt.getTime()),
  pageFrom: async (db, siteId, status, from, skip, limit) => (await listPage(db, and(filtersOf(siteId, { status }), atOrBefore(from)), limit, skip)).map(postJsonText),
};
