import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Site } from '../db/schema.js';
import { atomFeed, jsonFeed, robotsTxt, rssFeed, sitemapXml } from './feeds.js';
import { FEED_SIZE, type PublicSiteQueries } from './public-common.js';
import type { SiteRenderer } from './render.js';
import type { PublicSite } from './types.js';
import { FEED_PATHS, ICON_PATH, SITEMAP_PATH, STYLESHEET_PATH, indexPath, listPath, postPath, postUrl, redirectPath, type ListKind } from './urls.js';

/** A public response, rendered once and kept until the site's content changes. */
export interface PublicResponse {
  status: 200 | 301 | 404;
  contentType: string;
  /** Encoded once: a cached sitemap of 10,000 posts is not re-encoded on every send. */
  body: Buffer;
  /** Where a 301 points (a path on this request's host). */
  location?: string;
  etag: string;
  lastModified: Date;
}

const HTML = 'text/html; charset=utf-8';
const MAX_PAGE_NUMBER = 100_000;
const CACHE_ENTRIES = 2000;

type Rendered = Omit<PublicResponse, 'etag' | 'lastModified' | 'body'> & { body: string };

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
  private readonly cache = new Map<string, PublicResponse>();
  private readonly assets: ReadonlyMap<string, PublicResponse>;

  constructor(
    private readonly service: PublicSiteQueries,
    private readonly renderer: SiteRenderer,
    files: { stylesheet: string; icon: string },
  ) {
    this.assets = new Map([
      [STYLESHEET_PATH, asset(files.stylesheet, 'text/css; charset=utf-8')],
      [ICON_PATH, asset(files.icon, 'image/svg+xml')],
    ]);
  }

  /** The pages' icon, also for browsers that ask for /favicon.ico on their own. */
  get icon(): PublicResponse {
    return this.assets.get(ICON_PATH)!;
  }

  /** Answers `path` (after the site's base path, with a leading `/`) for `site` seen under `basePath`. */
  async page(site: Site, basePath: string, path: string): Promise<PublicResponse> {
    const fixed = this.assets.get(path);
    if (fixed) return fixed;
    return this.cached(`${site.id}|${site.contentVersion}|${basePath}|${path}`, site, () => this.render(this.service.view(site, basePath), path));
  }

  /** The 404 page for an address that names no site. */
  async noSite(): Promise<PublicResponse> {
    return this.cached('|no-site', null, async () => ({ status: 404, contentType: HTML, body: await this.renderer.notFound(null) }));
  }

  /**
   * Any answer derived from a site's public content (the content API's too), kept per content
   * version: `key` must name the site's id and version.
   */
  async cached(key: string, site: Site | null, produce: () => Promise<Rendered>): Promise<PublicResponse> {
    const hit = this.cache.get(key);
    if (hit) {
      // Most recently used last: the oldest entry is the first evicted.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const rendered = await produce();
    const body = Buffer.from(rendered.body);
    const response = { ...rendered, body, etag: etagOf(body), lastModified: site?.contentUpdatedAt ?? site?.createdAt ?? new Date(0) };
    this.cache.set(key, response);
    if (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return response;
  }

  private async render(site: PublicSite, path: string): Promise<Rendered> {
    const redirect = (to: string): Rendered => ({ status: 301, contentType: HTML, body: '', location: redirectPath(site.basePath, to) });
    const notFound = async (): Promise<Rendered> => ({ status: 404, contentType: HTML, body: await this.renderer.notFound(site) });

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
      if (pageText !== undefined && page === 1) return redirect(listPath(kind, slug));
      if (page < 1 || page > MAX_PAGE_NUMBER) return notFound();
      const name = await this.service.topicName(site.id, kind, slug);
      if (!name) return notFound();
      const { posts, total } = await this.service.list(site.id, { page, limit: site.postsPerPage, topic: { kind, slug } });
      const pages = Math.max(1, Math.ceil(total / site.postsPerPage));
      if (page > pages) return notFound();
      return { status: 200, contentType: HTML, body: await this.renderer.list(site, { kind, name, slug }, posts, { page, pages }) };
    }

    const post = /^\/([a-z0-9-]{1,80})\/$/.exec(path);
    if (post) {
      const found = await this.service.bySlug(site.id, post[1]);
      if (!found) return notFound();
      if ('movedTo' in found) return redirect(postPath(found.movedTo));
      return { status: 200, contentType: HTML, body: await this.renderer.post(site, found.post) };
    }

    // A page address without its trailing slash (not a file name) is the page's: segments of
    // [a-z0-9-] only, none empty (`//x` is no page of ours, and never a redirect).
    if (/^(?:\/[a-z0-9-]+)+$/.test(path)) return redirect(`${path}/`);
    return notFound();
  }

  private async index(site: PublicSite, page: number, notFound: () => Promise<Rendered>): Promise<Rendered> {
    const { posts, total } = await this.service.list(site.id, { page, limit: site.postsPerPage });
    const pages = Math.max(1, Math.ceil(total / site.postsPerPage));
    if (page > pages) return notFound();
    return { status: 200, contentType: HTML, body: await this.renderer.index(site, posts, { page, pages }) };
  }

  private async feedPosts(site: PublicSite) {
    return (await this.service.list(site.id, { page: 1, limit: FEED_SIZE })).posts;
  }
}
