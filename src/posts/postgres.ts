import type { SQL } from 'drizzle-orm';
import type { AsyncAdapter } from '../db/steps.js';
import { postCounts, postSlugRedirects, posts, sites, slugCounters } from '../db/pg-schema.js';
import { POST_CHANGE_CHANNEL } from '../db/pg-content-versions.js';
import { namedQuery, refusedByUnique, sendAhead, type PgExecutor } from '../db/postgres.js';
import { notFound } from '../errors.js';
import { SlugTakenMeanwhile, type PostPort } from './port.js';
import { searchFilters, statusFilter, type ListQuery, type PostRow } from './rules.js';
import { postJsonText } from './view.js';
import { and, count, desc, eq, getTableColumns, inArray, sql } from '../db/orm.js';

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

/** The latest time a Date holds: the top of a list (list-anchors.ts starts there with Number.MAX_SAFE_INTEGER) is past it. */
const MAX_DATE_MS = 8.64e15;

// Creation times at or before an anchor's (see list-anchors.ts): the stored milliseconds; from the top of the list, every one.
const atOrBefore = (from: number) => (from >= MAX_DATE_MS ? undefined : sql`${posts.createdAt} <= ${new Date(from).toISOString()}::timestamptz`);

// No text here holds U+0000 (PostgreSQL refuses it), so a filter with one matches nothing; as a parameter, it would fail.
const holdsNul = (query: ListQuery) => [query.tag, query.category, query.q].some((text) => text?.includes('\0'));

/*
 * The statements every post write runs, as named prepared statements (namedQuery): planned once
 * per connection, and no query building per write. Exported for the query-plan test.
 */
export const PG_POST_WRITE_SQL = {
  // FOR NO KEY UPDATE: inserts elsewhere that reference the site (jobs: a foreign key's lock) do not wait for it.
  lockSite: 'select 1 from sites where id = $1 for no key update',
  // Both from indexes: the newest creation time from the list index's first entry, the holder from the (site, slug) index.
  creationContext: `select (select max(created_at) from posts where site_id = $1) as latest,
                           (select id from posts where site_id = $1 and slug = $2) as holder`,
  // The version moves atomically (several instances write one site at once); the counts only where the site is.
  // Each tells every instance which post the version changed (POST_CHANGE_CHANNEL), once it commits.
  recordChange: `update sites set content_version = content_version + 1, content_updated_at = $2 where id = $1
    returning content_version as version, pg_notify('${POST_CHANGE_CHANNEL}', $1::text || ' ' || content_version || ' ' || $3::text)`,
  recordCountedChange: `with moved as (
      update sites set content_version = content_version + 1, content_updated_at = $2 where id = $1 returning content_version
    ), counted as (
      insert into post_counts (site_id, drafts, public, unlisted) select $1::text, $6::int, $7::int, $8::int from moved
      on conflict (site_id) do update set drafts = post_counts.drafts + $3::int, public = post_counts.public + $4::int, unlisted = post_counts.unlisted + $5::int
    )
    select content_version as version, pg_notify('${POST_CHANGE_CHANNEL}', $1::text || ' ' || content_version || ' ' || $9::text) from moved`,
} as const;

/**
 * A post's insert as a named prepared statement, its columns those of the posts table (every
 * column the row gives, encoded as Drizzle encodes them): the statement is made once per set of
 * columns, so a column added to the table joins it without anyone listing it here.
 */
const postColumns = Object.entries(getTableColumns(posts));
const insertStatements = new Map<string, { name: string; text: string; columns: typeof postColumns }>();

function insertPost(db: PgExecutor, row: PostRow): Promise<unknown> {
  const given = row as unknown as Record<string, unknown>;
  const columns = postColumns.filter(([key]) => given[key] !== undefined);
  const shape = columns.map(([key]) => key).join(',');
  let statement = insertStatements.get(shape);
  if (!statement) {
    statement = {
      name: `posts_insert_${insertStatements.size + 1}`,
      text: `insert into posts (${columns.map(([, column]) => `"${column.name}"`).join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
      columns,
    };
    insertStatements.set(shape, statement);
  }
  const values = statement.columns.map(([key, column]) => (given[key] === null ? null : column.mapToDriverValue(given[key])));
  return namedQuery(db, statement.name, statement.text, values);
}

export const postgresPosts: AsyncAdapter<PostPort, PgExecutor> = {
  // Sent with the write's next statement: nothing waits for its answer, only for the lock.
  lockSite: async (db, siteId) => sendAhead(db, { name: 'posts_lock_site', text: PG_POST_WRITE_SQL.lockSite, values: [siteId] }),
  creationContext: async (db, siteId, slug) => {
    const [row] = await namedQuery<{ latest: Date | null; holder: string | null }>(db, 'posts_creation_context', PG_POST_WRITE_SQL.creationContext, [siteId, slug]);
    return { latest: row?.latest ?? null, holder: row?.holder ?? undefined };
  },
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
  findByPreviewToken: async (db, token) => first(await db.select().from(posts).where(eq(posts.previewToken, token))),
  findJson: async (db, siteId, postId) => {
    const post = first(await db.select().from(posts).where(and(eq(posts.siteId, siteId), eq(posts.id, postId))));
    return post && postJsonText(post);
  },
  insert: (db, row) => slugChecked(insertPost(db, row)),
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
  recordChange: async (db, siteId, at, counted, postId) => {
    const [moved] = counted
      ? await namedQuery<{ version: number }>(db, 'posts_record_counted_change', PG_POST_WRITE_SQL.recordCountedChange, [
          siteId,
          at,
          counted.delta.drafts,
          counted.delta.public,
          counted.delta.unlisted,
          counted.initial.drafts,
          counted.initial.public,
          counted.initial.unlisted,
          postId,
        ])
      : await namedQuery<{ version: number }>(db, 'posts_record_change', PG_POST_WRITE_SQL.recordChange, [siteId, at, postId]);
    if (!moved) throw notFound('site');
    return moved.version;
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
