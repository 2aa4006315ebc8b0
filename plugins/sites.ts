import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PgSiteService } from '../src/sites/pg-service.js';
import { SiteService } from '../src/sites/service.js';
import { reservedHosts, type ResolveTxt } from '../src/sites/domains.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sites and keys; `authenticate` answers at once on SQLite, through a promise on PostgreSQL. */
    sites: SiteService | PgSiteService;
  }
}

/** Sites and API keys (the admin CLI registers this one alone, beside the database). */
export interface SitesPluginOptions {
  /** DNS TXT lookups proving custom domains (tests give their own). */
  resolveTxt?: ResolveTxt;
}

export default fp(
  async function sitesPlugin(app: FastifyInstance, options: SitesPluginOptions) {
    const { backend } = app;
    const domains = { reservedHosts: reservedHosts(app.config), resolveTxt: options.resolveTxt };
    if (backend.kind === 'sqlite') {
      app.decorate<SiteService | PgSiteService>('sites', new SiteService(backend.sqlite, domains));
      return;
    }
    // Polled 4 times a second: said once per minute at most while the database is away.
    let lastWarned = -Infinity;
    const sites = await PgSiteService.open(backend.postgres.db, {
      onError: (error) => {
        if (performance.now() - lastWarned < 60_000) return;
        lastWarned = performance.now();
        app.log.warn({ err: error }, 'could not read key changes; keys are looked up without the cache until it can');
      },
    }, domains);
    app.decorate<SiteService | PgSiteService>('sites', sites);
    app.addHook('onClose', async () => sites.close());
  },
  { name: 'sites', dependencies: ['db'] },
);
