import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { KnowledgeIndexer, type ChunkSource, type IndexerOptions } from '../src/knowledge/indexer.js';
import { KnowledgeService } from '../src/knowledge/service.js';
import { createObjectStore, describeStore, type ObjectStore } from '../src/knowledge/storage.js';
import { SiteStorageUsage } from '../src/knowledge/usage.js';

declare module 'fastify' {
  interface FastifyInstance {
    knowledge: KnowledgeService;
    /** The background indexer (tests wait on it). */
    indexer: KnowledgeIndexer;
    /** Where knowledge files are stored (STORAGE_URL): local disk or an S3-compatible bucket. */
    objectStore: ObjectStore;
  }
}

export interface KnowledgePluginOptions {
  /** Where chunks come from; by default extracted in a child process. Tests may pass an in-process one. */
  chunkSource?: ChunkSource;
  /** Lanes and backoff of the indexer (tests shorten them). */
  indexer?: Pick<IndexerOptions, 'concurrency' | 'smallFileBytes' | 'retryBaseMs' | 'retryMaxMs'>;
}

/** Knowledge files in the store STORAGE_URL names, their background indexer, and the knowledge service. */
export default fp(
  async function knowledgePlugin(app: FastifyInstance, opts: KnowledgePluginOptions) {
    const store = await createObjectStore(app.config);
    const usage = new SiteStorageUsage(app.database.db);
    const indexer = new KnowledgeIndexer(app.database.db, store, app.log, opts.chunkSource, {
      ...opts.indexer,
      maxTextBytes: app.config.maxExtractedTextBytes,
      usage,
    });
    app.decorate('objectStore', store);
    app.decorate('indexer', indexer);
    app.decorate('knowledge', new KnowledgeService(app.database.db, store, indexer, { quotaBytes: app.config.siteStorageQuotaBytes, usage }));
    app.addHook('onReady', async () => {
      // A bucket that is missing or refused stops the start here, before the server listens.
      await store.open();
      app.log.info({ store: store.description }, describeStore(store.description));
      const resumed = indexer.resumePending();
      if (resumed > 0) app.log.info({ files: resumed }, 'resuming indexing of files left unindexed');
    });
    app.addHook('onClose', async () => {
      await indexer.close();
      await store.close();
    });
  },
  { name: 'knowledge', dependencies: ['db'] },
);
