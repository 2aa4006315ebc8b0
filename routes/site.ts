import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Site } from '../src/db/schema.js';
import { formStateOf } from './comments-form.js';
import { ownOrigins, publicCsp, publicPolicyHook } from '../plugins/public-site.js';
import type { PublicResponse } from '../src/public-site/pages.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The host a request was sent to, without a default port. */
const hostOf = (request: FastifyRequest) => request.headers.host?.toLowerCase().replace(/:(80|443)$/, '');

/**
 * Public pages of every site, no key needed: at /sites/<handle>/... on any host, and at / on
 * the host of a site's own `url`. Everything else at the root is the API's 404.
 */
export default async function siteRoutes(app: FastifyInstance) {
  const schema = { hide: true };

  publicPolicyHook(app);

  /** A site's public answer, under the policy that names the site's own origins. */
  const sendSite = (request: FastifyRequest, reply: FastifyReply, site: Site, response: PublicResponse) =>
    app.sendPublic(request, reply.header('Content-Security-Policy', publicCsp(response.contentType, ownOrigins(app.config.publicBaseUrl, site))), response);

  /**
   * Sends an image file of the site (`media/<id>/<file>`: its name holds a hash of its content,
   * so it never changes); false when there is none. A boolean, not the reply: a reply is
   * thenable, and awaiting it waits for the response to end and yields undefined.
   */
  async function sendMedia(site: Site, path: string, reply: FastifyReply): Promise<boolean> {
    const named = /^\/media\/([^/]+)\/([^/]+)$/.exec(path);
    const found = named && (await app.media.open(site.id, named[1]!, named[2]!));
    if (!found) return false;
    reply.header('Cache-Control', IMMUTABLE).header('Content-Length', found.size).type(found.contentType).send(found.stream);
    return true;
  }

  /**
   * Sends a post page asked with a comment notice or the comment a reply is for (rendered for
   * this request, not cached); false when the request is not one. A boolean, as sendMedia's.
   */
  async function sendFormPage(site: Site, basePath: string, path: string, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const slug = /^\/([a-z0-9-]{1,80})\/$/.exec(path)?.[1];
    const state = slug ? formStateOf(request.query) : null;
    if (!slug || !state) return false;
    const page = await app.publicPages.postWithForm(site, basePath, slug, state);
    if (!page) return false;
    reply.header('Cache-Control', 'no-store').header('Content-Security-Policy', publicCsp(page.contentType, ownOrigins(app.config.publicBaseUrl, site))).type(page.contentType).send(page.body);
    return true;
  }

  app.get('/sites/:handle', { schema }, async (request, reply) => {
    const { handle } = request.params as { handle: string };
    return reply.code(301).header('Location', `/sites/${encodeURIComponent(handle)}/`).send();
  });

  app.get('/sites/:handle/*', { schema }, async (request, reply) => {
    const { handle, '*': rest } = request.params as { handle: string; '*': string };
    const site = await app.publicSite.byHandle(handle);
    if (site && rest.startsWith('media/')) {
      if (await sendMedia(site, `/${rest}`, reply)) return reply;
    }
    if (!site) return app.sendPublic(request, reply, await app.publicPages.noSite());
    if (await sendFormPage(site, `/sites/${site.handle}`, `/${rest}`, request, reply)) return reply;
    return sendSite(request, reply, site, await app.publicPages.page(site, `/sites/${site.handle}`, `/${rest}`));
  });

  // A draft's share-preview link: the token alone names it; no longer once published or revoked.
  app.get('/preview/:token', { schema }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const post = token.length >= 16 && token.length <= 100 ? await app.posts.byPreviewToken(token) : undefined;
    const site = post && (await app.sites.get(post.siteId));
    reply.header('Cache-Control', 'no-store').header('X-Robots-Tag', 'noindex').header('Referrer-Policy', 'no-referrer');
    if (!post || !site) {
      const notFound = await app.publicPages.noSite();
      return reply.code(404).type(notFound.contentType).send(notFound.body);
    }
    const html = await app.publicPages.preview(site, await app.publicSite.preview(site.id, post));
    return reply.header('Content-Security-Policy', publicCsp('text/html', ownOrigins(app.config.publicBaseUrl, site))).type('text/html; charset=utf-8').send(html);
  });

  // Browsers ask for it on their own, on every host.
  app.get('/favicon.ico', { schema }, async (request, reply) => app.sendPublic(request, reply, app.publicPages.icon));

  app.get('/*', { schema }, async (request, reply) => {
    const site = await app.publicSite.byHost(hostOf(request));
    if (!site) return reply.callNotFound();
    const path = request.url.split('?')[0]!;
    if (path.startsWith('/media/')) {
      if (await sendMedia(site, path, reply)) return reply;
    }
    if (await sendFormPage(site, '', path, request, reply)) return reply;
    return sendSite(request, reply, site, await app.publicPages.page(site, '', path));
  });
}
