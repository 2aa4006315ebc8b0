import { and, count, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { postSlugRedirects, posts, type PostRow, type Site } from '../db/schema.js';
import { findSiteByHandle, findSiteByHost } from '../sites/settings.js';
import { renderMarkdown, tagSlug } from './markdown.js';
import type { PublicPost, PublicSite } from './types.js';
import type { ListKind } from './urls.js';

/** Feeds carry the newest posts, this many. */
export const FEED_SIZE = 20;

export interface PublishedPage {
  posts: PublicPost[];
  total: number;
}

/** A post by its slug: the post, or where a published post's old slug now points. */
export type SlugLookup = { post: PublicPost } | { movedTo: string } | null;

// Readers see posts out of draft: public ones in lists and feeds, unlisted ones by URL only.
const published = eq(posts.isDraft, false);
const listed = and(published, eq(posts.visibility, 'public'))!;

/**
 * What readers may see of a site, whatever the address they use: published public posts in
 * lists, feeds and the sitemap; unlisted posts by their URL only; drafts never.
 */
export class PublicSiteService {
  constructor(
    private readonly db: Executor,
    private readonly publicBaseUrl: string,
  ) {}

  async byHandle(handle: string): Promise<Site | undefined> {
    return findSiteByHandle(this.db, handle);
  }

  /** The site whose own `url` is on this host, if any. */
  async byHost(host: string | undefined): Promise<Site | undefined> {
    return host ? findSiteByHost(this.db, host) : undefined;
  }

  /**
   * The site as its pages address it: links under `basePath` on this request, absolute URLs
   * under its own `url`, else under PUBLIC_BASE_URL + /sites/<handle>.
   */
  view(site: Site, basePath: string): PublicSite {
    return {
      id: site.id,
      name: site.name,
      description: site.description,
      language: site.language,
      handle: site.handle,
      baseUrl: site.url ?? `${this.publicBaseUrl}/sites/${site.handle}`,
      basePath,
      postsPerPage: site.postsPerPage,
    };
  }

  /** Published public posts, newest first, optionally those with a tag or category (by its slug). */
  async list(siteId: string, query: { page: number; limit: number; topic?: { kind: ListKind; slug: string } }): Promise<PublishedPage> {
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

  /** The name a tag or category is written with on the site's newest post that has it. */
  async topicName(siteId: string, kind: ListKind, slug: string): Promise<string | null> {
    const { posts: [newest] } = await this.list(siteId, { page: 1, limit: 1, topic: { kind, slug } });
    if (!newest) return null;
    return kind === 'category' ? newest.category : (newest.tags.find((tag) => tagSlug(tag) === slug) ?? null);
  }

  /** A published post (public or unlisted) by its slug, or the current slug an old one moved to. */
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

  /** Every published public post, for the sitemap: slug and last change. */
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
    let { html, readingTime } = row;
    if (html === null || readingTime === null) {
      ({ html, readingTime } = renderMarkdown(row.content ?? ''));
      this.db
        .update(posts)
        .set({ html, readingTime })
        .where(and(eq(posts.id, row.id), eq(posts.updatedAt, row.updatedAt), or(isNull(posts.html), isNull(posts.readingTime))))
        .run();
    }
    return {
      id: row.id,
      slug: row.slug,
      title: row.title,
      description: row.description,
      html,
      category: row.category,
      tags: row.tags,
      authorId: row.authorId,
      publishedAt: row.publishedAt!,
      updatedAt: row.updatedAt,
      readingTime,
      unlisted: row.visibility === 'unlisted',
    };
  }
}
