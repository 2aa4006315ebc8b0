import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { withoutWordSeparators } from '../text/cjk.js';
import type { ChunkToEmbed, ChunkVector, NearestOptions } from './port.js';
import { toPassage, type Passage } from './search.js';

/** What an embedding model reads of a chunk: its text, file name line included, without the index's word separators. */
export const embeddingText = (text: string) => withoutWordSeparators(text);

/** Vectors per save statement (a vector of ~768 floats each). */
const SAVE_BATCH = 100;

/**
 * Chunk vectors, one per chunk, each recording its model (a model change re-embeds; deleting a
 * chunk, so a file or a re-indexing, deletes its vector by foreign key), on either database:
 * SQLite keeps int8 vectors ranked with sqlite-vec, PostgreSQL `real[]` ranked in SQL.
 */
export class ChunkEmbeddings {
  constructor(private readonly db: StepDatabase) {}

  /** Up to `limit` chunks of the site's indexed files whose vector is missing or of another model, oldest first. */
  async missing(siteId: string, model: string, limit: number): Promise<ChunkToEmbed[]> {
    const chunks = await this.db.read(() => ask('chunkEmbeddings', 'missing', siteId, model, limit));
    return chunks.map((chunk) => ({ id: chunk.id, text: embeddingText(chunk.text) }));
  }

  /** Stores (or replaces) chunk vectors; a chunk deleted meanwhile is skipped. Answers how many were stored. */
  save(siteId: string, model: string, vectors: readonly ChunkVector[], now = new Date()): Promise<number> {
    return this.db.write(function* (): Steps<number> {
      let saved = 0;
      for (let start = 0; start < vectors.length; start += SAVE_BATCH) saved += yield* ask('chunkEmbeddings', 'save', siteId, model, vectors.slice(start, start + SAVE_BATCH), now);
      return saved;
    });
  }

  /** Sites that have indexed chunks without a vector of `model` (after a crash, a model change, an outage). */
  sitesMissing(model: string): Promise<string[]> {
    return this.db.read(() => ask('chunkEmbeddings', 'sitesMissing', model));
  }

  /**
   * The site's passages closest to `vector` among those embedded by `model`, closest first
   * (score: cosine similarity). Files being indexed are left out, as in lexical search.
   */
  async nearest(siteId: string, model: string, vector: Float32Array, options: NearestOptions): Promise<Passage[]> {
    const ranked = await this.db.read(() => ask('chunkEmbeddings', 'nearest', siteId, model, vector, options));
    return ranked.map((chunk) => toPassage(chunk, chunk.score));
  }
}
