import type { KnowledgeFileRow } from '../db/schema.js';
import type { ChunkRow, IndexOutcome, QueuedFile } from './file-rows.js';
import type { SearchPlan } from './search.js';

/*
 * The questions the knowledge stores ask their database, one port per store (files, search,
 * storage usage, chunk vectors). What differs between the databases lives behind them only:
 * FTS5 against PostgreSQL's text search, sqlite-vec against `real[]`, a row lock where several
 * instances may race.
 */

/** A chunk a ranking found: where it is, its text (file-name line included) and its score, higher being better. */
export type RankedChunk = {
  fileId: string;
  fileName: string;
  text: string;
  ordinal: number;
  score: number;
};

/** A chunk still without a vector of the current model. */
export interface ChunkToEmbed {
  id: number;
  text: string;
}

/** A chunk's vector, as the embedding job saves it. */
export interface ChunkVector {
  chunkId: number;
  vector: Float32Array;
}

export interface NearestOptions {
  limit: number;
  /** Only these files' chunks, when given. */
  fileIds?: readonly string[];
}

export interface KnowledgeFilePort {
  /** Of the given ids (never empty), those that are knowledge files of the site. */
  existingIds(siteId: string, fileIds: readonly string[]): string[];
  get(siteId: string, fileId: string): KnowledgeFileRow | undefined;
  count(siteId: string): number;
  /** The site's files, newest first (ties by id, byte by byte, whatever the collation). */
  page(siteId: string, offset: number, limit: number): KnowledgeFileRow[];
  insert(row: KnowledgeFileRow): void;
  /** Whether the site's file was there to delete (its chunks and vectors go with it). */
  delete(siteId: string, fileId: string): boolean;
  /** Files `uploaded`, oldest first. */
  pending(): QueuedFile[];
  lookUp(fileId: string): QueuedFile | undefined;
  /** The file's row, whatever its site. */
  current(fileId: string): KnowledgeFileRow | undefined;
  /**
   * The file's status, its row held until the transaction ends against another attempt to index
   * it and against its deletion (PostgreSQL: a row lock; SQLite's write transaction holds the
   * whole database already).
   */
  holdForIndexing(fileId: string): string | undefined;
  /** Answers how many chunks went. */
  deleteChunks(fileId: string): number;
  insertChunks(rows: readonly ChunkRow[]): void;
  /** Deletes the file's chunks if it is still `uploaded`; answers how many went. */
  clearChunksAwaitingIndex(fileId: string): number;
  /** Records the outcome on a file still `uploaded`: the row as marked, or undefined. */
  settle(fileId: string, outcome: IndexOutcome, now: Date): KnowledgeFileRow | undefined;
}

export interface KnowledgeSearchPort {
  /** The best chunks of the site's indexed files for the plan, best first: its terms OR-ed, each a phrase. */
  rank(siteId: string, plan: SearchPlan): RankedChunk[];
}

export interface KnowledgeUsagePort {
  /** Bytes of the site's stored files. */
  fileBytes(siteId: string): number;
  /** UTF-8 bytes of the site's chunk text. */
  chunkTextBytes(siteId: string): number;
}

export interface ChunkEmbeddingPort {
  /** Up to `limit` chunks of the site's indexed files without a vector of `model`, oldest first (text as stored). */
  missing(siteId: string, model: string, limit: number): ChunkToEmbed[];
  /** Stores (or replaces) the vectors of the site's chunks; a chunk gone is skipped. Answers how many were stored. */
  save(siteId: string, model: string, vectors: readonly ChunkVector[], now: Date): number;
  /** Sites with indexed chunks lacking a vector of `model`. */
  sitesMissing(model: string): string[];
  /** The site's indexed chunks closest to `vector` among those embedded by `model` (score: cosine similarity). */
  nearest(siteId: string, model: string, vector: Float32Array, options: NearestOptions): RankedChunk[];
}

declare module '../db/steps.js' {
  interface Ports {
    knowledgeFiles: KnowledgeFilePort;
    knowledgeSearch: KnowledgeSearchPort;
    knowledgeUsage: KnowledgeUsagePort;
    chunkEmbeddings: ChunkEmbeddingPort;
  }
}
