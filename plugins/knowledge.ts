import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { KnowledgeIndexer, type ChunkSource, type IndexerOptions } from '../src/knowledge/indexer.js';
import { KnowledgeService } from '../src/knowledge/service.js';
import { FileStorage } from '../src/knowledge/storage.js';
import { SiteStorageUsage } from '../src/knowledge/usage.js';

declare module 'fastify' {
  interface FastifyInstance {
    knowledge: KnowledgeService;
    /** The background indexer (tests wait on it). */
    indexer: KnowledgeIndexer;
  }
}

export interface KnowledgePluginOptions {
  /** Where chunks come from; by default extracted in a child process. Tests may pass an in-process one. */
  chunkSource?: ChunkSource;
  /** Lanes and backoff of the indexer (tests shorten them). */
  indexer?: Pick<IndexerOptions, 'concurrency' | 'smallFileBytes' | 'retryBaseMs' | 'retryMaxMs'>;
}

/** Knowledge files under DATA_DIR/storage, their background indexer, and the knowledge service. */
export default fp(
  async function knowledgePlugin(app: FastifyInstance, opts: KnowledgePluginOptions) {
    const storage = new FileStorage(app.config.dataDir);
    const usage = new SiteStorageUsage(app.database.db);
    const indexer = new KnowledgeIndexer(app.database.db, storage, app.log, opts.chunkSource, {
      ...opts.indexer,
      maxTextBytes: app.config.maxExtractedTextBytes,
      usage,
    });
    app.decorate('indexer', indexer);
    app.decorate('knowledge', new KnowledgeService(app.database.db, storage, indexer, { quotaBytes: app.config.siteStorageQuotaBytes, usage }));
    app.addHook('onReady', async () => {
      storage.clearTemporaryFiles();
      const resumed = indexer.resumePending();
      if (resumed > 0) app.log.info({ files: resumed }, 'resuming indexing of files left unindexed');
    });
    app.addHook('onClose', async () => indexer.close());
  },
  { name: 'knowledge', dependencies: ['db'] },
);
