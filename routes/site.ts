import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The host a request was sent to, without a default port. */
const hostOf = (request: FastifyRequest) => request.headers.host?.toLowerCase().replace(/:(80|443)$/, '');

/**
 * Public pages of every site, no key needed: at /sites/<handle>/... on any host, and at / on
 * the host of a site's own `url`. Everything else at the root is the API's 404.
 */
export default async function siteRoutes(app: FastifyInstance) {
  const schema = { hide: true };

  app.get('/sites/:handle', { schema }, async (request, reply) => {
    const { handle } = request.params as { handle: string };
    return reply.code(301).header('Location', `/sites/${encodeURIComponent(handle)}/`).send();
  });

  app.get('/sites/:handle/*', { schema }, async (request, reply) => {
    const { handle, '*': rest } = request.params as { handle: string; '*': string };
    const site = await app.publicSite.byHandle(handle);
    const response = site ? await app.publicPages.page(site, `/sites/${site.handle}`, `/${rest}`) : await app.publicPages.noSite();
    return app.sendPublic(request, reply, response);
  });

  // Browsers ask for it on their own, on every host.
  app.get('/favicon.ico', { schema }, async (request, reply) => app.sendPublic(request, reply, app.publicPages.icon));

  app.get('/*', { schema }, async (request, reply) => {
    const site = await app.publicSite.byHost(hostOf(request));
    if (!site) return reply.callNotFound();
    return app.sendPublic(request, reply, await app.publicPages.page(site, '', request.url.split('?')[0]));
  });
}
