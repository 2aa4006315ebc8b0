import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { OllamaEmbedder } from '../src/knowledge/embedder.js';
import type { ChunkEmbeddings } from '../src/knowledge/embeddings.js';
import type { KnowledgeFiles } from '../src/knowledge/files.js';
import { VectorRetriever } from '../src/knowledge/hybrid.js';
import { KnowledgeIndexer, type ChunkSource, type IndexerOptions } from '../src/knowledge/indexer.js';
import { KnowledgeService } from '../src/knowledge/service.js';
import { createObjectStore, describeStore, type ObjectStore } from '../src/knowledge/storage.js';

declare module 'fastify' {
  interface FastifyInstance {
    knowledge: KnowledgeService;
    /**
     * Knowledge file rows, chunks and status. Plugins register here what runs inside the
     * transaction that marks a file indexed or failed (`onSettled`).
     */
    knowledgeFiles: KnowledgeFiles;
    /** The background indexer (tests wait on it). */
    indexer: KnowledgeIndexer;
    /** Where knowledge files are stored (STORAGE_URL): local disk or an S3-compatible bucket. */
    objectStore: ObjectStore;
    /**
     * Chunk vectors and the vector side of search, when OLLAMA_EMBED_MODEL names a model, or by
     * default with Ollama in play (`auto`: the default model, while Ollama has it); null otherwise.
     */
    vectors: { store: ChunkEmbeddings; retriever: VectorRetriever; auto: boolean } | null;
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

const AUTO_LIST_TIMEOUT_MS = 1_500;

/** The chunk vectors and the retriever over them, when an embedding model is configured. */
function vectorsOf(app: FastifyInstance, store: ChunkEmbeddings, options: KnowledgeEmbeddingOptions = {}) {
  const model = app.config.ollamaEmbedModel;
  if (!model) return null;
  const auto = app.config.ollamaEmbedAuto ?? false;
  // The default model is looked for with a short budget: an Ollama that is not there must not slow searches.
  const listTimeoutMs = auto ? AUTO_LIST_TIMEOUT_MS : undefined;
  const embedder = new OllamaEmbedder({ host: app.config.ollamaHost, model, checkTtlMs: options.checkTtlMs, queryTimeoutMs: options.queryTimeoutMs, listTimeoutMs });
  return { store, auto, retriever: new VectorRetriever(embedder, store, { retryAfterMs: options.retryAfterMs, log: app.log, auto }) };
}

/** Knowledge files in the store STORAGE_URL names, their background indexer, and the knowledge service. */
export default fp(
  async function knowledgePlugin(app: FastifyInstance, opts: KnowledgePluginOptions) {
    const store = await createObjectStore(app.config);
    const { files, search, usage, embeddings } = app.stores.knowledge;
    const indexer = new KnowledgeIndexer(files, store, app.log, opts.chunkSource, {
      ...opts.indexer,
      maxTextBytes: app.config.maxExtractedTextBytes,
    });
    app.decorate('objectStore', store);
    app.decorate('knowledgeFiles', files);
    app.decorate('indexer', indexer);
    const vectors = vectorsOf(app, embeddings, opts.embeddings);
    app.decorate('vectors', vectors);
    app.decorate('knowledge', new KnowledgeService(files, search, store, indexer, { quotaBytes: app.config.siteStorageQuotaBytes, usage, vectors: vectors?.retriever }));
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
