import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { KnowledgeFiles } from '../src/knowledge/files.js';
import { KnowledgeIndexer, type ChunkSource, type IndexerOptions } from '../src/knowledge/indexer.js';
import { PgKnowledgeFiles } from '../src/knowledge/pg-files.js';
import { PgSiteStorageUsage } from '../src/knowledge/pg-usage.js';
import { KnowledgeService } from '../src/knowledge/service.js';
import { createObjectStore, describeStore, type ObjectStore } from '../src/knowledge/storage.js';
import { SiteStorageUsage } from '../src/knowledge/usage.js';
import { OllamaEmbedder } from '../src/knowledge/embedder.js';
import { ChunkEmbeddings } from '../src/knowledge/embeddings.js';
import { VectorRetriever, type EmbeddingStore } from '../src/knowledge/hybrid.js';
import { PgChunkEmbeddings } from '../src/knowledge/pg-embeddings.js';

declare module 'fastify' {
  interface FastifyInstance {
    knowledge: KnowledgeService;
    /**
     * Knowledge file rows, chunks and status in the database DATABASE_URL chose. Plugins register
     * here what runs inside the transaction that marks a file indexed or failed (`onSettled`):
     * synchronous listeners on SQLite, asynchronous ones on PostgreSQL (narrow with twinOf).
     */
    knowledgeFiles: KnowledgeFiles | PgKnowledgeFiles;
    /** The background indexer (tests wait on it). */
    indexer: KnowledgeIndexer;
    /** Where knowledge files are stored (STORAGE_URL): local disk or an S3-compatible bucket. */
    objectStore: ObjectStore;
    /** Chunk vectors and the vector side of search, when OLLAMA_EMBED_MODEL names a model; null otherwise. */
    vectors: { store: EmbeddingStore; retriever: VectorRetriever } | null;
  }
}

export interface KnowledgePluginOptions {
  /** Where chunks come from; by default extracted in a child process. Tests may pass an in-process one. */
  chunkSource?: ChunkSource;
  /** Lanes and backoff of the indexer (tests shorten them). */
  indexer?: Pick<IndexerOptions, 'concurrency' | 'smallFileBytes' | 'retryBaseMs' | 'retryMaxMs'>;
  /** Timings of the embedding model's checks and of search's fallback to lexical (tests shorten them). */
  embeddings?: KnowledgeEmbeddingOptions;
}

export interface KnowledgeEmbeddingOptions {
  /** How long the model list is trusted (30 s). */
  checkTtlMs?: number;
  /** Budget of a query's embedding (2 s). */
  queryTimeoutMs?: number;
  /** How long search stays lexical after a query could not be embedded (5 s). */
  retryAfterMs?: number;
}

/** The vector store of the database in use, and the retriever over it, when an embedding model is configured. */
function vectorsOf(app: FastifyInstance, options: KnowledgeEmbeddingOptions = {}) {
  const model = app.config.ollamaEmbedModel;
  if (!model) return null;
  const embedder = new OllamaEmbedder({ host: app.config.ollamaHost, model, checkTtlMs: options.checkTtlMs, queryTimeoutMs: options.queryTimeoutMs });
  const { backend } = app;
  const store = backend.kind === 'sqlite' ? new ChunkEmbeddings(backend.sqlite.db) : new PgChunkEmbeddings(backend.postgres.db);
  return { store, retriever: new VectorRetriever(embedder, store, { retryAfterMs: options.retryAfterMs, log: app.log }) };
}

/** The files store and storage tally of the database in use, SQLite's or PostgreSQL's twin. */
function knowledgeFilesOf(app: FastifyInstance) {
  const { backend } = app;
  if (backend.kind === 'sqlite') {
    const usage = new SiteStorageUsage(backend.sqlite.db);
    return { files: new KnowledgeFiles(backend.sqlite.db, usage), usage };
  }
  const usage = new PgSiteStorageUsage(backend.postgres.db);
  return { files: new PgKnowledgeFiles(backend.postgres.db, usage), usage };
}

/** Knowledge files in the store STORAGE_URL names, their background indexer, and the knowledge service. */
export default fp(
  async function knowledgePlugin(app: FastifyInstance, opts: KnowledgePluginOptions) {
    const store = await createObjectStore(app.config);
    const { files, usage } = knowledgeFilesOf(app);
    const indexer = new KnowledgeIndexer(files, store, app.log, opts.chunkSource, {
      ...opts.indexer,
      maxTextBytes: app.config.maxExtractedTextBytes,
    });
    app.decorate('objectStore', store);
    app.decorate<KnowledgeFiles | PgKnowledgeFiles>('knowledgeFiles', files);
    app.decorate('indexer', indexer);
    const vectors = vectorsOf(app, opts.embeddings);
    app.decorate('vectors', vectors);
    app.decorate('knowledge', new KnowledgeService(files, store, indexer, { quotaBytes: app.config.siteStorageQuotaBytes, usage, vectors: vectors?.retriever }));
    app.addHook('onReady', async () => {
      // A bucket that is missing or refused stops the start here, before the server listens.
      await store.open();
      app.log.info({ store: store.description }, describeStore(store.description));
      const resumed = await indexer.resumePending();
      if (resumed > 0) app.log.info({ files: resumed }, 'resuming indexing of files left unindexed');
    });
    app.addHook('onClose', async () => {
      await indexer.close();
      await store.close();
    });
  },
  { name: 'knowledge', dependencies: ['db'] },
);
