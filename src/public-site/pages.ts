import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { CommentRow, Site } from '../db/schema.js';
import { commentThreads, type CommentFormState, type CommentsSection } from '../comments/section.js';
import { atomFeed, jsonFeed, robotsTxt, rssFeed, sitemapXml } from './feeds.js';
import type { NoticeContent, SiteRenderer } from './render.js';
import { FEED_SIZE, type PublicSite as PublicSiteStore } from './store.js';
import type { PublicPost, PublicSite } from './types.js';
import { FEED_PATHS, ICON_PATH, SITEMAP_PATH, STYLESHEET_PATH, indexPath, listPath, postPath, postUrl, redirectPath, type ListKind } from './urls.js';

/** A public response, rendered once and kept until the site's content changes. */
export interface PublicResponse {
  status: 200 | 301 | 400 | 404 | 429;
  contentType: string;
  /** Encoded once: a cached sitemap of 10,000 posts is not re-encoded on every send. */
  body: Buffer;
  /** Where a 301 points (a path on this request's host). */
  location?: string;
  etag: string;
  lastModified: Date;
  /** What a reader's GET of this answer counts a view of (analytics): a post page, or an index, tag or category page. */
  view?: PageView;
}

/** The page a response counts a view of. */
export interface PageView {
  siteId: string;
  /** The site's time zone: the day the view counts on. */
  timeZone: string;
  /** A post's id, or the site-relative path of an index, tag or category page. */
  page: string;
  /** The site's own hosts: a referrer there is direct / internal. */
  hosts: string[];
}

const HTML = 'text/html; charset=utf-8';
const MAX_PAGE_NUMBER = 100_000;
/** Answers kept in all; each site keeps at most SITE_CACHE_ENTRIES of them. */
const CACHE_ENTRIES = 2000;
const SITE_CACHE_ENTRIES = 200;

/**
 * `keep: false`: an answer for any path (a 404, a trailing-slash redirect) is never kept.
 * `counts`: the page a reader's view of it counts for (a post's id or a path).
 */
type Rendered = Omit<PublicResponse, 'etag' | 'lastModified' | 'body' | 'view'> & { body: string; keep?: false; counts?: string };

/**
 * Answers kept per site, least recently used first out, bounded per site and in all: a site
 * whose readers (or a stranger) ask for many addresses evicts its own answers first, never the
 * pages of the other sites, and a site's answers under an older content version go at once.
 */
export class SiteAnswerCache<T> {
  private readonly sites = new Map<string, { version: number; entries: Map<string, T> }>();
  private total = 0;

  constructor(
    private readonly maxEntries = CACHE_ENTRIES,
    private readonly maxPerSite = SITE_CACHE_ENTRIES,
  ) {}

  get size(): number {
    return this.total;
  }

  /** How many answers `siteId` has kept (tests). */
  sizeOf(siteId: string): number {
    return this.sites.get(siteId)?.entries.size ?? 0;
  }

  get(siteId: string, version: number, key: string): T | undefined {
    const bucket = this.sites.get(siteId);
    if (!bucket || bucket.version !== version) return undefined;
    const hit = bucket.entries.get(key);
    if (hit === undefined) return undefined;
    // Most recently used last, the site's bucket too: the oldest are evicted first.
    bucket.entries.delete(key);
    bucket.entries.set(key, hit);
    this.sites.delete(siteId);
    this.sites.set(siteId, bucket);
    return hit;
  }

  set(siteId: string, version: number, key: string, value: T): void {
    let bucket = this.sites.get(siteId);
    if (bucket && bucket.version !== version) {
      // A late answer read under an older version is not kept over the newer ones.
      if (version < bucket.version) return;
      this.total -= bucket.entries.size;
      bucket = undefined;
    }
    this.sites.delete(siteId);
    bucket ??= { version, entries: new Map() };
    this.sites.set(siteId, bucket);
    if (!bucket.entries.has(key)) this.total++;
    bucket.entries.delete(key);
    bucket.entries.set(key, value);
    if (bucket.entries.size > this.maxPerSite) this.evictFrom(siteId, bucket);
    // Past the overall bound: the least recently used site gives up its oldest answer.
    while (this.total > this.maxEntries) {
      const [oldestSite, oldest] = this.sites.entries().next().value!;
      this.evictFrom(oldestSite, oldest);
    }
  }

  private evictFrom(siteId: string, bucket: { entries: Map<string, T> }): void {
    bucket.entries.delete(bucket.entries.keys().next().value!);
    this.total--;
    if (bucket.entries.size === 0) this.sites.delete(siteId);
  }
}

/**
 * The site as its pages address it: links under `basePath` on this request, absolute URLs
 * under its own `url`, else under `publicBaseUrl` (PUBLIC_BASE_URL) + /sites/<handle>.
 */
export function siteView(site: Site, basePath: string, publicBaseUrl: string): PublicSite {
  return {
    id: site.id,
    name: site.name,
    description: site.description,
    language: site.language,
    handle: site.handle,
    // A domain not proven yet is no address of the site's: links stay on the platform.
    baseUrl: site.url !== null && site.domainToken === null ? site.url : `${publicBaseUrl}/sites/${site.handle}`,
    basePath,
    postsPerPage: site.postsPerPage,
    commentsMode: site.commentsMode,
    newsletter: site.newsletterEnabled,
  };
}

/** The hosts a site answers on: its own domain's and that of its platform address. */
function siteHosts(site: Site, view: PublicSite): string[] {
  const hosts = new Set<string>();
  for (const url of [site.url, view.baseUrl]) if (url && URL.canParse(url)) hosts.add(new URL(url).hostname.toLowerCase());
  return [...hosts];
}

const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('base64url')}"`;

/** A file of the pages' own (stylesheet, icon), the same for every site. */
function asset(file: string, contentType: string): PublicResponse {
  const body = fs.readFileSync(file);
  return { status: 200, contentType, body, etag: etagOf(body), lastModified: new Date(fs.statSync(file).mtimeMs) };
}

/**
 * The public pages, feeds and sitemap of every site, addressed by a site-relative path. Each
 * answer is rendered once per version of the site's content and kept in a bounded cache; any
 * write to the site moves its version (see touchSiteContent), so no stale page outlives it.
 */
export class PublicPages {
  private readonly cache = new SiteAnswerCache<PublicResponse>();
  private readonly assets: ReadonlyMap<string, PublicResponse>;
  private approvedComments: ((postId: string) => Promise<CommentRow[]>) | null = null;

  constructor(
    private readonly service: PublicSiteStore,
    private readonly renderer: SiteRenderer,
    files: { stylesheet: string; icon: string },
    /** PUBLIC_BASE_URL: where sites without a proven domain of their own are. */
    private readonly publicBaseUrl: string,
  ) {
    this.assets = new Map([
      [STYLESHEET_PATH, asset(files.stylesheet, 'text/css; charset=utf-8')],
      [ICON_PATH, asset(files.icon, 'image/svg+xml')],
    ]);
  }

  /** The site as its pages address it (see siteView). */
  view(site: Site, basePath: string): PublicSite {
    return siteView(site, basePath, this.publicBaseUrl);
  }

  /** The pages' icon, also for browsers that ask for /favicon.ico on their own. */
  get icon(): PublicResponse {
    return this.assets.get(ICON_PATH)!;
  }

  /** Answers `path` (after the site's base path, with a leading `/`) for `site` seen under `basePath`. */
  async page(site: Site, basePath: string, path: string): Promise<PublicResponse> {
    const fixed = this.assets.get(path);
    if (fixed) return fixed;
    const view = this.view(site, basePath);
    return this.cached(`page|${basePath}|${path}`, site, () => this.render(view, path), (page) => ({ siteId: site.id, timeZone: site.timeZone, page, hosts: siteHosts(site, view) }));
  }

  /** A post's preview page (a draft, or a published post with its pending edits), rendered afresh, kept nowhere. */
  async preview(site: Site, post: PublicPost): Promise<string> {
    return this.renderer.post(this.view(site, `/sites/${site.handle}`), post, { preview: true });
  }

  /** A page of the site that says one thing (a notice, a confirmation with its button), rendered afresh, kept nowhere. */
  async notice(site: Site, basePath: string, content: NoticeContent): Promise<string> {
    return this.renderer.notice(this.view(site, basePath), content);
  }

  /** The 404 page for an address that names no site. */
  async noSite(): Promise<PublicResponse> {
    return this.cached('no-site', null, async () => ({ status: 404, contentType: HTML, body: await this.renderer.notFound(null) }));
  }

  /**
   * Any answer derived from a site's public content (the content API's too), kept under the
   * site's current content version: `key` names the answer within the site (a normalised path,
   * and only the parameters the route reads). Answers marked `keep: false` are not kept.
   */
  async cached(key: string, site: Site | null, produce: () => Promise<Rendered>, viewOf?: (page: string) => PageView): Promise<PublicResponse> {
    const siteId = site?.id ?? '';
    const version = site?.contentVersion ?? 0;
    const hit = this.cache.get(siteId, version, key);
    if (hit) return hit;
    const { keep, counts, ...rendered } = await produce();
    const body = Buffer.from(rendered.body);
    const response: PublicResponse = { ...rendered, body, etag: etagOf(body), lastModified: site?.contentUpdatedAt ?? site?.createdAt ?? new Date(0) };
    if (counts !== undefined && viewOf) response.view = viewOf(counts);
    if (keep !== false) this.cache.set(siteId, version, key, response);
    return response;
  }

  /** Where post pages find their approved comments (the comments plugin says). */
  useComments(source: (postId: string) => Promise<CommentRow[]>): void {
    this.approvedComments = source;
  }

  private async commentsOf(site: PublicSite, post: PublicPost, form: CommentFormState): Promise<CommentsSection | null> {
    if (site.commentsMode === 'off' || !this.approvedComments) return null;
    const items = commentThreads(await this.approvedComments(post.id));
    const count = items.reduce((sum, item) => sum + 1 + item.replies.length, 0);
    return { count, items, state: post.commentsEnabled ? 'open' : 'closed', form };
  }

  /**
   * A post page showing the comment form's state (a notice after a comment was sent, or its
   * problems beside what was typed): rendered for this request only, never kept. Null when the
   * slug names no post readers can see.
   */
  async postWithForm(site: Site, basePath: string, slug: string, form: CommentFormState, status: 200 | 400 | 429 = 200): Promise<(PublicResponse & { post: PublicPost }) | null> {
    const view = this.view(site, basePath);
    const found = await this.service.bySlug(site.id, slug);
    if (!found || !('post' in found)) return null;
    const body = Buffer.from(await this.renderer.post(view, found.post, { comments: await this.commentsOf(view, found.post, form) }));
    return { status, contentType: HTML, body, etag: etagOf(body), lastModified: site.contentUpdatedAt ?? site.createdAt, post: found.post };
  }

  /** Answers kept for `siteId` (tests). */
  keptFor(siteId: string): number {
    return this.cache.sizeOf(siteId);
  }

  private async render(site: PublicSite, path: string): Promise<Rendered> {
    const redirect = (to: string): Rendered => ({ status: 301, contentType: HTML, body: '', location: redirectPath(site.basePath, to) });
    // Any path can be a 404: not kept, or strangers could fill the cache with them.
    const notFound = async (): Promise<Rendered> => ({ status: 404, contentType: HTML, body: await this.renderer.notFound(site), keep: false });

    switch (path) {
      case '/':
        return this.index(site, 1, notFound);
      case FEED_PATHS.rss:
        return { status: 200, contentType: 'application/rss+xml; charset=utf-8', body: rssFeed(site, await this.feedPosts(site)) };
      case FEED_PATHS.atom:
        return { status: 200, contentType: 'application/atom+xml; charset=utf-8', body: atomFeed(site, await this.feedPosts(site)) };
      case FEED_PATHS.json:
        return { status: 200, contentType: 'application/feed+json; charset=utf-8', body: jsonFeed(site, await this.feedPosts(site)) };
      case SITEMAP_PATH: {
        const entries = (await this.service.sitemap(site.id)).map((post) => ({ url: postUrl(site, post.slug), lastmod: post.updatedAt }));
        return { status: 200, contentType: 'application/xml; charset=utf-8', body: sitemapXml(site, entries) };
      }
      case '/robots.txt':
        return { status: 200, contentType: 'text/plain; charset=utf-8', body: robotsTxt(site) };
    }

    const indexPage = /^\/page\/(\d{1,9})\/$/.exec(path);
    if (indexPage) {
      const page = Number(indexPage[1]);
      if (page === 1) return redirect(indexPath(1));
      return page < 1 || page > MAX_PAGE_NUMBER ? notFound() : this.index(site, page, notFound);
    }

    const topic = /^\/(tag|category)\/([a-z0-9-]{1,80})\/(?:page\/(\d{1,9})\/)?$/.exec(path);
    if (topic) {
      const [, kind, slug, pageText] = topic as unknown as [string, ListKind, string, string | undefined];
      const page = pageText === undefined ? 1 : Number(pageText);
      // Not kept: the slug is not looked up first, so any slug would take a place.
      if (pageText !== undefined && page === 1) return { ...redirect(listPath(kind, slug)), keep: false };
      if (page < 1 || page > MAX_PAGE_NUMBER) return notFound();
      const name = await this.service.topicName(site.id, kind, slug);
      if (!name) return notFound();
      const { posts, total } = await this.service.list(site.id, { page, limit: site.postsPerPage, topic: { kind, slug } });
      const pages = Math.max(1, Math.ceil(total / site.postsPerPage));
      if (page > pages) return notFound();
      return { status: 200, contentType: HTML, body: await this.renderer.list(site, { kind, name, slug }, posts, { page, pages }), counts: path };
    }

    const post = /^\/([a-z0-9-]{1,80})\/$/.exec(path);
    if (post) {
      const found = await this.service.bySlug(site.id, post[1]);
      if (!found) return notFound();
      if ('movedTo' in found) return redirect(postPath(found.movedTo));
      return { status: 200, contentType: HTML, body: await this.renderer.post(site, found.post, { comments: await this.commentsOf(site, found.post, {}) }), counts: found.post.id };
    }

    // A page address without its trailing slash (not a file name) is the page's: segments of
    // [a-z0-9-] only, none empty (`//x` is no page of ours, and never a redirect).
    if (/^(?:\/[a-z0-9-]+)+$/.test(path)) return { ...redirect(`${path}/`), keep: false };
    return notFound();
  }

  private async index(site: PublicSite, page: number, notFound: () => Promise<Rendered>): Promise<Rendered> {
    const { posts, total } = await this.service.list(site.id, { page, limit: site.postsPerPage });
    const pages = Math.max(1, Math.ceil(total / site.postsPerPage));
    if (page > pages) return notFound();
    return { status: 200, contentType: HTML, body: await this.renderer.index(site, posts, { page, pages }), counts: indexPath(page) };
  }

  private async feedPosts(site: PublicSite) {
    return (await this.service.list(site.id, { page: 1, limit: FEED_SIZE })).posts;
  }
}
