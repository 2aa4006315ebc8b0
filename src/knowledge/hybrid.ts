import type { OllamaEmbedder } from './embedder.js';
import type { ChunkEmbeddings } from './embeddings.js';
import type { Passage, SearchOptions } from './search.js';

/*
 * Meaning-based retrieval beside BM25, the same on both databases: chunks' vectors are kept by
 * ChunkEmbeddings (embeddings.ts), and a search fuses the two rankings by reciprocal rank.
 */

/** Which retrieval a search used: BM25 alone, or BM25 fused with vector similarity. */
export type RetrievalMode = 'lexical' | 'hybrid';

/** Reciprocal rank fusion's constant (Cormack et al., 2009): ranks far down a list still count a little. */
export const RRF_K = 60;

/** A passage's identity across rankings: its file and place in it. */
export const passageKey = (passage: Passage) => `${passage.fileId}\u0000${passage.ordinal ?? passage.text}`;

/**
 * Reciprocal rank fusion: each passage scores the sum over the rankings holding it of
 * 1 / (k + rank), rank from 1; best first (higher is better), ties kept in the first ranking's
 * order. A passage found by one ranking only still comes through.
 */
export function fuseRankings(rankings: readonly (readonly Passage[])[], limit: number, k = RRF_K): Passage[] {
  const fused = new Map<string, { passage: Passage; score: number; order: number }>();
  let order = 0;
  for (const ranking of rankings) {
    ranking.forEach((passage, index) => {
      const key = passageKey(passage);
      const entry = fused.get(key) ?? { passage, score: 0, order: order++ };
      entry.score += 1 / (k + index + 1);
      fused.set(key, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map(({ passage, score }) => ({ ...passage, score: Number(score.toPrecision(4)) }));
}

/** Candidates each ranking offers the fusion: more than a page, so that agreement lower down counts. */
export const FUSION_CANDIDATES = 50;

export interface VectorRetrieverOptions {
  /** After a query could not be embedded, search stays lexical this long before trying again (an unanswering Ollama costs every search its timeout otherwise). */
  retryAfterMs?: number;
  now?: () => number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** The model is the default one, not configured: queries go to it only while Ollama is seen to have it. */
  auto?: boolean;
}

const DEFAULT_RETRY_AFTER_MS = 5_000;

/**
 * The vector side of a search: embeds the query through the embedding model and ranks the
 * site's embedded chunks by cosine similarity. Answers null when the query cannot be embedded
 * now (Ollama down, slow or without the model), so the search stays lexical for that request.
 */
export class VectorRetriever {
  private readonly retryAfterMs: number;
  private readonly now: () => number;
  private failedUntil = -Infinity;
  private failing = false;

  constructor(
    readonly embedder: OllamaEmbedder,
    private readonly store: ChunkEmbeddings,
    private readonly options: VectorRetrieverOptions = {},
  ) {
    this.retryAfterMs = options.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    this.now = options.now ?? Date.now;
  }

  get model(): string {
    return this.embedder.model;
  }

  /** False while queries cannot be embedded (since the last failure, until one succeeds). */
  get answering(): boolean {
    return !this.failing;
  }

  /** The site's closest passages to the query, or null when the query cannot be embedded now. */
  async nearest(siteId: string, query: string, options: SearchOptions & { limit: number }): Promise<Passage[] | null> {
    if (this.now() < this.failedUntil) return null;
    // The default model (auto): used only while Ollama is seen to have it, and no query is sent before.
    if (this.options.auto && !(await this.embedder.status()).available) return null;
    let vector: Float32Array;
    try {
      vector = await this.embedder.embedQuery(query);
    } catch (error) {
      this.failedUntil = this.now() + this.retryAfterMs;
      if (!this.failing) {
        this.failing = true;
        const reason = error instanceof Error ? error.message : String(error);
        this.options.log?.warn({ model: this.model, reason }, `search queries cannot be embedded (${reason}); searching lexically`);
      }
      return null;
    }
    if (this.failing) {
      this.failing = false;
      this.options.log?.info({ model: this.model }, 'search queries can be embedded again; searching hybrid');
    }
    try {
      return await this.store.nearest(siteId, this.model, vector, { limit: options.limit, fileIds: options.fileIds });
    } catch (error) {
      // A vector the stored ones cannot be compared with (the model's dimension changed under
      // the same name, say): this search is lexical, and says so.
      this.options.log?.warn({ err: error, model: this.model }, 'vector search failed; searching lexically');
      return null;
    }
  }
}
