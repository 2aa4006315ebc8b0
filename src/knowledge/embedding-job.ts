import type { JobHandler } from '../jobs/loop.js';
import type { MaybePromise } from '../maybe.js';
import type { NewJob } from '../jobs/rules.js';
import type { OllamaEmbedder } from './embedder.js';
import type { ChunkEmbeddings } from './embeddings.js';

/** The job kind that gives a site's chunks their vectors; it runs in a loop of its own (plugins/embeddings.ts). */
export const KNOWLEDGE_EMBEDDING = 'knowledge-embedding';

/** Chunks per `/api/embed` call: few round trips, and a batch a CPU-bound Ollama answers in seconds. */
export const EMBED_BATCH = 64;

export interface EmbeddingPayload {
  siteId: string;
}

export interface EmbeddingResult {
  model: string;
  embedded: number;
}

/** The job that embeds a site's chunks still without a vector of the current model. */
export const embeddingJob = (siteId: string, now = new Date()): NewJob => ({ kind: KNOWLEDGE_EMBEDDING, payload: { siteId } satisfies EmbeddingPayload, scheduledFor: now });

export interface EmbeddingHandlerDeps {
  store: ChunkEmbeddings;
  embedder: Pick<OllamaEmbedder, 'model' | 'require' | 'embedBatch'>;
  batchSize?: number;
}

/**
 * Embeds the site's chunks that have no vector of the current model, a batch per call, until
 * none is left. Each batch's vectors are saved as soon as they come (not in `complete`), so a
 * job cut short (a crash, a shutdown, an outage) keeps what it did: it runs again, or the next
 * start queues it, and asks only for what is still missing. The same query is what re-embeds
 * after a model change (vectors of another model count as missing). Ollama down or without the
 * model is `unavailable`: the loop puts the job off with backoff, spending no attempt.
 */
export function embeddingHandler(deps: EmbeddingHandlerDeps): JobHandler<EmbeddingPayload, EmbeddingResult> {
  const batchSize = deps.batchSize ?? EMBED_BATCH;
  return {
    kind: KNOWLEDGE_EMBEDDING,
    async run({ siteId }, signal) {
      const { model } = deps.embedder;
      await deps.embedder.require();
      let embedded = 0;
      for (;;) {
        signal.throwIfAborted();
        const chunks = await deps.store.missing(siteId, model, batchSize);
        if (chunks.length === 0) return { model, embedded };
        const vectors = await deps.embedder.embedBatch(
          chunks.map((chunk) => chunk.text),
          signal,
        );
        const saved = await deps.store.save(
          siteId,
          model,
          chunks.map((chunk, i) => ({ chunkId: chunk.id, vector: vectors[i]! })),
        );
        // None saved: the chunks were deleted meanwhile (the next look moves past them), unless
        // the first is still missing, which would loop for ever.
        if (saved === 0 && (await deps.store.missing(siteId, model, 1))[0]?.id === chunks[0]!.id) throw new Error('embeddings were made but could not be saved');
        embedded += saved;
      }
    },
    // The vectors are saved batch by batch in run(); the job keeps how many it made.
    *complete(result) {
      return result;
    },
  };
}

/** What queuing an embedding job needs of the job queue. */
export interface EmbeddingJobQueue {
  enqueueUnlessPending(siteId: string, item: NewJob, maxAttempts: number): MaybePromise<unknown>;
}

/**
 * Queues an embedding job for every site with indexed chunks lacking a vector of `model`: at
 * start-up, after a crash, a model change or a time without the model. A site whose job is
 * already pending gets no second one. Answers the number of sites looked at.
 */
export async function queueMissingEmbeddings(store: ChunkEmbeddings, queue: EmbeddingJobQueue, model: string, maxAttempts: number): Promise<number> {
  const sites = await store.sitesMissing(model);
  for (const siteId of sites) await queue.enqueueUnlessPending(siteId, embeddingJob(siteId), maxAttempts);
  return sites.length;
}
