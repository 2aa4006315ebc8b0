import { and, count, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { postSlugRedirects, posts, type PostRow, type Site } from '../db/schema.js';
import { findSiteByHandle, findSiteByHost } from '../sites/settings.js';
import { publicPost, PublicSiteQueries, renderedOf, type ListQuery, type PublishedPage, type SlugLookup } from './public-common.js';
import type { PublicPost } from './types.js';

export { FEED_SIZE, PublicSiteQueries, type ListQuery, type PublishedPage, type SlugLookup } from './public-common.js';

// Readers see posts out of draft: public ones in lists and feeds, unlisted ones by URL only.
const published = eq(posts.isDraft, false);
const listed = and(published, eq(posts.visibility, 'public'))!;

/** The public site's queries on SQLite (see PublicSiteQueries; pg-public.ts is PostgreSQL's). */
export class PublicSiteService extends PublicSiteQueries {
  constructor(
    private readonly db: Executor,
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
    if (query.topic?.kind === 'tag') filters.push(sql`exists (select 1 from json_each(${posts.tags}) where slugify(json_each.value) = ${query.topic.slug})`);
    if (query.topic?.kind === 'category') filters.push(sql`slugify(${posts.category}) = ${query.topic.slug}`);
    const where = and(...filters);
    const total = this.db.select({ n: count() }).from(posts).where(where).get()!.n;
    const rows = this.db
      .select()
      .from(posts)
      .where(where)
      .orderBy(desc(posts.publishedAt), desc(sql`rowid`))
      .limit(query.limit)
      .offset((query.page - 1) * query.limit)
      .all();
    return { posts: rows.map((row) => this.toPublic(row)), total };
  }

  async bySlug(siteId: string, slug: string): Promise<SlugLookup> {
    const row = this.db
      .select()
      .from(posts)
      .where(and(eq(posts.siteId, siteId), eq(posts.slug, slug), published))
      .get();
    if (row) return { post: this.toPublic(row) };
    const moved = this.db
      .select({ slug: posts.slug })
      .from(postSlugRedirects)
      .innerJoin(posts, eq(posts.id, postSlugRedirects.postId))
      .where(and(eq(postSlugRedirects.siteId, siteId), eq(postSlugRedirects.slug, slug), published))
      .get();
    return moved ? { movedTo: moved.slug } : null;
  }

  async sitemap(siteId: string): Promise<{ slug: string; updatedAt: Date }[]> {
    return this.db
      .select({ slug: posts.slug, updatedAt: posts.updatedAt })
      .from(posts)
      .where(and(eq(posts.siteId, siteId), listed))
      .orderBy(desc(posts.publishedAt))
      .all();
  }

  /**
   * The reader's view of a post. Its HTML is rendered once per version of the post and stored
   * with it (a content edit clears it); only the first view of a version pays for Markdown.
   */
  private toPublic(row: PostRow): PublicPost {
    const { html, readingTime, stored } = renderedOf(row);
    if (!stored) {
      this.db
        .update(posts)
        .set({ html, readingTime })
        .where(and(eq(posts.id, row.id), eq(posts.updatedAt, row.updatedAt), or(isNull(posts.html), isNull(posts.readingTime))))
        .run();
    }
    return publicPost(row, html, readingTime);
  }
}
