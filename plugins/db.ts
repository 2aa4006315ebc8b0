import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../src/config.js';
import { describeDatabase, openBackend, type Backend } from '../src/db/backend.js';
import type { DbHandle } from '../src/db/sqlite.js';
import type { Stores } from '../src/stores/index.js';
import { sqliteStores } from '../src/stores/sqlite.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** For plugins that build services; routes use the services, never this. */
    backend: Backend;
    /** Every store, built for the database in use (plugins decorate the app with them). */
    stores: Stores;
    /** The SQLite database, when the service runs on SQLite (tests and benchmarks look behind the API with it). */
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
  bootstrap?: {
    onKey(siteId: string, key: string): void;
    /** Told the first owner's email and the token of its one-time setup link (made with the first site). */
    onOwnerSetup?(email: string, token: string): void;
    when?: 'ready' | 'listen';
  };
  /** SQLite's lock wait (default: the server's short one). */
  busyTimeoutMs?: number;
}

/** Opens the database DATABASE_URL names (applying migrations), shares it and the configuration, closes it last. */
export default fp(
  async function dbPlugin(app: FastifyInstance, opts: DbPluginOptions) {
    const backend = await openBackend(opts.config, {
      busyTimeoutMs: opts.busyTimeoutMs,
      onIdleError: (error) => app.log.warn({ err: error }, 'a database connection failed while idle; it is replaced'),
      onFullDisk: () => app.log.warn('the disk is full: the database is held by this server alone until its next restart (blog-admin waits); reads are served, writes answer 507 until space is back'),
    });
    app.addHook('onClose', async () => backend.close());
    app.decorate('config', opts.config);
    app.decorate<Backend>('backend', backend);
    // The one place that picks a database's stores.
    // PostgreSQL's stores are loaded only for a service that runs on it.
    const stores = backend.kind === 'sqlite' ? sqliteStores(backend.sqlite) : (await import('../src/stores/postgres.js')).postgresStores(backend.postgres);
    app.decorate<Stores>('stores', stores);
    if (backend.kind === 'sqlite') {
      app.decorate('database', backend.sqlite);
      // A listening server checkpoints in the background; tests that only inject keep SQLite's own.
      app.addHook('onListen', async () => backend.sqlite.startBackgroundCheckpoints());
    }
    app.log.info({ database: backend.location }, `database: ${describeDatabase(backend.location)}`);
    const { bootstrap } = opts;
    if (bootstrap) {
      const { siteName, bootstrapApiKey } = opts.config;
      const createFirstSite = async () => {
        const created = await stores.sites.bootstrapFirstSite(siteName, bootstrapApiKey);
        if (created?.generatedKey) bootstrap.onKey(created.site.id, created.generatedKey);
        // The first site gets its first owner: ADMIN_EMAIL, with a one-time link to set a password.
        if (created) {
          const token = await stores.accounts({}).bootstrapOwner(created.site.id, opts.config.adminEmail);
          if (token) bootstrap.onOwnerSetup?.(opts.config.adminEmail, token);
        }
      };
      if (bootstrap.when === 'listen') app.addHook('onListen', createFirstSite);
      else await createFirstSite();
    }
  },
  { name: 'db' },
);
