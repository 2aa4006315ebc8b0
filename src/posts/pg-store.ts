import { and, count, desc, eq, inArray, max, sql, type SQL } from 'drizzle-orm';
import { postCounts, postSlugRedirects, posts, sites, slugCounters } from '../db/pg-schema.js';
import { isUniqueViolation, type PgExecutor } from '../db/postgres.js';
import { RawJson } from '../json.js';
import { paginateAsync } from '../pagination.js';
import { touchSiteContent } from '../sites/pg-settings.js';
import {
  countChangeOf,
  found,
  POSTGRES_TEXT,
  searchFilters,
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
import { jsonArray, postJsonText, type PostsJsonPage } from './view.js';
import { checkPatch, deleteSteps, insertSteps, runStepsAsync, toggleSteps, updateSteps, type AsyncPostStorage, type WriteSteps } from './write-steps.js';

export type { ListQuery, PostChange, PostInput, PostOrigin, PostPatch, PostRow };

/** Runs inside the transaction of the change it is told about (PostChangeListener of service.ts, on PostgreSQL). */
export type PgPostChangeListener = (tx: PgExecutor, change: PostChange) => Promise<void>;

/**
 * Tries a write that picks a slug gets before giving up: another attempt is needed only when a
 * writer that bypasses this store (see `write`) took the slug between the look and the write.
 */
const SLUG_ATTEMPTS = 5;

const isSlugTaken = (error: unknown) => isUniqueViolation(error, 'posts_site_slug_unique');

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

/**
 * A published post's URL outlives a slug change: the old slug redirects to the post. Its
 * own earlier redirect to the new slug, if any, goes (the slug is live again).
 */
async function keepRedirect(tx: PgExecutor, post: PostRow, newSlug: string, now: Date): Promise<void> {
  await tx.delete(postSlugRedirects).where(and(eq(postSlugRedirects.siteId, post.siteId), eq(postSlugRedirects.slug, newSlug)));
  await tx
    .insert(postSlugRedirects)
    .values({ siteId: post.siteId, slug: post.slug, postId: post.id, createdAt: now })
    .onConflictDoUpdate({ target: [postSlugRedirects.siteId, postSlugRedirects.slug], set: { postId: post.id, createdAt: now } });
}

/** Keeps the site's post counts in the transaction of a change: atomic increments. */
async function countChange(tx: PgExecutor, change: PostChange): Promise<void> {
  const counted = countChangeOf(change);
  if (!counted) return;
  const { delta, initial } = counted;
  await tx
    .insert(postCounts)
    .values({ siteId: change.siteId, ...initial })
    .onConflictDoUpdate({
      target: postCounts.siteId,
      set: {
        drafts: sql`${postCounts.drafts} + ${delta.drafts}`,
        public: sql`${postCounts.public} + ${delta.public}`,
        unlisted: sql`${postCounts.unlisted} + ${delta.unlisted}`,
      },
    });
}

const first = <T>(rows: T[]): T | undefined => rows[0];

/** The answers to a write's questions about one site (see write-steps.ts), inside transaction `db`. */
function siteStorage(db: PgExecutor, siteId: string, changed: (tx: PgExecutor, change: PostChange) => Promise<void>): AsyncPostStorage {
  const ofSite = (...conditions: SQL[]) => and(eq(posts.siteId, siteId), ...conditions);
  return {
    latestCreatedAt: async () => first(await db.select({ latest: max(posts.createdAt) }).from(posts).where(ofSite()))?.latest ?? null,
    slugHolder: async (slug) => first(await db.select({ id: posts.id }).from(posts).where(ofSite(eq(posts.slug, slug))))?.id,
    slugCounter: async (base) =>
      first(
        await db
          .select({ last: slugCounters.last })
          .from(slugCounters)
          .where(and(eq(slugCounters.siteId, siteId), eq(slugCounters.base, base))),
      )?.last,
    highestSuffix: (base) => highestSuffix(db, siteId, base),
    saveSlugCounter: async (base, last) => {
      await db
        .insert(slugCounters)
        .values({ siteId, base, last })
        .onConflictDoUpdate({ target: [slugCounters.siteId, slugCounters.base], set: { last: sql`excluded.last` } });
    },
    slugsStartingWith: (prefix) =>
      db
        .select({ slug: posts.slug, id: posts.id })
        .from(posts)
        .where(ofSite(sql`starts_with(${posts.slug}, ${prefix})`)),
    find: async (postId) => first(await db.select().from(posts).where(ofSite(eq(posts.id, postId)))),
    insert: async (row) => {
      await db.insert(posts).values(row);
    },
    update: async (postId, changes) => {
      await db.update(posts).set(changes).where(eq(posts.id, postId));
    },
    remove: async (postId) => {
      await db.delete(posts).where(eq(posts.id, postId));
    },
    keepRedirect: (post, newSlug, now) => keepRedirect(db, post, newSlug, now),
    changed: (change) => changed(db, change),
  };
}

const hasTag = (tag: string) =>
  sql`exists (select 1 from jsonb_array_elements_text(${posts.tags}) as tag(value) where fold(tag.value) = fold(${tag}))`;

// Newest first, as on SQLite: creation times are unique per site (see nextCreatedAt); `rowid`
// (insertion order, as SQLite's) orders posts created in one millisecond before they were.
const LIST_ORDER = [desc(posts.createdAt), desc(sql`rowid`)];

const listFilter = (siteId: string, query: ListQuery, search = searchFilters(posts, query, hasTag)) => and(eq(posts.siteId, siteId), statusFilter(posts, query.status), ...search);

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
export const pgListPageQuery = (db: PgExecutor, siteId: string, query: ListQuery, offset: number) => listPage(db, listFilter(siteId, query), query.limit, offset);

/**
 * The PostgreSQL twin of PostService (service.ts): the same methods, inputs, results, errors
 * and side effects (content version, counts, slug counters, redirects, listeners), each write
 * in one transaction, its steps shared with SQLite (write-steps.ts).
 *
 * Several instances of the service may write to one database at once, where SQLite has a
 * single writer. Every post write therefore starts by locking its site's row (FOR NO KEY
 * UPDATE): the writes of one site queue up, as on SQLite, so reading the newest creation time,
 * the slug counters and the free slugs then writing stays correct. The lock costs no
 * concurrency: every write moves the site's content version, which locks that row until commit
 * anyway; taking it first only avoids deadlocks and retries. Other sites' writes, and inserts
 * elsewhere that reference the site (jobs, say: a foreign key's lock), do not wait for it.
 * Counts and the content version are atomic increments besides. The unique (site, slug) index
 * stays the last word on slugs: a write that picks a slug runs in a savepoint, and should a
 * writer that bypasses the lock (an import, a script) take the slug meanwhile, it runs again and
 * picks another (or, for a slug asked for, answers 409). Transactions must be READ COMMITTED
 * (the default): each statement then sees what the writers before the lock committed.
 */
export class PgPostStore {
  private readonly listeners: PgPostChangeListener[] = [];
  private readonly kept = new PostJsonCache();

  constructor(private readonly db: PgExecutor) {}

  /**
   * Calls `listener` inside the transaction of every change to a post (create, edit, publish,
   * unpublish, delete), so what it writes (an outbox row, a counter) commits with the change.
   */
  onChange(listener: PgPostChangeListener): void {
    this.listeners.push(listener);
  }

  /** Every change moves the site's content version (public pages are cached per version) and its counts, then tells the listeners. */
  private readonly changed = async (tx: PgExecutor, change: PostChange): Promise<void> => {
    await touchSiteContent(tx, change.siteId, change.at);
    await countChange(tx, change);
    for (const listener of this.listeners) await listener(tx, change);
  };

  /**
   * Runs a write's steps in a transaction of `db` (a savepoint when `db` is one) holding the
   * site's lock; those that pick a slug (`steps` makes them afresh) run in a savepoint of their
   * own, again when the slug was taken meanwhile.
   */
  private write<T>(db: PgExecutor, siteId: string, steps: () => WriteSteps<T>, { picksSlug }: { picksSlug: boolean }): Promise<T> {
    const run = (tx: PgExecutor) => runStepsAsync(steps(), siteStorage(tx, siteId, this.changed));
    return db.transaction(async (tx) => {
      await tx.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).for('no key update');
      if (!picksSlug) return run(tx);
      for (let attempt = 1; ; attempt++) {
        try {
          return await tx.transaction(run);
        } catch (error) {
          if (attempt >= SLUG_ATTEMPTS || !isSlugTaken(error)) throw error;
        }
      }
    });
  }

  create(siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date()): Promise<PostRow> {
    return this.insert(this.db, siteId, input, origin, now);
  }

  /** Inserts inside a caller's transaction (a job committing its post with its own success). */
  insert(tx: PgExecutor, siteId: string, input: PostInput, origin: PostOrigin = {}, now = new Date()): Promise<PostRow> {
    return this.write(tx, siteId, () => insertSteps(siteId, input, origin, now, POSTGRES_TEXT), { picksSlug: true });
  }

  async get(siteId: string, postId: string): Promise<PostRow> {
    return found(first(await this.db.select().from(posts).where(and(eq(posts.id, postId), eq(posts.siteId, siteId)))));
  }

  async getJson(siteId: string, postId: string): Promise<RawJson> {
    return new RawJson(postJsonText(await this.get(siteId, postId)));
  }

  toggle(siteId: string, postId: string, now = new Date()): Promise<PostRow> {
    return this.write(this.db, siteId, () => toggleSteps(siteId, postId, now), { picksSlug: false });
  }

  async update(siteId: string, postId: string, patch: PostPatch, now = new Date()): Promise<PostRow> {
    checkPatch(patch, POSTGRES_TEXT);
    return this.write(this.db, siteId, () => updateSteps(siteId, postId, patch, now), { picksSlug: true });
  }

  delete(siteId: string, postId: string, now = new Date()): Promise<void> {
    return this.write(this.db, siteId, () => deleteSteps(siteId, postId, now), { picksSlug: false });
  }

  async list(siteId: string, query: ListQuery): Promise<PostsJsonPage> {
    // The version first: see PostJsonCache. Every instance keeps its own pages; the version they are kept under is shared.
    const version = first(await this.db.select({ version: sites.contentVersion }).from(sites).where(eq(sites.id, siteId)))?.version ?? 0;
    return this.kept.page(siteId, version, query, async () => {
      const { items, pagination } = await this.listRows(siteId, query);
      return { posts: jsonArray(items.map(postJsonText)), pagination };
    });
  }

  private async listRows(siteId: string, query: ListQuery) {
    // No text here holds U+0000 (PostgreSQL refuses it), so a filter with one matches nothing; as a parameter, it would fail.
    if ([query.tag, query.category, query.q].some((text) => text?.includes('\0'))) {
      return paginateAsync<PostRow>(query.page, query.limit, async () => 0, async () => []);
    }
    const search = searchFilters(posts, query, hasTag);
    const where = listFilter(siteId, query, search);
    return paginateAsync(
      query.page,
      query.limit,
      // Lists by state alone read their total from the counts every write keeps; filters count.
      async () =>
        search.length > 0
          ? first(await this.db.select({ n: count() }).from(posts).where(where))!.n
          : totalOf(first(await this.db.select().from(postCounts).where(eq(postCounts.siteId, siteId))), query.status),
      (offset, limit) => listPage(this.db, where, limit, offset),
    );
  }
}
