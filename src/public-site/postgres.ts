import type { SQL } from 'drizzle-orm';
import { postSlugRedirects, posts } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { writesRefusedForNow } from '../errors.js';
import type { PublicSitePort, Topic } from './port.js';
import { and, count, desc, eq, isNull, or, sql } from '../db/orm.js';

const published = eq(posts.isDraft, false);
const listed = and(published, eq(posts.visibility, 'public'))!;

/** Listed posts of the site, with the topic: tags matched through jsonb_array_elements_text and the same slugify() as SQLite's. */
function listedWhere(siteId: string, topic: Topic | undefined): SQL {
  const ofSite = and(eq(posts.siteId, siteId), listed)!;
  if (topic?.kind === 'tag') return and(ofSite, sql`exists (select 1 from jsonb_array_elements_text(${posts.tags}) as tag(name) where slugify(tag.name) = ${topic.slug})`)!;
  if (topic?.kind === 'category') return and(ofSite, sql`slugify(${posts.category}) = ${topic.slug}`)!;
  return ofSite;
}

/** The public site's port on PostgreSQL. */
export const postgresPublicSite: AsyncAdapter<PublicSitePort, PgExecutor> = {
  listed: async (tx, siteId, topic, limit, offset) => {
    const where = listedWhere(siteId, topic);
    // Both at once: outside a transaction each has a connection of its own.
    const [[counted], rows] = await Promise.all([
      tx.select({ n: count() }).from(posts).where(where),
      tx.select().from(posts).where(where).orderBy(desc(posts.publishedAt), desc(sql`rowid`)).limit(limit).offset(offset),
    ]);
    return { rows, total: counted!.n };
  },
  published: async (tx, siteId, slug) => (await tx.select().from(posts).where(and(eq(posts.siteId, siteId), eq(posts.slug, slug), published)))[0],
  movedTo: async (tx, siteId, slug) => {
    const [moved] = await tx
      .select({ slug: posts.slug })
      .from(postSlugRedirects)
      .innerJoin(posts, eq(posts.id, postSlugRedirects.postId))
      .where(and(eq(postSlugRedirects.siteId, siteId), eq(postSlugRedirects.slug, slug), published));
    return moved?.slug;
  },
  sitemap: (tx, siteId) =>
    tx
      .select({ slug: posts.slug, updatedAt: posts.updatedAt })
      .from(posts)
      .where(and(eq(posts.siteId, siteId), listed))
      .orderBy(desc(posts.publishedAt)),
  // As on SQLite (writesRefusedForNow). A read runs on the pool, outside any transaction: the
  // failed statement spoils nothing.
  keepRendered: async (tx, row, html, readingTime) => {
    try {
      await tx
        .update(posts)
        .set({ html, readingTime })
        .where(and(eq(posts.id, row.id), eq(posts.updatedAt, row.updatedAt), or(isNull(posts.html), isNull(posts.readingTime))));
    } catch (error) {
      if (!writesRefusedForNow(error)) throw error;
    }
  },
};
