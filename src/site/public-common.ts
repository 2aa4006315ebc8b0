import type { PostRow, Site } from '../db/schema.js';
import { renderMarkdown, tagSlug } from './markdown.js';
import type { PublicPost, PublicSite } from './types.js';
import type { ListKind } from './urls.js';

/*
 * What the public site's queries share on both databases (public.ts for SQLite, pg-public.ts
 * for PostgreSQL): the reader's view of sites and posts, and what follows from the lists.
 */

/** Feeds carry the newest posts, this many. */
export const FEED_SIZE = 20;

export interface PublishedPage {
  posts: PublicPost[];
  total: number;
}

/** A post by its slug: the post, or where a published post's old slug now points. */
export type SlugLookup = { post: PublicPost } | { movedTo: string } | null;

export interface ListQuery {
  page: number;
  limit: number;
  topic?: { kind: ListKind; slug: string };
}

/** A post's HTML and reading time, rendered now when a content edit cleared them (stored == false). */
export function renderedOf(row: PostRow): { html: string; readingTime: number; stored: boolean } {
  if (row.html !== null && row.readingTime !== null) return { html: row.html, readingTime: row.readingTime, stored: true };
  return { ...renderMarkdown(row.content ?? ''), stored: false };
}

/** The reader's view of a published post, with its rendered HTML. */
export function publicPost(row: PostRow, html: string, readingTime: number): PublicPost {
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

/**
 * What readers may see of a site, whatever the address they use: published public posts in
 * lists, feeds and the sitemap; unlisted posts by their URL only; drafts never. The queries
 * are each database's; what follows from their answers is here.
 */
export abstract class PublicSiteQueries {
  constructor(private readonly publicBaseUrl: string) {}

  abstract byHandle(handle: string): Promise<Site | undefined>;

  /** The site whose own `url` is on this host, if any. */
  abstract byHost(host: string | undefined): Promise<Site | undefined>;

  /** Published public posts, newest first, optionally those with a tag or category (by its slug). */
  abstract list(siteId: string, query: ListQuery): Promise<PublishedPage>;

  /** A published post (public or unlisted) by its slug, or the current slug an old one moved to. */
  abstract bySlug(siteId: string, slug: string): Promise<SlugLookup>;

  /** Every published public post, for the sitemap: slug and last change. */
  abstract sitemap(siteId: string): Promise<{ slug: string; updatedAt: Date }[]>;

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
      // A domain not proven yet is no address of the site's: links stay on the platform.
      baseUrl: site.url !== null && site.domainToken === null ? site.url : `${this.publicBaseUrl}/sites/${site.handle}`,
      basePath,
      postsPerPage: site.postsPerPage,
    };
  }

  /** The name a tag or category is written with on the site's newest post that has it. */
  async topicName(siteId: string, kind: ListKind, slug: string): Promise<string | null> {
    const { posts: [newest] } = await this.list(siteId, { page: 1, limit: 1, topic: { kind, slug } });
    if (!newest) return null;
    return kind === 'category' ? newest.category : (newest.tags.find((tag) => tagSlug(tag) === slug) ?? null);
  }
}
