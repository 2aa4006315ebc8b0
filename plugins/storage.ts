import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { KnowledgeIndexer } from '../src/knowledge/indexer.js';
import { FileStorage } from '../src/knowledge/storage.js';

declare module 'fastify' {
  interface FastifyInstance {
    storage: FileStorage;
    indexer: KnowledgeIndexer;
  }
}

/** Knowledge file storage under DATA_DIR/storage and the background indexer. */
export default fp(
  async function storagePlugin(app: FastifyInstance) {
    const storage = new FileStorage(app.config.dataDir);
    const indexer = new KnowledgeIndexer(app.dbHandle, storage, app.log);
    app.decorate('storage', storage);
    app.decorate('indexer', indexer);
    app.addHook('onReady', async () => {
      storage.clearTemporaryFiles();
      const resumed = indexer.resumePending();
      if (resumed > 0) app.log.info({ files: resumed }, 'resuming indexing of files left unindexed');
    });
    app.addHook('onClose', async () => indexer.close());
  },
  { name: 'storage', dependencies: ['db'] },
);
