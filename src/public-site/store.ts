import type { MediaRow, PostRow, Site } from '../db/schema.js';
import { mediaIdsIn } from '../media/view.js';
import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { renderMarkdown, tagSlug } from './markdown.js';
import type { Topic } from './port.js';
import type { PublicPost } from './types.js';
import type { ListKind } from './urls.js';
// Authors' display names are read through the revisions port (users' names, both databases).
import type {} from '../revisions/port.js';

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
  topic?: Topic;
}

/** The reader's view of a published post, with its rendered HTML. */
function publicPost(row: PostRow, html: string, readingTime: number, images: ReadonlyMap<string, MediaRow>, authors: ReadonlyMap<string, string>): PublicPost {
  const featureImage = row.featureImage === null ? undefined : images.get(row.featureImage);
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    html,
    category: row.category,
    tags: row.tags,
    authorId: row.authorId,
    author: row.authorId === null ? null : (authors.get(row.authorId) ?? null),
    publishedAt: row.publishedAt!,
    updatedAt: row.updatedAt,
    readingTime,
    unlisted: row.visibility === 'unlisted',
    featureImage: featureImage ? { image: featureImage, alt: row.featureImageAlt } : null,
    commentsEnabled: row.commentsEnabled,
  };
}

/**
 * What readers may see of a site, whatever the address they use: published public posts in
 * lists, feeds and the sitemap; unlisted posts by their URL only; drafts never (how its pages
 * address it is PublicPages.view's). Each call reads outside a transaction; the only write is a
 * post's rendered HTML (see toPublic).
 */
export class PublicSite {
  constructor(private readonly db: StepDatabase) {}

  byHandle(handle: string): Promise<Site | undefined> {
    return this.db.read(() => ask('sites', 'byHandle', handle));
  }

  /** The site whose own `url` is on this host, if any. */
  async byHost(host: string | undefined): Promise<Site | undefined> {
    return host ? this.db.read(() => ask('sites', 'byHost', host)) : undefined;
  }

  /** Published public posts, newest first, optionally those with a tag or category (by its slug). */
  list(siteId: string, query: ListQuery): Promise<PublishedPage> {
    return this.db.read(() => this.listSteps(siteId, query));
  }

  private *listSteps(siteId: string, { page, limit, topic }: ListQuery): Steps<PublishedPage> {
    const { rows, total } = yield* ask('publicSite', 'listed', siteId, topic, limit, (page - 1) * limit);
    const images = yield* this.imagesOf(siteId, rows);
    const authors = yield* this.authorsOf(rows);
    const posts: PublicPost[] = [];
    for (const row of rows) posts.push(yield* this.toPublic(row, images, authors));
    return { posts, total };
  }

  /** A published post (public or unlisted) by its slug, or the current slug an old one moved to. */
  bySlug(siteId: string, slug: string): Promise<SlugLookup> {
    return this.db.read(() => this.bySlugSteps(siteId, slug));
  }

  private *bySlugSteps(siteId: string, slug: string): Steps<SlugLookup> {
    const row = yield* ask('publicSite', 'published', siteId, slug);
    if (row) return { post: yield* this.toPublic(row, yield* this.imagesOf(siteId, [row]), yield* this.authorsOf([row])) };
    const movedTo = yield* ask('publicSite', 'movedTo', siteId, slug);
    return movedTo === undefined ? null : { movedTo };
  }

  /** Every published public post, for the sitemap: slug and last change. */
  sitemap(siteId: string): Promise<{ slug: string; updatedAt: Date }[]> {
    return this.db.read(() => ask('publicSite', 'sitemap', siteId));
  }

  /** The name a tag or category is written with on the site's newest post that has it. */
  async topicName(siteId: string, kind: ListKind, slug: string): Promise<string | null> {
    const { posts: [newest] } = await this.list(siteId, { page: 1, limit: 1, topic: { kind, slug } });
    if (!newest) return null;
    return kind === 'category' ? newest.category : (newest.tags.find((tag) => tagSlug(tag) === slug) ?? null);
  }

  /**
   * The reader's view of a post. Its HTML is rendered once per version of the post and stored
   * with it (a content edit clears it); only the first view of a version pays for Markdown.
   */
  private *toPublic(row: PostRow, images: ReadonlyMap<string, MediaRow>, authors: ReadonlyMap<string, string>): Steps<PublicPost> {
    if (row.html !== null && row.readingTime !== null) return publicPost(row, row.html, row.readingTime, images, authors);
    const { html, readingTime } = renderMarkdown(row.content ?? '', images);
    yield* ask('publicSite', 'keepRendered', row, html, readingTime);
    return publicPost(row, html, readingTime, images, authors);
  }

  /**
   * A post as its public page would show it, whatever its state (a draft, or a published post
   * with its pending edits in `row`): for previews. Rendered afresh and kept nowhere; a draft is
   * dated now, the day it would be published.
   */
  preview(siteId: string, row: PostRow, now = new Date()): Promise<PublicPost> {
    return this.db.read(() => this.previewSteps(siteId, { ...row, html: null, publishedAt: row.publishedAt ?? now }));
  }

  private *previewSteps(siteId: string, draft: PostRow): Steps<PublicPost> {
    const images = yield* this.imagesOf(siteId, [draft]);
    const { html, readingTime } = renderMarkdown(draft.content ?? '', images);
    return publicPost(draft, html, readingTime, images, yield* this.authorsOf([draft]));
  }

  /** The display names of the posts' authors, by user id (one question, or none). */
  private *authorsOf(rows: PostRow[]): Steps<ReadonlyMap<string, string>> {
    const ids = [...new Set(rows.map((row) => row.authorId).filter((id): id is string => id !== null))];
    if (ids.length === 0) return new Map();
    const found = yield* ask('revisions', 'displayNames', ids);
    return new Map(found.filter((user) => user.displayName).map((user) => [user.id, user.displayName!]));
  }

  /**
   * The site's images the posts show: their feature images, and those their Markdown shows
   * when it is to be rendered (its images get the variants' `srcset`). One question, or none.
   */
  private *imagesOf(siteId: string, rows: PostRow[]): Steps<ReadonlyMap<string, MediaRow>> {
    const ids = new Set<string>();
    for (const row of rows) {
      if (row.featureImage !== null) ids.add(row.featureImage);
      if (row.html === null && row.content) for (const id of mediaIdsIn(row.content)) ids.add(id);
    }
    if (ids.size === 0) return new Map();
    const found = yield* ask('media', 'byIds', siteId, [...ids]);
    return new Map(found.map((image) => [image.id, image]));
  }
}
