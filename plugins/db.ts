import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../src/config.js';
import type { Db, DbHandle } from '../src/db/client.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    dbHandle: DbHandle;
  }
}

/** Shares the open database and the configuration; closes the database last, on app close. */
export default fp(
  async function dbPlugin(app: FastifyInstance, opts: { config: Config; handle: DbHandle }) {
    app.decorate('config', opts.config);
    app.decorate('dbHandle', opts.handle);
    app.decorate('db', opts.handle.db);
    app.addHook('onClose', async () => opts.handle.close());
  },
  { name: 'db' },
);
