import { and, count, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import { postSlugRedirects, posts } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { PostRow, Site } from '../db/schema.js';
import { findSiteByHandle, findSiteByHost } from '../sites/pg-settings.js';
import { publicPost, PublicSiteQueries, renderedOf, type ListQuery, type PublishedPage, type SlugLookup } from './public-common.js';
import type { PublicPost } from './types.js';

// Readers see posts out of draft: public ones in lists and feeds, unlisted ones by URL only.
const published = eq(posts.isDraft, false);
const listed = and(published, eq(posts.visibility, 'public'))!;

/**
 * The public site's queries on PostgreSQL, answering as public.ts does on SQLite: the same
 * posts in the same order (ties broken by `rowid`, insertion order on both), the same topics
 * (tags matched through jsonb_array_elements_text and the same slugify()).
 */
export class PgPublicSiteService extends PublicSiteQueries {
  constructor(
    private readonly db: PgExecutor,
    publicBaseUrl: string,
  ) {
    super(publicBaseUrl);
  }

  async byHandle(handle: string): Promise<Site | undefined> {
    return findSiteByHandle(this.db, handle);
  }

  async byHost(host: string | undefined): Promise<Site | undefined> {
    return host ? findSiteByHost(this.db, host) : undefined;
  }

  async list(siteId: string, query: ListQuery): Promise<PublishedPage> {
    const filters: SQL[] = [eq(posts.siteId, siteId), listed];
    if (query.topic?.kind === 'tag') {
      filters.push(sql`exists (select 1 from jsonb_array_elements_text(${posts.tags}) as tag(name) where slugify(tag.name) = ${query.topic.slug})`);
    }
    if (query.topic?.kind === 'category') filters.push(sql`slugify(${posts.category}) = ${query.topic.slug}`);
    const where = and(...filters);
    const [[counted], rows] = await Promise.all([
      this.db.select({ n: count() }).from(posts).where(where),
      this.db
        .select()
        .from(posts)
        .where(where)
        .orderBy(desc(posts.publishedAt), desc(sql`rowid`))
        .limit(query.limit)
        .offset((query.page - 1) * query.limit),
    ]);
    return { posts: await Promise.all(rows.map((row) => this.toPublic(row))), total: counted!.n };
  }

  async bySlug(siteId: string, slug: string): Promise<SlugLookup> {
    const [row] = await this.db
      .select()
      .from(posts)
      .where(and(eq(posts.siteId, siteId), eq(posts.slug, slug), published));
    if (row) return { post: await this.toPublic(row) };
    const [moved] = await this.db
      .select({ slug: posts.slug })
      .from(postSlugRedirects)
      .innerJoin(posts, eq(posts.id, postSlugRedirects.postId))
      .where(and(eq(postSlugRedirects.siteId, siteId), eq(postSlugRedirects.slug, slug), published));
    return moved ? { movedTo: moved.slug } : null;
  }

  async sitemap(siteId: string): Promise<{ slug: string; updatedAt: Date }[]> {
    return this.db
      .select({ slug: posts.slug, updatedAt: posts.updatedAt })
      .from(posts)
      .where(and(eq(posts.siteId, siteId), listed))
      .orderBy(desc(posts.publishedAt));
  }

  /** The reader's view of a post, its HTML stored on first view of a version as on SQLite. */
  private async toPublic(row: PostRow): Promise<PublicPost> {
    const { html, readingTime, stored } = renderedOf(row);
    if (!stored) {
      await this.db
        .update(posts)
        .set({ html, readingTime })
        .where(and(eq(posts.id, row.id), eq(posts.updatedAt, row.updatedAt), or(isNull(posts.html), isNull(posts.readingTime))));
    }
    return publicPost(row, html, readingTime);
  }
}
