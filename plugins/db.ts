import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../src/config.js';
import { SERVER_BUSY_TIMEOUT_MS, openDatabase, type DbHandle } from '../src/db/client.js';
import { bootstrapFirstSite } from '../src/sites/keys.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** For plugins that build services; routes use the services, never this. */
    database: DbHandle;
  }
}

export interface DbPluginOptions {
  config: Config;
  /**
   * Create the first site when the database has none (the server does; the admin CLI does
   * not), and hand its generated key to `onKey`, the one chance to show it. The server does
   * it once listening (`when: 'listen'`), so a start that cannot bind its port creates nothing.
   */
  bootstrap?: { onKey(siteId: string, key: string): void; when?: 'ready' | 'listen' };
}

/** Opens the database (applying migrations), shares it and the configuration, closes it last. */
export default fp(
  async function dbPlugin(app: FastifyInstance, opts: DbPluginOptions) {
    const handle = openDatabase(opts.config.dataDir, { busyTimeoutMs: SERVER_BUSY_TIMEOUT_MS });
    app.addHook('onClose', async () => handle.close());
    // A listening server checkpoints in the background; tests that only inject keep SQLite's own.
    app.addHook('onListen', async () => handle.startBackgroundCheckpoints());
    app.decorate('config', opts.config);
    app.decorate('database', handle);
    const { bootstrap } = opts;
    if (bootstrap) {
      const createFirstSite = async () => {
        const created = bootstrapFirstSite(handle.db, opts.config.siteName, opts.config.bootstrapApiKey);
        if (created?.generatedKey) bootstrap.onKey(created.site.id, created.generatedKey);
      };
      if (bootstrap.when === 'listen') app.addHook('onListen', createFirstSite);
      else await createFirstSite();
    }
  },
  { name: 'db' },
);
