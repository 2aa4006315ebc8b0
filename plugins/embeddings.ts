import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobLoop, jobLoopOptions, type Clock } from '../src/jobs/loop.js';
import { enqueueUnlessPendingSteps } from '../src/jobs/store.js';
import { embeddingHandler, embeddingJob, KNOWLEDGE_EMBEDDING, queueMissingEmbeddings } from '../src/knowledge/embedding-job.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The embedding loop, when OLLAMA_EMBED_MODEL names a model; null otherwise. */
    embeddings: {
      loop: JobLoop;
      /** Queues an embedding job for every site with chunks still missing a vector of the model (done at start). */
      queueMissing(): Promise<number>;
    } | null;
  }
}

export interface EmbeddingsPluginOptions {
  /** Start the loop once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  /** First wait after Ollama was found down or without the model (doubling, up to 15 minutes). */
  backoffBaseMs?: number;
  /** Chunks per `/api/embed` call. */
  batchSize?: number;
}

/** Embedding jobs run one at a time: Ollama answers one batch at a time per model anyway. */
const EMBEDDING_CONCURRENCY = 1;

/**
 * Embeddings of knowledge chunks (OLLAMA_EMBED_MODEL): a JobLoop over the `knowledge-embedding`
 * jobs alone, so embedding never waits behind generation nor takes its slots, and an upload
 * never waits for it. A file marked indexed queues its site's job in the same transaction; the
 * start queues one for every site with chunks still missing a vector of the model (a crash, a
 * model change). /ready reports the retrieval mode. Without a model: nothing, search is lexical.
 */
export default fp(
  async function embeddingsPlugin(app: FastifyInstance, opts: EmbeddingsPluginOptions) {
    const { config, vectors } = app;
    if (!vectors) {
      app.decorate('embeddings', null);
      return;
    }
    const { store, retriever, auto } = vectors;
    const { embedder } = retriever;
    const model = embedder.model;
    const maxAttempts = config.jobMaxAttempts;
    const options = jobLoopOptions(config, { concurrency: EMBEDDING_CONCURRENCY, backoffBaseMs: opts.backoffBaseMs, clock: opts.clock, random: opts.random, log: app.log });
    const handlerDeps = { store, embedder, batchSize: opts.batchSize };

    let live = false;
    // After the transaction that queued a job: on SQLite the next turn of the event loop is after
    // its commit; on PostgreSQL it may come first, and the next poll finds the job instead.
    const wake = () =>
      setImmediate(() => {
        if (live) void loop.tick();
      });

    const queue = app.stores.jobs.scoped({ only: [KNOWLEDGE_EMBEDDING] });
    const loop = new JobLoop(queue, [embeddingHandler(handlerDeps)], options);
    // A file marked indexed queues its site's job in the same transaction.
    app.knowledgeFiles.onSettled(function* (file) {
      // The default model: nothing is queued for it until Ollama is seen to have it (then all at once, below).
      if (file.status !== 'indexed' || (auto && !embedder.lastSeenAvailable)) return;
      if (yield* enqueueUnlessPendingSteps(file.siteId, embeddingJob(file.siteId), maxAttempts)) wake();
    });
    const queueMissing = () => queueMissingEmbeddings(store, queue, model, maxAttempts);
    app.decorate('embeddings', { loop, queueMissing });

    // Hybrid while Ollama serves the model and queries can be embedded; the model's name only (no host).
    app.readiness.watchRetrieval(async () => {
      const { available } = await embedder.status();
      return { mode: available && retriever.answering ? 'hybrid' : 'lexical', model };
    });

    // The default model found (at the start, or pulled later and seen by a search or /ready): every chunk without a vector is queued.
    const queueOnceAvailable = async () => {
      try {
        const sites = await queueMissing();
        if (sites > 0) app.log.info({ sites, model }, `Ollama has ${model}: queued embedding of chunks without a vector; retrieval is hybrid`);
        wake();
      } catch (error) {
        app.log.warn({ err: error }, 'could not queue the embedding of chunks without a vector');
      }
    };
    if (auto) embedder.onAvailable(() => void (live ? queueOnceAvailable() : undefined));

    if (opts.autoStart ?? true) {
      // Not before listening, like the other loops: a start that fails to bind embeds nothing.
      app.addHook('onListen', async () => {
        loop.start();
        live = true;
        if (auto) {
          // Not awaited: an Ollama that is not there must not hold the start up.
          void embedder.status(true).then(async ({ available }) => {
            if (available && live) await queueOnceAvailable();
            else app.log.info({ model }, `Ollama does not serve ${model} (ollama pull ${model} for hybrid retrieval); searching lexically`);
          });
          return;
        }
        try {
          const sites = await queueMissing();
          if (sites > 0) app.log.info({ sites, model }, 'queued embedding of chunks without a vector of the model');
          wake();
        } catch (error) {
          // The next file indexed queues its site again; the others wait for the next start.
          app.log.warn({ err: error }, 'could not queue the embedding of chunks without a vector');
        }
      });
    }
    app.addHook('preClose', async () => {
      live = false;
      loop.stopClaiming();
    });
    app.addHook('onClose', async () => {
      live = false;
      await loop.stop();
    });
  },
  { name: 'embeddings', dependencies: ['db', 'knowledge', 'generator', 'jobs'] },
);
