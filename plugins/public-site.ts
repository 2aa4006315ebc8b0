import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { MAX_COMMENTS_ON_PAGE } from '../src/comments/store.js';
import { PublicPages, type PublicResponse } from '../src/public-site/pages.js';
import { createSiteRenderer } from '../src/public-site/render.js';
import type { PublicSite } from '../src/public-site/store.js';
import { iconFile, registerSiteViews, stylesheetFile } from '../src/public-site/templates.js';

declare module 'fastify' {
  interface FastifyInstance {
    publicSite: PublicSite;
    publicPages: PublicPages;
    /** Sends a public response with its caching headers, or 304 when the client's copy is current. */
    sendPublic(request: FastifyRequest, reply: FastifyReply, response: PublicResponse): FastifyReply;
  }
}

const CACHE_CONTROL = 'public, max-age=60';

/**
 * The policy of the public pages: they share an origin with /admin/ and the session cookie, so
 * nothing runs but the service's own scripts (the spam guard's widget of the public forms, its
 * worker and its challenge fetch); styles from the service; images also over HTTPS and as data:
 * URLs (a post may show pictures hosted elsewhere), and from the service's own origins that
 * absolute URLs name (`ownOrigins`: a feature image's srcset is on the site's canonical
 * address); forms post to the service; framed by its own pages only.
 */
export function publicPageCsp(ownOrigins: readonly string[] = []): string {
  return policy(['img-src', "'self'", 'https:', 'data:', ...ownOrigins.filter((origin) => !origin.startsWith('https:'))]);
}

/**
 * A post's page as the editor's preview frames it: images only from the service itself (the
 * request's origin and `ownOrigins`), so a draft cannot tell anyone outside who opened it.
 */
export function previewCsp(ownOrigins: readonly string[] = []): string {
  return policy(['img-src', "'self'", ...ownOrigins]);
}

const policy = (images: string[]) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    [...new Set(images)].join(' '),
    "connect-src 'self'",
    "worker-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'self'",
  ].join('; ');

/** Feeds, the sitemap, robots.txt, the stylesheet, the icon and images: nothing of theirs runs, nobody frames them. */
export const PUBLIC_FILE_CSP = "default-src 'none'; style-src 'self'; frame-ancestors 'none'; sandbox";

/** The Content-Security-Policy of a public answer of `contentType` (a page or a file). */
export const publicCsp = (contentType: unknown, ownOrigins: readonly string[] = []) =>
  typeof contentType === 'string' && contentType.startsWith('text/html') ? publicPageCsp(ownOrigins) : PUBLIC_FILE_CSP;

/** Gives every answer of a routes plugin (404 pages too) the public policy of what it is, unless it set its own. */
export function publicPolicyHook(app: FastifyInstance): void {
  const fallback = ownOrigins(app.config.publicBaseUrl, null);
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('Content-Security-Policy')) reply.header('Content-Security-Policy', publicCsp(reply.getHeader('Content-Type'), fallback));
    done(null, payload);
  });
}

/** The origins of the service a site's pages name in absolute URLs: PUBLIC_BASE_URL's, and the site's verified domain's. */
export function ownOrigins(publicBaseUrl: string, site: { url: string | null; domainToken: string | null } | null): string[] {
  const origins = new Set<string>();
  for (const url of [publicBaseUrl, site && site.domainToken === null ? site.url : null]) if (url && URL.canParse(url)) origins.add(new URL(url).origin);
  return [...origins];
}

function notModified(request: FastifyRequest, response: PublicResponse): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === response.etag || tag.trim() === '*');
  const since = Date.parse(request.headers['if-modified-since'] ?? '');
  // HTTP dates have whole seconds.
  return !Number.isNaN(since) && Math.floor(response.lastModified.getTime() / 1000) * 1000 <= since;
}

/** What readers see: the public pages, feeds and content API, templates registered with @fastify/view. */
export default fp(
  async function publicSitePlugin(app: FastifyInstance) {
    // @fastify/view adds an onRequest hook to every route to give each reply `locals`, unless
    // the decorator exists: the templates take their data as an argument and need none.
    app.decorateReply('locals', null);
    await registerSiteViews(app);
    const { publicSite } = app.stores;
    app.decorate<PublicSite>('publicSite', publicSite);
    const renderer = createSiteRenderer((template, data) => app.view(template, data));
    const pages = new PublicPages(publicSite, renderer, { stylesheet: stylesheetFile(), icon: iconFile() }, app.config.publicBaseUrl);
    // Post pages show their approved comments (the form and moderation are plugins/comments.ts).
    const { comments } = app.stores;
    pages.useComments(async (postId) => (await comments.approved(postId, 1, MAX_COMMENTS_ON_PAGE)).rows);
    app.decorate('publicPages', pages);
    // A reader's GET of a page answered 200 or 304 counts a view (plugins/analytics.ts).
    const seen = app.hasDecorator('analytics') ? app.analytics.seen : null;
    app.decorate('sendPublic', (request: FastifyRequest, reply: FastifyReply, response: PublicResponse) => {
      if (response.view && seen) seen(request, response.view);
      reply.header('Cache-Control', CACHE_CONTROL).header('ETag', response.etag).header('Last-Modified', response.lastModified.toUTCString());
      if (response.status === 200 && notModified(request, response)) return reply.code(304).send();
      if (response.location) reply.header('Location', response.location);
      return reply.code(response.status).type(response.contentType).send(response.body);
    });
  },
  { name: 'public-site', dependencies: ['db'] },
);
