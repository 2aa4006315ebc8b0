import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Site } from '../../../src/sites/store.js';
import { errorResponses } from '../../../src/schemas/common.js';
import { domainState } from '../../../src/sites/domains.js';
import { newsletterSettings } from '../../../src/sites/rules.js';
import { PatchSiteBody, SiteSettingsResponse } from '../../../src/schemas/site.js';

const tags = ['site'];

export default async function siteSettingsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);

  const siteView = (site: Site) => ({ ...site, newsletter: newsletterSettings(site), comments: site.commentsMode, publicUrl: app.publicPages.view(site, '').baseUrl, domain: domainState(site) });

  app.get(
    '/site',
    { schema: { tags, operationId: 'getSite', summary: "The key's site and its public settings", response: { 200: SiteSettingsResponse, ...errorResponses } } },
    async (request) => ({ success: true as const, data: { message: 'Site retrieved successfully', site: siteView(await app.sites.get(request.site.id)) } }),
  );

  app.patch(
    '/site',
    { onRequest: app.requireOwner, schema: { tags, operationId: 'updateSite', summary: 'Change the site: name, description, handle, url, language, postsPerPage, timeZone, newsletter, comments, blockedWords', body: PatchSiteBody, response: { 200: SiteSettingsResponse, ...errorResponses } } },
    async (request) => ({
      success: true as const,
      data: { message: 'Site updated successfully', site: siteView(await app.sites.update(request.site.id, request.body)) },
    }),
  );

  app.post(
    '/site/domain/verify',
    {
      onRequest: app.requireOwner,
      schema: {
        tags,
        operationId: 'verifySiteDomain',
        summary: "Prove the site's own domain by its DNS TXT record",
        description:
          'Looks up the TXT record _blog-verify.<host> (see `domain.verification` of GET /api/v1/site); when it holds the token, the domain is proven and serves the site. 409 while it does not.',
        response: { 200: SiteSettingsResponse, ...errorResponses },
      },
    },
    async (request) => ({
      success: true as const,
      data: { message: 'Domain verified', site: siteView(await app.sites.verifyDomain(request.site.id, { dns: true })) },
    }),
  );
}
