import type { SQL } from 'drizzle-orm';
import { prepared, type Executor } from '../db/sqlite.js';
import { writesRefusedForNow } from '../errors.js';
import { postSlugRedirects, posts } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { PublicSitePort, Topic } from './port.js';
import { and, count, desc, eq, isNull, or, sql } from '../db/orm.js';

const p = (name: string) => sql.placeholder(name);

const published = eq(posts.isDraft, false);
const listed = and(published, eq(posts.visibility, 'public'))!;

/** Listed posts of the site, with a topic of the kind (its slug a placeholder). */
const listedWhere = (kind: Topic['kind'] | 'all'): SQL => {
  const ofSite = and(eq(posts.siteId, p('siteId')), listed)!;
  if (kind === 'tag') return and(ofSite, sql`exists (select 1 from json_each(${posts.tags}) where slugify(json_each.value) = ${p('slug')})`)!;
  if (kind === 'category') return and(ofSite, sql`slugify(${posts.category}) = ${p('slug')}`)!;
  return ofSite;
};

// Every public page asks these: prepared once per connection, one pair per kind of list.
const listStatements = (kind: Topic['kind'] | 'all') => ({
  count: (db: Executor) => db.select({ n: count() }).from(posts).where(listedWhere(kind)).prepare(),
  page: (db: Executor) =>
    db
      .select()
      .from(posts)
      .where(listedWhere(kind))
      .orderBy(desc(posts.publishedAt), desc(sql`rowid`))
      .limit(p('limit'))
      .offset(p('offset'))
      .prepare(),
});
const lists = { all: listStatements('all'), tag: listStatements('tag'), category: listStatements('category') };

const selectPublished = (db: Executor) =>
  db
    .select()
    .from(posts)
    .where(and(eq(posts.siteId, p('siteId')), eq(posts.slug, p('slug')), published))
    .prepare();

const selectMovedTo = (db: Executor) =>
  db
    .select({ slug: posts.slug })
    .from(postSlugRedirects)
    .innerJoin(posts, eq(posts.id, postSlugRedirects.postId))
    .where(and(eq(postSlugRedirects.siteId, p('siteId')), eq(postSlugRedirects.slug, p('slug')), published))
    .prepare();

const selectSitemap = (db: Executor) =>
  db
    .select({ slug: posts.slug, updatedAt: posts.updatedAt })
    .from(posts)
    .where(and(eq(posts.siteId, p('siteId')), listed))
    .orderBy(desc(posts.publishedAt))
    .prepare();

const updateRendered = (db: Executor) =>
  db
    .update(posts)
    .set({ html: sql`${p('html')}`, readingTime: sql`${p('readingTime')}` })
    // `updatedAt` as stored: epoch milliseconds.
    .where(and(eq(posts.id, p('id')), sql`${posts.updatedAt} = ${p('updatedAt')}`, or(isNull(posts.html), isNull(posts.readingTime))))
    .prepare();

/** The public site's port on SQLite. */
export const sqlitePublicSite: SyncAdapter<PublicSitePort, Executor> = {
  listed: (tx, siteId, topic, limit, offset) => {
    const list = lists[topic?.kind ?? 'all'];
    const params = { siteId, slug: topic?.slug };
    return { rows: prepared(tx, list.page).all({ ...params, limit, offset }), total: prepared(tx, list.count).get(params)!.n };
  },
  published: (tx, siteId, slug) => prepared(tx, selectPublished).get({ siteId, slug }),
  movedTo: (tx, siteId, slug) => prepared(tx, selectMovedTo).get({ siteId, slug })?.slug,
  sitemap: (tx, siteId) => prepared(tx, selectSitemap).all({ siteId }),
  // Keeping the HTML saves the next reader the rendering, nothing more: a database that takes no
  // write for now (writesRefusedForNow) must not turn a page view into a 507 or a 503.
  keepRendered: (tx, row, html, readingTime) => {
    try {
      prepared(tx, updateRendered).run({ id: row.id, updatedAt: row.updatedAt.getTime(), html, readingTime });
    } catch (error) {
      if (!writesRefusedForNow(error)) throw error;
    }
  },
};
