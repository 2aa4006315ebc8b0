import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { SiteService } from '../src/sites/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    sites: SiteService;
  }
}

/** Sites and API keys (the admin CLI registers this one alone, beside the database). */
export default fp(
  async function sitesPlugin(app: FastifyInstance) {
    app.decorate('sites', new SiteService(app.database));
  },
  { name: 'sites', dependencies: ['db'] },
);
