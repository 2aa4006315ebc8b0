import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { reservedHosts, type ResolveTxt } from '../src/sites/domains.js';
import type { SiteStore } from '../src/sites/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sites and keys; `authenticate` answers at once on SQLite, through a promise on PostgreSQL. */
    sites: SiteStore;
  }
}

/** Sites and API keys (the admin CLI registers this one alone, beside the database). */
export interface SitesPluginOptions {
  /** DNS TXT lookups proving custom domains (tests give their own). */
  resolveTxt?: ResolveTxt;
}

export default fp(
  async function sitesPlugin(app: FastifyInstance, options: SitesPluginOptions) {
    const { sites } = app.stores;
    sites.useDomains({ reservedHosts: reservedHosts(app.config), resolveTxt: options.resolveTxt });
    // PostgreSQL's key changes are polled 4 times a second: said once per minute at most while the database is away.
    let lastWarned = -Infinity;
    await sites.watchKeyChanges((error) => {
      if (performance.now() - lastWarned < 60_000) return;
      lastWarned = performance.now();
      app.log.warn({ err: error }, 'could not read key changes; keys are looked up without the cache until it can');
    });
    app.decorate<SiteStore>('sites', sites);
    app.addHook('onClose', async () => sites.close());
  },
  { name: 'sites', dependencies: ['db'] },
);
