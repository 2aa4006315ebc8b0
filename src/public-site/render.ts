import type { CommentItem, CommentsSection } from '../comments/section.js';
import { CONTENT_SIZES, THUMBNAIL_SIZES, featureImageOf, type PageImage } from './images.js';
import { tagSlug } from './markdown.js';
import type { PageLinks, PublicPost, PublicSite } from './types.js';
import {
  FEED_PATHS,
  ICON_PATH,
  STYLESHEET_PATH,
  indexPath,
  listPath,
  postPath,
  postUrl,
  sitePath,
  siteUrl,
  type ListKind,
} from './urls.js';

/** What `app.view` from @fastify/view is: template name (without `.eta`) and data to HTML. */
export type RenderTemplate = (template: string, data: object) => Promise<string> | string;

export interface ListTopic {
  kind: ListKind;
  /** As written on the posts (the tag or category text). */
  name: string;
  /** `tagSlug(name)`: the URL segment. */
  slug: string;
}

export interface SiteRenderer {
  index(site: PublicSite, posts: PublicPost[], links: PageLinks): Promise<string>;
  /**
   * `preview`: a draft's (or pending edits') page, not for indexing, saying it is a preview.
   * `comments`: the section below the post (none when the site's comments are off, or in a preview).
   */
  post(site: PublicSite, post: PublicPost, options?: { preview?: boolean; comments?: CommentsSection | null }): Promise<string>;
  list(site: PublicSite, topic: ListTopic, posts: PublicPost[], links: PageLinks): Promise<string>;
  /** `site` is null when the request matched no site. */
  notFound(site: PublicSite | null): Promise<string>;
  /** A page that says one thing, with at most one button (a POST to `form.action`). */
  notice(site: PublicSite, content: NoticeContent): Promise<string>;
}

/** What a notice page says: a heading, paragraphs, and a button that sends a form. */
export interface NoticeContent {
  heading: string;
  paragraphs: string[];
  form?: { action: string; button: string; fields?: Record<string, string> };
  /** Offer the sign-up form below (after an error, say). */
  subscribe?: boolean;
}

/** Where a site's pages send the sign-up form, and what its proof-of-work widget loads. */
function subscribeForm(site: PublicSite) {
  if (!site.newsletter) return null;
  return {
    action: sitePath(site, '/subscribe'),
    challengeUrl: `/content/v1/sites/${encodeURIComponent(site.handle)}/challenge?form=subscribe`,
    script: '/spam-guard/spam-guard.js',
    stylesheet: '/spam-guard/altcha.css',
  };
}

const DESCRIPTION_LENGTH = 160;

interface Head {
  title: string;
  description: string;
  ogTitle: string;
  ogType: 'website' | 'article';
  /** Absolute; null on the 404 page, which is not a page to index or share. */
  canonical: string | null;
  noindex: boolean;
  article: { publishedTime: string; modifiedTime: string; section: string | null; tags: string[] } | null;
  /** Serialised JSON-LD, safe inside a `<script>` element. */
  jsonLd: string | null;
  /** The picture link previews show (`og:image`, a large Twitter card). */
  image: { url: string; width: number; height: number; alt: string } | null;
}

/** What a page states about itself; the rest of `Head` has defaults. */
type HeadInput = Partial<Head> & Pick<Head, 'title' | 'ogTitle' | 'description' | 'canonical'>;

interface DateView {
  datetime: string;
  text: string;
}

/** The comments section as the template shows it. */
function commentsView(site: PublicSite, post: PublicPost, section: CommentsSection, dates: (date: Date) => { datetime: string; text: string }) {
  const page = sitePath(site, postPath(post.slug));
  const withDates = (item: CommentItem): Record<string, unknown> => ({
    ...item,
    date: dates(item.createdAt),
    replyHref: `${page}?replyTo=${item.id}#comment-form`,
    replies: item.replies.map(withDates),
  });
  const values = section.form.values ?? {};
  const replyTo = values.parentId ? section.items.find((item) => item.id === values.parentId) : undefined;
  return {
    countText: section.count === 0 ? 'No comments yet' : section.count === 1 ? '1 comment' : `${section.count} comments`,
    items: section.items.map(withDates),
    state: section.state,
    form: section.form,
    errors: section.form.errors ?? {},
    values: { name: values.name ?? '', email: values.email ?? '', body: values.body ?? '', parentId: replyTo ? replyTo.id : '' },
    replyTo: replyTo ? { name: replyTo.name } : null,
    action: `${page}comments`,
    api: `/content/v1/sites/${site.handle}/posts/${post.slug}/comments`,
    challenge: `/content/v1/sites/${site.handle}/challenge?form=comment`,
  };
}

/** Turns site and post data into full HTML pages through the templates in views/. */
export function createSiteRenderer(render: RenderTemplate): SiteRenderer {
  return {
    async index(site, posts, links) {
      const paged = links.page > 1 ? ` – Page ${links.page}` : '';
      const description = site.description ?? `The latest posts from ${site.name}.`;
      return render('index', {
        ...chrome(site, { title: `${site.name}${paged}`, ogTitle: site.name, description, canonical: siteUrl(site, indexPath(links.page)) }),
        heading: `${site.name}${paged}`,
        list: postList(site, posts, 'Nothing has been published yet.', links, indexPath),
        subscribe: subscribeForm(site),
      });
    },

    async post(site, post, options = {}) {
      const preview = options.preview === true;
      const comments = preview ? null : options.comments ?? null;
      const url = postUrl(site, post.slug);
      const description = post.description ?? excerpt(post.html) ?? `A post on ${site.name}.`;
      const dates = dateFormat(site.language);
      const published = dates(post.publishedAt);
      const updated = dates(post.updatedAt);
      const image = featureImageOf(site, post);
      return render('post', {
        ...chrome(site, {
          title: `${post.title} – ${site.name}`,
          ogTitle: post.title,
          ogType: 'article',
          description,
          // A preview is no address of the post's: nothing to index or share.
          canonical: preview ? null : url,
          noindex: post.unlisted || preview,
          article: {
            publishedTime: published.datetime,
            modifiedTime: updated.datetime,
            section: post.category,
            tags: post.tags,
          },
          jsonLd: preview ? null : blogPostingJsonLd(site, post, url, description, image),
          image: image && { ...image.share, alt: image.alt },
        }),
        preview,
        subscribe: preview ? null : subscribeForm(site),
        post: {
          title: post.title,
          author: post.author,
          html: post.html,
          published,
          updated: updated.text === published.text ? null : updated,
          readingTime: readingTimeText(post.readingTime),
          category: post.category === null ? null : topicLink(site, 'category', post.category),
          tags: post.tags.map((tag) => topicLink(site, 'tag', tag)),
          // Above the fold: loaded first, never lazily.
          image: image && { ...image, sizes: CONTENT_SIZES },
        },
        comments: comments ? commentsView(site, post, comments, dates) : null,
      });
    },

    async list(site, topic, posts, links) {
      const heading = topic.kind === 'tag' ? `Posts tagged “${topic.name}”` : `Posts in “${topic.name}”`;
      const paged = links.page > 1 ? ` – Page ${links.page}` : '';
      return render('list', {
        ...chrome(site, {
          title: `${heading}${paged} – ${site.name}`,
          ogTitle: heading,
          description: `${heading} on ${site.name}.`,
          canonical: siteUrl(site, listPath(topic.kind, topic.slug, links.page)),
        }),
        heading: `${heading}${paged}`,
        list: postList(site, posts, 'No posts here yet.', links, (page) => listPath(topic.kind, topic.slug, page)),
      });
    },

    async notFound(site) {
      // Not a page to index or share: no canonical, no Open Graph.
      const head: HeadInput = {
        title: site ? `Page not found – ${site.name}` : 'Page not found',
        ogTitle: 'Page not found',
        description: 'There is no page at this address.',
        canonical: null,
        noindex: true,
      };
      if (site) return render('not-found', chrome(site, head));
      // No site matched: the host's root paths, English.
      return render('not-found', { ...pageHead(head), language: 'en', site: null, feeds: null, links: { home: '/', stylesheet: STYLESHEET_PATH, icon: ICON_PATH } });
    },

    async notice(site, content) {
      return render('notice', {
        ...chrome(site, { title: `${content.heading} – ${site.name}`, ogTitle: content.heading, description: content.heading, canonical: null, noindex: true }),
        notice: { ...content, form: content.form ? { fields: {}, ...content.form } : null },
        subscribe: content.subscribe ? subscribeForm(site) : null,
      });
    },
  };
}

/** The layout's data: head tags, feed autodiscovery and links, for a page of `site`. */
function chrome(site: PublicSite, head: HeadInput) {
  return {
    ...pageHead(head),
    language: site.language,
    site,
    feeds: { rss: siteUrl(site, FEED_PATHS.rss), atom: siteUrl(site, FEED_PATHS.atom), json: siteUrl(site, FEED_PATHS.json) },
    links: { home: sitePath(site, indexPath()), stylesheet: sitePath(site, STYLESHEET_PATH), icon: sitePath(site, ICON_PATH) },
  };
}

function pageHead(head: HeadInput): { head: Head } {
  return { head: { ogType: 'website', noindex: false, article: null, jsonLd: null, image: null, ...head } };
}

function postList(site: PublicSite, posts: PublicPost[], emptyMessage: string, links: PageLinks, pagePath: (page: number) => string) {
  const dates = dateFormat(site.language);
  return {
    emptyMessage,
    items: posts.map((post, index) => ({
      title: post.title,
      // Thumbnails after the first few load as they come into view.
      image: post.featureImage && { ...featureImageOf(site, post)!, sizes: THUMBNAIL_SIZES, lazy: index >= 2 },
      href: sitePath(site, postPath(post.slug)),
      published: dates(post.publishedAt),
      description: post.description,
      readingTime: readingTimeText(post.readingTime),
    })),
    pagination: links.pages > 1 ? {
      page: links.page,
      pages: links.pages,
      prev: links.page > 1 ? sitePath(site, pagePath(links.page - 1)) : null,
      next: links.page < links.pages ? sitePath(site, pagePath(links.page + 1)) : null,
    } : null,
  };
}

function topicLink(site: PublicSite, kind: ListKind, name: string) {
  return { name, href: sitePath(site, listPath(kind, tagSlug(name))) };
}

function readingTimeText(minutes: number): string {
  return `${minutes} min read`;
}

/** Dates as machine-readable ISO strings plus a long date in the site's language (UTC, so every reader sees the same day). */
function dateFormat(language: string): (date: Date) => DateView {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' });
  } catch {
    // A tag Intl cannot use must not take the site down; English is the templates' own language.
    format = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' });
  }
  return (date) => ({ datetime: date.toISOString(), text: format.format(date) });
}

/**
 * The first words of a rendered body, for the meta description of a post without one. markdown-it
 * output is well-formed and its text holds no entities but these four, so stripping tags suffices.
 */
function excerpt(html: string): string | null {
  const text = html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  if (!text) return null;
  if (text.length <= DESCRIPTION_LENGTH) return text;
  const cut = text.slice(0, DESCRIPTION_LENGTH - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${lastSpace > 0 ? cut.slice(0, lastSpace) : cut}…`;
}

function blogPostingJsonLd(site: PublicSite, post: PublicPost, url: string, description: string, image: PageImage | null): string {
  const organisation = { '@type': 'Organization', name: site.name, url: siteUrl(site, indexPath()) };
  const data = {
    '@context': 'https://schema.org',
    '@type': 'BlogPosting',
    headline: post.title,
    description,
    datePublished: post.publishedAt.toISOString(),
    dateModified: post.updatedAt.toISOString(),
    url,
    mainEntityOfPage: { '@type': 'WebPage', '@id': url },
    author: organisation,
    publisher: organisation,
    inLanguage: site.language,
    timeRequired: `PT${post.readingTime}M`,
    ...(post.tags.length > 0 ? { keywords: post.tags.join(', ') } : {}),
    ...(post.category !== null ? { articleSection: post.category } : {}),
    ...(image ? { image: { '@type': 'ImageObject', url: image.share.url, width: image.share.width, height: image.share.height } } : {}),
  };
  // `<` escaped, so no `</script>` or `<!--` in a title or tag can end the script element early.
  return JSON.stringify(data).replace(/</g, '\\u003c');
}
