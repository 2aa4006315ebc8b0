import t, { type Test } from 'tap';
import Fastify from 'fastify';
import { HtmlValidate } from 'html-validate';
import { parseAtomFeed, parseJsonFeed, parseRssFeed } from 'feedsmith';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { renderMarkdown, tagSlug } from '../../src/public-site/markdown.js';
import { createSiteRenderer, type SiteRenderer } from '../../src/public-site/render.js';
import { atomFeed, jsonFeed, robotsTxt, rssFeed, sitemapXml } from '../../src/public-site/feeds.js';
import { registerSiteViews } from '../../src/public-site/templates.js';
import { postUrl } from '../../src/public-site/urls.js';
import type { PublicPost, PublicSite } from '../../src/public-site/types.js';

const SITE: PublicSite = {
  id: '5b0c1b0e-7c1d-4f7e-9a8b-0c1d2e3f4a5b',
  name: 'Field Notes & <Friends>',
  description: 'Walks, "birds" & <b>weather</b>',
  language: 'en-GB',
  handle: 'field-notes',
  baseUrl: 'http://localhost:3000/sites/field-notes',
  basePath: '/sites/field-notes',
  postsPerPage: 10,
  commentsMode: 'moderated',
};

/** The same site on its own domain: links at the root, canonical on the custom origin. */
const OWN_DOMAIN: PublicSite = { ...SITE, baseUrl: 'https://blog.example.com', basePath: '' };

const HOSTILE_MARKDOWN = [
  '# Intro',
  '<script>alert(1)</script>',
  '[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](&#106;avascript:alert(1)) <javascript:alert(1)> [v](vbscript:msgbox(1)) [d](data:text/html;base64,PHNjcmlwdD4=)',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">click</a>',
  '![a cat <b>](https://img.example.com/cat.png "onerror=alert(1)")',
  '## Intro',
  '# Main',
].join('\n\n');

const hostileBody = renderMarkdown(HOSTILE_MARKDOWN);
const HOSTILE: PublicPost = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  slug: 'tom-jerry-script',
  title: 'Tom & Jerry <script>',
  description: null,
  html: hostileBody.html,
  category: 'Cats & <Mice>',
  tags: ['<b>', '&amp;'],
  authorId: null,
  author: null,
  publishedAt: new Date('2024-05-02T08:30:00.000Z'),
  updatedAt: new Date('2024-05-04T09:00:00.000Z'),
  readingTime: hostileBody.readingTime,
  unlisted: false,
  featureImage: null,
  commentsEnabled: true,
};

const plainBody = renderMarkdown('# Morning\n\nA walk by the river with `binoculars`.\n\n```\ncode that is very long and should scroll horizontally on a phone\n```\n');
const PLAIN: PublicPost = {
  id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  slug: 'river-walk',
  title: 'River walk',
  description: 'Herons at dawn.',
  html: plainBody.html,
  category: null,
  tags: [],
  authorId: 'author-1',
  author: null,
  publishedAt: new Date('2024-04-01T06:00:00.000Z'),
  updatedAt: new Date('2024-04-01T06:00:00.000Z'),
  readingTime: plainBody.readingTime,
  unlisted: false,
  featureImage: null,
  commentsEnabled: true,
};

const NEWEST_FIRST = [HOSTILE, PLAIN];
const validator = new HtmlValidate({ extends: ['html-validate:recommended'] });

async function renderer(t: Test): Promise<SiteRenderer> {
  const app = Fastify();
  t.teardown(() => app.close());
  await registerSiteViews(app);
  await app.ready();
  return createSiteRenderer((template, data) => app.view(template, data));
}

/** Every attribute of every tag, parsed strictly: an unquoted or malformed attribute fails the test. */
function tags(html: string): { name: string; attrs: Map<string, string> }[] {
  const found: { name: string; attrs: Map<string, string> }[] = [];
  for (const match of html.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const attrs = new Map<string, string>();
    const rest = match[2].replace(/\s+([\w:-]+)(?:="([^"]*)")?/g, (_all, name: string, value: string | undefined) => {
      attrs.set(name.toLowerCase(), value ?? '');
      return '';
    });
    if (rest.trim() !== '' && rest.trim() !== '/') throw new Error(`unparsed attributes in ${match[0]}`);
    found.push({ name: match[1].toLowerCase(), attrs });
  }
  return found;
}

function attr(html: string, element: string, key: string, keyValue: string, wanted: string): string | undefined {
  return tags(html).find((tag) => tag.name === element && tag.attrs.get(key) === keyValue)?.attrs.get(wanted);
}

/** Attribute values as a browser reads them: character references decoded, blanks and controls dropped. */
function decoded(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);?/gi, (_m, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);?/g, (_m, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&colon;/gi, ':')
    .replace(/&(tab|newline);/gi, '')
    .replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
    .replace(/[\s\u0000-\u001f]/g, '');
}

/** The rules every page keeps; `site` is the one it was rendered for (null: the 404 of no site). */
async function checkPage(t: Test, html: string, expect: { site: PublicSite | null; canonical: string | null; ogType?: 'website' | 'article' }) {
  const report = await validator.validateString(html);
  const messages = report.results.flatMap((result) => result.messages.map((m) => `${m.ruleId}: ${m.message} (line ${m.line})`));
  t.same(messages, [], 'html-validate recommended: no errors');

  const lang = expect.site?.language ?? 'en';
  t.ok(html.startsWith('<!DOCTYPE html>\n'), 'doctype first');
  t.equal(attr(html, 'html', 'lang', lang, 'lang'), lang, 'lang on <html>');
  t.match(html, /<meta charset="utf-8">/);
  t.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  t.match(html, /<title>[^<]+<\/title>/, 'a title');
  t.ok(attr(html, 'meta', 'name', 'description', 'content'), 'meta description');
  t.equal(html.match(/<h1[\s>]/g)?.length, 1, 'exactly one h1');
  t.match(html, /<body>\n<a class="skip-link" href="#main">/, 'skip link first in body');
  t.match(html, /<main id="main">/);
  t.match(html, /<footer class="site-footer">/);
  t.equal(attr(html, 'meta', 'name', 'twitter:card', 'content'), 'summary');

  // Nothing executable: the only script is JSON-LD data, no event handler attribute, no script URL.
  for (const script of html.matchAll(/<script\b[^>]*>/gi)) t.equal(script[0], '<script type="application/ld+json">', 'only JSON-LD scripts');
  for (const tag of tags(html)) {
    for (const [name, value] of tag.attrs) {
      t.notOk(name.startsWith('on'), `no event attribute ${name} on <${tag.name}>`);
      t.notMatch(decoded(value), /^(javascript|vbscript|data):/i, `no script URL in ${name} of <${tag.name}>`);
    }
  }
  t.notMatch(html, /<(iframe|object|embed|form|style|base)\b/i, 'no embedding or restyling elements');
  t.notMatch(html, /https?:\/\/(?!localhost:3000\/|blog\.example\.com\/|img\.example\.com\/|schema\.org)/, 'no third-party URLs (fonts, CDNs, trackers)');

  t.equal(attr(html, 'link', 'rel', 'canonical', 'href') ?? null, expect.canonical, 'canonical link');
  if (expect.canonical) {
    t.equal(attr(html, 'meta', 'property', 'og:url', 'content'), expect.canonical, 'og:url is the canonical URL');
    t.equal(attr(html, 'meta', 'property', 'og:type', 'content'), expect.ogType);
    t.ok(attr(html, 'meta', 'property', 'og:title', 'content'), 'og:title');
    t.ok(attr(html, 'meta', 'property', 'og:description', 'content'), 'og:description');
    t.equal(attr(html, 'meta', 'property', 'og:site_name', 'content'), 'Field Notes &amp; &lt;Friends&gt;');
  }
  const feedLinks = tags(html)
    .filter((tag) => tag.name === 'link' && tag.attrs.get('rel') === 'alternate')
    .map((tag) => [tag.attrs.get('type'), tag.attrs.get('href')]);
  const baseUrl = expect.site?.baseUrl;
  t.same(
    feedLinks,
    baseUrl ? [['application/rss+xml', `${baseUrl}/rss.xml`], ['application/atom+xml', `${baseUrl}/atom.xml`], ['application/feed+json', `${baseUrl}/feed.json`]] : [],
    'feed autodiscovery, absolute (none without a site)',
  );
}

t.test('post page: valid, inert, and fully described', async (t) => {
  const site = await renderer(t);
  const html = await site.post(SITE, HOSTILE);
  const url = 'http://localhost:3000/sites/field-notes/tom-jerry-script/';
  await checkPage(t, html, { site: SITE, canonical: url, ogType: 'article' });

  t.match(html, '<title>Tom &amp; Jerry &lt;script&gt; – Field Notes &amp; &lt;Friends&gt;</title>');
  t.match(html, '<h1>Tom &amp; Jerry &lt;script&gt;</h1>');
  t.match(html, '&lt;script&gt;alert(1)&lt;/script&gt;', 'raw HTML in Markdown shows as text');
  t.match(html, '&lt;img src=x onerror=alert(1)&gt;');
  t.notMatch(html, /<a href="[^"]*"[^>]*>(x|y|z|v|d|click)<\/a>/, 'no link from a script URL');
  t.match(html, /<img src="https:\/\/img\.example\.com\/cat\.png" alt="a cat &lt;b&gt;" title="onerror=alert\(1\)" loading="lazy">/, 'image keeps alt, loads lazily');
  t.match(html, '<h2 id="intro">Intro</h2>', 'Markdown # is h2 with an id');
  t.match(html, '<h3 id="intro-2">Intro</h3>', 'repeated heading text gets -2');
  t.match(html, '<h2 id="main-2">Main</h2>', 'a heading cannot take the id of <main>');
  t.equal(html.match(/id="main"/g)?.length, 1);
  t.notOk(attr(html, 'meta', 'name', 'robots', 'content'), 'a listed post is indexable');

  t.match(html, '<time datetime="2024-05-02T08:30:00.000Z">2 May 2024</time>', 'date in the site language');
  t.match(html, 'Updated <time datetime="2024-05-04T09:00:00.000Z">4 May 2024</time>');
  t.match(html, `${HOSTILE.readingTime} min read`);
  t.match(html, '<a href="/sites/field-notes/category/cats-mice/">Cats &amp; &lt;Mice&gt;</a>');
  t.match(html, '<a href="/sites/field-notes/tag/b/" rel="tag">&lt;b&gt;</a>');
  t.match(html, '<a href="/sites/field-notes/tag/amp/" rel="tag">&amp;amp;</a>', 'a literal &amp; tag stays literal');
  t.match(html, '<link rel="stylesheet" href="/sites/field-notes/assets/style.css">');
  t.match(html, '<p class="site-name"><a href="/sites/field-notes/">Field Notes &amp; &lt;Friends&gt;</a></p>');
  t.equal(attr(html, 'meta', 'property', 'og:title', 'content'), 'Tom &amp; Jerry &lt;script&gt;');
  t.equal(attr(html, 'meta', 'property', 'og:type', 'content'), 'article');

  const jsonLdText = html.match(/<script type="application\/ld\+json">(.*?)<\/script>/s)?.[1] ?? '';
  t.notMatch(jsonLdText, /</, 'no < inside the JSON-LD script');
  const jsonLd = JSON.parse(jsonLdText);
  t.same(jsonLd, {
    '@context': 'https://schema.org',
    '@type': 'BlogPosting',
    headline: 'Tom & Jerry <script>',
    description: jsonLd.description,
    datePublished: '2024-05-02T08:30:00.000Z',
    dateModified: '2024-05-04T09:00:00.000Z',
    url,
    mainEntityOfPage: { '@type': 'WebPage', '@id': url },
    author: { '@type': 'Organization', name: SITE.name, url: `${SITE.baseUrl}/` },
    publisher: { '@type': 'Organization', name: SITE.name, url: `${SITE.baseUrl}/` },
    inLanguage: 'en-GB',
    timeRequired: `PT${HOSTILE.readingTime}M`,
    keywords: '<b>, &amp;',
    articleSection: 'Cats & <Mice>',
  });
  t.match(jsonLd.description, /^Intro <script>alert\(1\)<\/script>/, 'without a description, the body text describes the post');
  t.equal(attr(html, 'meta', 'name', 'description', 'content'), attr(html, 'meta', 'property', 'og:description', 'content'));
});

t.test('unlisted post: noindex; a post with a description uses it', async (t) => {
  const site = await renderer(t);
  const html = await site.post(SITE, { ...PLAIN, unlisted: true });
  await checkPage(t, html, { site: SITE, canonical: `${SITE.baseUrl}/river-walk/`, ogType: 'article' });
  t.equal(attr(html, 'meta', 'name', 'robots', 'content'), 'noindex');
  t.equal(attr(html, 'meta', 'name', 'description', 'content'), 'Herons at dawn.');
  t.notMatch(html, 'Updated', 'no "updated" line when never edited');
  t.notMatch(html, 'class="tags"', 'no tag list without tags');
  t.notMatch(html, '/category/', 'no category link without a category');
  t.match(html, '<pre><code>code that is very long');
});

t.test('index: newest first, linked relative to basePath, paginated', async (t) => {
  const site = await renderer(t);
  const first = await site.index(SITE, NEWEST_FIRST, { page: 1, pages: 2 });
  await checkPage(t, first, { site: SITE, canonical: `${SITE.baseUrl}/`, ogType: 'website' });
  const titles = [...first.matchAll(/<h2><a href="([^"]+)">([^<]+)<\/a><\/h2>/g)].map((m) => [m[1], m[2]]);
  t.same(titles, [
    ['/sites/field-notes/tom-jerry-script/', 'Tom &amp; Jerry &lt;script&gt;'],
    ['/sites/field-notes/river-walk/', 'River walk'],
  ]);
  t.match(first, '<time datetime="2024-04-01T06:00:00.000Z">1 April 2024</time> · 1 min read');
  t.match(first, '<p>Herons at dawn.</p>');
  t.match(first, '<a href="/sites/field-notes/page/2/" rel="next">');
  t.notMatch(first, 'rel="prev"');
  t.match(first, '<meta name="description" content="Walks, &quot;birds&quot; &amp; &lt;b&gt;weather&lt;/b&gt;">');

  const middle = await site.index(SITE, [PLAIN], { page: 2, pages: 3 });
  await checkPage(t, middle, { site: SITE, canonical: `${SITE.baseUrl}/page/2/`, ogType: 'website' });
  t.match(middle, '<a href="/sites/field-notes/" rel="prev">', 'page 1 is the bare path');
  t.match(middle, '<a href="/sites/field-notes/page/3/" rel="next">');
  t.match(middle, '<title>Field Notes &amp; &lt;Friends&gt; – Page 2</title>');
});

t.test('index on its own domain links from the root', async (t) => {
  const site = await renderer(t);
  const html = await site.index(OWN_DOMAIN, NEWEST_FIRST, { page: 1, pages: 1 });
  await checkPage(t, html, { site: OWN_DOMAIN, canonical: 'https://blog.example.com/', ogType: 'website' });
  t.match(html, '<a href="/river-walk/">River walk</a>');
  t.match(html, '<link rel="stylesheet" href="/assets/style.css">');
  t.notMatch(html, 'class="pagination"', 'no pagination for one page');
});

t.test('empty index shows an empty state', async (t) => {
  const site = await renderer(t);
  const html = await site.index({ ...SITE, description: null }, [], { page: 1, pages: 1 });
  await checkPage(t, html, { site: SITE, canonical: `${SITE.baseUrl}/`, ogType: 'website' });
  t.match(html, '<p class="empty">Nothing has been published yet.</p>');
  t.notMatch(html, '<ol');
});

t.test('tag and category pages', async (t) => {
  const site = await renderer(t);
  const tag = await site.list(SITE, { kind: 'tag', name: '<b>', slug: tagSlug('<b>') }, NEWEST_FIRST, { page: 2, pages: 3 });
  await checkPage(t, tag, { site: SITE, canonical: `${SITE.baseUrl}/tag/b/page/2/`, ogType: 'website' });
  t.match(tag, '<h1>Posts tagged “&lt;b&gt;” – Page 2</h1>');
  t.match(tag, '<a href="/sites/field-notes/tag/b/" rel="prev">');
  t.match(tag, '<a href="/sites/field-notes/tag/b/page/3/" rel="next">');

  const category = await site.list(SITE, { kind: 'category', name: 'Cats & <Mice>', slug: 'cats-mice' }, [], { page: 1, pages: 1 });
  await checkPage(t, category, { site: SITE, canonical: `${SITE.baseUrl}/category/cats-mice/`, ogType: 'website' });
  t.match(category, '<h1>Posts in “Cats &amp; &lt;Mice&gt;”</h1>');
  t.match(category, '<p class="empty">No posts here yet.</p>');
});

t.test('404 page, with and without a site', async (t) => {
  const site = await renderer(t);
  const known = await site.notFound(SITE);
  await checkPage(t, known, { site: SITE, canonical: null });
  t.match(known, '<h1>Page not found</h1>');
  t.match(known, '<a href="/sites/field-notes/">Go to the home page</a>');
  t.equal(attr(known, 'meta', 'name', 'robots', 'content'), 'noindex');

  const unknown = await site.notFound(null);
  await checkPage(t, unknown, { site: null, canonical: null });
  t.match(unknown, '<a href="/">Go to the home page</a>');
  t.match(unknown, '<link rel="stylesheet" href="/assets/style.css">');
  t.notMatch(unknown, '<header');
});

t.test('RSS 2.0', async (t) => {
  const xml = rssFeed(SITE, NEWEST_FIRST);
  t.equal(XMLValidator.validate(xml), true, 'well-formed XML');
  const feed = parseRssFeed(xml);
  t.equal(feed.title, SITE.name);
  t.equal(feed.link, `${SITE.baseUrl}/`);
  t.equal(feed.language, 'en-GB');
  t.equal(feed.lastBuildDate, 'Sat, 04 May 2024 09:00:00 GMT', 'built when the newest post changed');
  t.same(feed.atom?.links, [{ href: `${SITE.baseUrl}/rss.xml`, rel: 'self', type: 'application/rss+xml' }]);
  const [hostile, plain] = feed.items ?? [];
  t.equal(hostile.title, 'Tom & Jerry <script>', 'title round-trips as text');
  t.equal(hostile.link, `${SITE.baseUrl}/tom-jerry-script/`);
  t.same(hostile.guid, { value: `urn:uuid:${HOSTILE.id}`, isPermaLink: false });
  t.equal(hostile.pubDate, 'Thu, 02 May 2024 08:30:00 GMT');
  t.equal(hostile.content?.encoded, HOSTILE.html.trim(), 'full HTML body');
  t.same(hostile.categories, [{ name: '<b>' }, { name: '&amp;' }], 'tags stay literal text');
  t.equal(hostile.description, undefined);
  t.equal(plain.description, 'Herons at dawn.');
  t.equal(plain.guid?.value, `urn:uuid:${PLAIN.id}`);

  const empty = parseRssFeed(rssFeed(SITE, []));
  t.same(empty.items ?? [], []);
  t.equal(empty.lastBuildDate, new Date(0).toUTCString(), 'an empty feed has stable bytes');
});

t.test('RSS description is HTML: plain text in it is escaped twice', async (t) => {
  const xml = rssFeed(SITE, [{ ...PLAIN, description: 'a <b> & c' }]);
  t.equal(parseRssFeed(xml).items?.[0].description, 'a &lt;b&gt; &amp; c');
});

t.test('Atom 1.0', async (t) => {
  const xml = atomFeed(SITE, NEWEST_FIRST);
  t.equal(XMLValidator.validate(xml), true, 'well-formed XML');
  const feed = parseAtomFeed(xml);
  t.equal(feed.id, `urn:uuid:${SITE.id}`);
  t.same(feed.title, { value: SITE.name, type: 'text' });
  t.equal(feed.updated, '2024-05-04T09:00:00.000Z');
  t.same(feed.links, [
    { href: `${SITE.baseUrl}/`, rel: 'alternate', type: 'text/html' },
    { href: `${SITE.baseUrl}/atom.xml`, rel: 'self', type: 'application/atom+xml' },
  ]);
  t.same(feed.authors, [{ name: SITE.name }]);
  const [hostile, plain] = feed.entries ?? [];
  t.equal(hostile.id, `urn:uuid:${HOSTILE.id}`);
  t.same(hostile.title, { value: 'Tom & Jerry <script>', type: 'text' }, 'a text title, never markup');
  t.same(hostile.links, [{ href: `${SITE.baseUrl}/tom-jerry-script/`, rel: 'alternate', type: 'text/html' }]);
  t.equal(hostile.published, '2024-05-02T08:30:00.000Z');
  t.equal(hostile.updated, '2024-05-04T09:00:00.000Z');
  t.same(hostile.content, { value: HOSTILE.html.trim(), type: 'html' });
  t.same(hostile.categories, [{ term: '<b>' }, { term: '&amp;' }]);
  t.same(plain.summary, { value: 'Herons at dawn.', type: 'text' });
});

t.test('JSON Feed 1.1', async (t) => {
  const text = jsonFeed(SITE, NEWEST_FIRST);
  const feed = parseJsonFeed(text);
  const raw = JSON.parse(text);
  t.equal(raw.version, 'https://jsonfeed.org/version/1.1');
  t.equal(feed.title, SITE.name);
  t.equal(feed.home_page_url, `${SITE.baseUrl}/`);
  t.equal(feed.feed_url, `${SITE.baseUrl}/feed.json`);
  t.equal(feed.language, 'en-GB');
  t.same(raw.items[0], {
    id: HOSTILE.id,
    url: `${SITE.baseUrl}/tom-jerry-script/`,
    title: 'Tom & Jerry <script>',
    content_html: HOSTILE.html,
    date_published: '2024-05-02T08:30:00.000Z',
    date_modified: '2024-05-04T09:00:00.000Z',
    tags: ['<b>', '&amp;'],
  });
  t.equal(feed.items?.[1].id, PLAIN.id);
  t.equal(feed.items?.[1].summary, 'Herons at dawn.');
});

t.test('feeds drop characters XML cannot carry', async (t) => {
  const xml = atomFeed(SITE, [{ ...PLAIN, title: 'bell\u0007 and \uD800 lone surrogate' }]);
  t.equal(XMLValidator.validate(xml), true);
  t.same(parseAtomFeed(xml).entries?.[0].title, { value: 'bell and  lone surrogate', type: 'text' });
});

t.test('sitemap and robots.txt', async (t) => {
  const xml = sitemapXml(SITE, NEWEST_FIRST.map((post) => ({ url: postUrl(SITE, post.slug), lastmod: post.updatedAt })));
  t.equal(XMLValidator.validate(xml), true, 'well-formed XML');
  const parsed = new XMLParser({ isArray: (name) => name === 'url' }).parse(xml);
  t.same(parsed.urlset.url, [
    { loc: `${SITE.baseUrl}/`, lastmod: '2024-05-04T09:00:00.000Z' },
    { loc: `${SITE.baseUrl}/tom-jerry-script/`, lastmod: '2024-05-04T09:00:00.000Z' },
    { loc: `${SITE.baseUrl}/river-walk/`, lastmod: '2024-04-01T06:00:00.000Z' },
  ]);
  t.match(xml, 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"');
  const empty = new XMLParser({ isArray: (name) => name === 'url' }).parse(sitemapXml(SITE, []));
  t.same(empty.urlset.url, [{ loc: `${SITE.baseUrl}/` }], 'the index alone, without a made-up lastmod');

  t.equal(robotsTxt(OWN_DOMAIN), 'User-agent: *\nAllow: /\n\nSitemap: https://blog.example.com/sitemap.xml\n');
});

t.test('markdown', async (t) => {
  const headings = renderMarkdown('# Café au lait\n\n## Café au lait\n\n### Café au lait\n\n###### Six\n\n# `code` *and* text');
  t.equal(
    headings.html,
    [
      '<h2 id="cafe-au-lait">Café au lait</h2>',
      '<h3 id="cafe-au-lait-2">Café au lait</h3>',
      '<h4 id="cafe-au-lait-3">Café au lait</h4>',
      '<h5 id="six">Six</h5>',
      '<h2 id="code-and-text"><code>code</code> <em>and</em> text</h2>',
      '',
    ].join('\n'),
    'ids from the heading text, -N on repeats, the levels used become h2, h3, ... in rank',
  );
  t.equal(renderMarkdown('## Steps\n\n#### Detail').html, '<h2 id="steps">Steps</h2>\n<h3 id="detail">Detail</h3>\n', 'a post of ## sections starts at h2 and skips no level');

  t.equal(renderMarkdown('<script>alert(1)</script>').html, '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n');
  t.equal(renderMarkdown('<div onclick="x()">hi</div>').html, '<p>&lt;div onclick=&quot;x()&quot;&gt;hi&lt;/div&gt;</p>\n');
  t.equal(renderMarkdown('[x](javascript:alert(1))').html, '<p>[x](javascript:alert(1))</p>\n', 'javascript: not linked');
  t.equal(renderMarkdown('[x](https://example.com/?a=1&b=2)').html, '<p><a href="https://example.com/?a=1&amp;b=2">x</a></p>\n');
  t.equal(renderMarkdown('see https://example.com').html, '<p>see https://example.com</p>\n', 'no linkify');
  t.equal(renderMarkdown('![](data:image/png;base64,AAAA)').html, '<p><img src="data:image/png;base64,AAAA" alt="" loading="lazy"></p>\n', 'data: images as markdown-it allows');
  t.equal(
    renderMarkdown('| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |').html.match(/<td[^>]*>/g)?.join(''),
    '<td class="align-left"><td class="align-center"><td class="align-right">',
    'table alignment as classes, not inline styles',
  );

  t.equal(renderMarkdown('').readingTime, 1, 'at least one minute');
  t.equal(renderMarkdown('word '.repeat(230)).readingTime, 1);
  t.equal(renderMarkdown('word '.repeat(231)).readingTime, 2, 'rounded up');
  t.equal(renderMarkdown(`[${'word '.repeat(230)}](https://example.com/a/very/long/url) **more**`).readingTime, 2, 'link text counts, URLs and syntax do not');
  t.equal(renderMarkdown('```\n' + 'x '.repeat(461) + '\n```').readingTime, 3, 'code counts');

  t.equal(tagSlug('Café & <Crème>'), 'cafe-creme');
});
