import type { PublicSite } from './types.js';

// Pages are addressed by site-relative paths ('/', '/<slug>/', '/tag/<slug>/page/2/'): prefixed
// with `basePath` they are links for this request, with `baseUrl` the absolute (canonical) URLs.
// Post, tag and category slugs are `[a-z0-9-]`, so paths need no percent-encoding.

export type ListKind = 'tag' | 'category';

export const FEED_PATHS = { rss: '/rss.xml', atom: '/atom.xml', json: '/feed.json' } as const;
export const SITEMAP_PATH = '/sitemap.xml';
export const STYLESHEET_PATH = '/assets/style.css';
export const ICON_PATH = '/assets/favicon.svg';

export function sitePath(site: PublicSite, path: string): string {
  return `${site.basePath}${path}`;
}

export function siteUrl(site: PublicSite, path: string): string {
  return `${site.baseUrl}${path}`;
}

export function postPath(slug: string): string {
  return `/${slug}/`;
}

/** The absolute URL of a post: the `url` of feeds, sitemap, JSON-LD and the content API. */
export function postUrl(site: PublicSite, slug: string): string {
  return siteUrl(site, postPath(slug));
}

/** `/` for page 1, `/page/<n>/` after. */
export function indexPath(page = 1): string {
  return page > 1 ? `/page/${page}/` : '/';
}

/** `/tag/<slug>/` for page 1, `/tag/<slug>/page/<n>/` after (same under `/category/`). */
export function listPath(kind: ListKind, slug: string, page = 1): string {
  const first = `/${kind}/${slug}/`;
  return page > 1 ? `${first}page/${page}/` : first;
}

/**
 * A redirect target on this request's host: always a path. A `Location` starting with `//` or
 * `/\` is a network-path reference a browser opens on another host (`//3232235777/` is
 * http://192.168.1.1/), so leading slashes and backslashes fold into one `/`.
 */
export function redirectPath(basePath: string, path: string): string {
  return `/${`${basePath}${path}`.replace(/^[/\\]+/, '')}`;
}
