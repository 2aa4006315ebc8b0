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
