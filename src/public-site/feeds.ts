import { featureImageOf } from './images.js';
import type { PublicPost, PublicSite } from './types.js';
import { FEED_PATHS, SITEMAP_PATH, indexPath, postUrl, siteUrl } from './urls.js';

// Written by hand rather than with the `feed` package: feed@6 puts titles in CDATA as
// `type="html"` (so a `<script>` in a title becomes markup in Atom readers), turns a literal
// `&amp;` in text into `&`, leaves `<` unescaped in Atom category attributes (invalid XML) and
// writes JSON Feed 1.0, not 1.1.

/** RSS 2.0 with the full body in `content:encoded`; guid is the post UUID (`urn:uuid:`, not a permalink). */
export function rssFeed(site: PublicSite, posts: PublicPost[]): string {
  const items = posts.map((post) => [
    '<item>',
    element('title', post.title),
    element('link', postUrl(site, post.slug)),
    `<guid isPermaLink="false">${escapeXml(postUrn(post))}</guid>`,
    element('pubDate', post.publishedAt.toUTCString()),
    // RSS readers read `description` as HTML: plain text is HTML-escaped before it is XML-escaped.
    post.description === null ? '' : element('description', escapeXml(post.description)),
    element('content:encoded', post.html),
    ...post.tags.map((tag) => element('category', tag)),
    enclosure(site, post, (image) => `<enclosure url="${escapeXml(image.url)}" length="${image.sizeBytes}" type="${image.type}"/>`),
    '</item>',
  ].join(''));
  return xmlDocument([
    '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:content="http://purl.org/rss/1.0/modules/content/">',
    '<channel>',
    element('title', site.name),
    element('link', siteUrl(site, indexPath())),
    element('description', site.description ?? site.name),
    element('language', site.language),
    element('lastBuildDate', feedUpdated(posts).toUTCString()),
    `<atom:link href="${escapeXml(siteUrl(site, FEED_PATHS.rss))}" rel="self" type="application/rss+xml"/>`,
    ...items,
    '</channel>',
    '</rss>',
  ]);
}

/** Atom 1.0: text titles and summaries, HTML content, ids `urn:uuid:<post id>`. */
export function atomFeed(site: PublicSite, posts: PublicPost[]): string {
  const entries = posts.map((post) => [
    '<entry>',
    element('id', postUrn(post)),
    `<title type="text">${escapeXml(post.title)}</title>`,
    link('alternate', 'text/html', postUrl(site, post.slug)),
    element('published', post.publishedAt.toISOString()),
    element('updated', post.updatedAt.toISOString()),
    post.description === null ? '' : `<summary type="text">${escapeXml(post.description)}</summary>`,
    `<content type="html">${escapeXml(post.html)}</content>`,
    ...post.tags.map((tag) => `<category term="${escapeXml(tag)}"/>`),
    enclosure(site, post, (image) => `<link rel="enclosure" type="${image.type}" length="${image.sizeBytes}" href="${escapeXml(image.url)}"/>`),
    '</entry>',
  ].join(''));
  return xmlDocument([
    `<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="${escapeXml(site.language)}">`,
    element('id', `urn:uuid:${site.id}`),
    `<title type="text">${escapeXml(site.name)}</title>`,
    site.description === null ? '' : `<subtitle type="text">${escapeXml(site.description)}</subtitle>`,
    element('updated', feedUpdated(posts).toISOString()),
    `<author>${element('name', site.name)}</author>`,
    link('alternate', 'text/html', siteUrl(site, indexPath())),
    link('self', 'application/atom+xml', siteUrl(site, FEED_PATHS.atom)),
    ...entries,
    '</feed>',
  ]);
}

/** JSON Feed 1.1; item ids are the post UUIDs. */
export function jsonFeed(site: PublicSite, posts: PublicPost[]): string {
  return JSON.stringify({
    version: 'https://jsonfeed.org/version/1.1',
    title: site.name,
    home_page_url: siteUrl(site, indexPath()),
    feed_url: siteUrl(site, FEED_PATHS.json),
    ...(site.description === null ? {} : { description: site.description }),
    language: site.language,
    authors: [{ name: site.name }],
    items: posts.map((post) => ({
      id: post.id,
      url: postUrl(site, post.slug),
      title: post.title,
      content_html: post.html,
      ...(post.description === null ? {} : { summary: post.description }),
      date_published: post.publishedAt.toISOString(),
      date_modified: post.updatedAt.toISOString(),
      tags: post.tags,
      ...(post.featureImage ? { image: featureImageOf(site, post)!.share.url } : {}),
    })),
  });
}

export interface SitemapEntry {
  /** Absolute, e.g. `postUrl(site, slug)`. */
  url: string;
  lastmod: Date;
}

/** The index page (last modified with the newest entry) followed by the given URLs (tag and category pages are left out). */
export function sitemapXml(site: PublicSite, entries: SitemapEntry[]): string {
  const home = { url: siteUrl(site, indexPath()), lastmod: entries.length > 0 ? newest(entries.map((entry) => entry.lastmod)) : null };
  return xmlDocument([
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...[home, ...entries].map(({ url, lastmod }) => `<url>${element('loc', url)}${lastmod ? element('lastmod', lastmod.toISOString()) : ''}</url>`),
    '</urlset>',
  ]);
}

/** Allows everything and points at the site's sitemap. */
export function robotsTxt(site: PublicSite): string {
  return `User-agent: *\nAllow: /\n\nSitemap: ${siteUrl(site, SITEMAP_PATH)}\n`;
}

/** Text for XML content and attribute values; drops characters XML 1.0 cannot carry at all (they would make the whole feed unparseable). */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** The feature image's element in a feed entry ('' without one). */
function enclosure(site: PublicSite, post: PublicPost, write: (image: { url: string; type: string; sizeBytes: number }) => string): string {
  const image = featureImageOf(site, post);
  return image ? write(image.share) : '';
}

function element(name: string, text: string): string {
  return `<${name}>${escapeXml(text)}</${name}>`;
}

function link(rel: string, type: string, href: string): string {
  return `<link rel="${rel}" type="${type}" href="${escapeXml(href)}"/>`;
}

function xmlDocument(lines: string[]): string {
  return ['<?xml version="1.0" encoding="utf-8"?>', ...lines.filter((line) => line !== '')].join('\n') + '\n';
}

function postUrn(post: PublicPost): string {
  return `urn:uuid:${post.id}`;
}

/** The newest `updatedAt`; the epoch for an empty feed, so the same posts always give the same bytes (and ETag). */
function feedUpdated(posts: PublicPost[]): Date {
  return newest(posts.map((post) => post.updatedAt));
}

function newest(dates: Date[]): Date {
  // A loop, not Math.max(...dates): a sitemap may hold more dates than a call has arguments.
  return new Date(dates.reduce((max, date) => Math.max(max, date.getTime()), 0));
}
