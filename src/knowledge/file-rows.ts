import type { KnowledgeFileRow } from '../db/schema.js';
import { notFound } from '../errors.js';
import type { Page } from '../pagination.js';
import { MEDIA_TYPES, type KnowledgeExtension } from './detect.js';
import { storageKeyFor } from './storage.js';

// The rows of knowledge files and chunks as both databases write them: built here once,
// stored by KnowledgeFiles (files.ts) through either database's adapter.

export type { KnowledgeFileRow };

/** A file gone from the site, or never its own. */
export const knowledgeItemNotFound = () => notFound('knowledge item');

/** What the indexer needs to know of a file to queue it. */
export interface QueuedFile {
  id: string;
  siteId: string;
  sizeBytes: number;
  extension: string;
}

/** The columns of a knowledge_files table (either database's) that make a QueuedFile. */
export const queuedFileColumns = <T extends Record<keyof QueuedFile, unknown>>(table: T): Pick<T, keyof QueuedFile> => ({
  id: table.id,
  siteId: table.siteId,
  sizeBytes: table.sizeBytes,
  extension: table.extension,
});

/** How indexing ended for a file: what its row records. */
export interface IndexOutcome {
  status: 'indexed' | 'failed';
  error: string | null;
  chunkCount: number;
}

/**
 * Knowledge file rows, their chunks and their status, as the service and the indexer use them:
 * KnowledgeFiles (files.ts) on either database, or a stand-in in tests. Storing files,
 * extracting text, queuing and retrying stay with the service and the indexer.
 */
export interface KnowledgeFileStore {
  /** Of the given ids, those that are knowledge files of the site. */
  existingIds(siteId: string, fileIds: readonly string[]): Promise<Set<string>>;
  /** The site's file; 404 when it is not. */
  get(siteId: string, fileId: string): Promise<KnowledgeFileRow>;
  /** The site's files, newest first. */
  list(siteId: string, page: number, limit: number): Promise<Page<KnowledgeFileRow>>;
  /** Records a stored upload (uploadedFileRow). */
  insert(row: KnowledgeFileRow): Promise<void>;
  /** Deletes the site's file row, its chunks with it; 404 when it is gone. */
  delete(siteId: string, fileId: string): Promise<void>;
  /** Files left `uploaded` (by a crash, or a stop), oldest first: to index again. */
  pending(): Promise<QueuedFile[]>;
  lookUp(fileId: string): Promise<QueuedFile | undefined>;
  /** The file's row as it is now, whatever its site. */
  current(fileId: string): Promise<KnowledgeFileRow | undefined>;
  /** Removes the chunks of a file that still awaits indexing (a file indexed or failed keeps its own). */
  clearChunks(fileId: string, siteId?: string): Promise<void>;
  /**
   * Writes the file's chunks and marks it indexed, if it still awaits indexing: answers the row
   * as marked, or undefined when the file was deleted, settled meanwhile, or `signal` stopped
   * the writing (the file is then left `uploaded`).
   */
  writeIndex(fileId: string, siteId: string, texts: readonly string[], signal?: AbortSignal): Promise<KnowledgeFileRow | undefined>;
  /** Marks an `uploaded` file indexed or failed (a failed file keeps no chunks); undefined when gone or marked already. */
  finish(fileId: string, outcome: IndexOutcome): Promise<KnowledgeFileRow | undefined>;
}

/** The row of a stored upload, recorded `uploaded` before it is indexed. */
export function uploadedFileRow(
  siteId: string,
  id: string,
  upload: { name: string; extension: KnowledgeExtension; size: number },
  now: Date,
): KnowledgeFileRow {
  return {
    id,
    siteId,
    name: upload.name,
    extension: upload.extension,
    mediaType: MEDIA_TYPES[upload.extension],
    sizeBytes: upload.size,
    status: 'uploaded',
    error: null,
    chunkCount: 0,
    storageKey: storageKeyFor(siteId, id, upload.extension),
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The knowledge_chunks rows of a file's chunks `texts`, the first being chunk `start` of the
 * file. The same rows suit both databases: SQLite's FTS5 index follows them by trigger,
 * PostgreSQL's search_vector is a generated column.
 */
export function chunkRows(fileId: string, siteId: string, texts: readonly string[], start = 0): ChunkRow[] {
  return texts.map((text, i) => ({ fileId, siteId, ordinal: start + i, text }));
}

/** A knowledge_chunks row as written (its id is the database's). */
export interface ChunkRow {
  fileId: string;
  siteId: string;
  ordinal: number;
  text: string;
}

/** The UTF-8 bytes of chunk texts, as the storage quota counts them. */
export const chunkTextBytes = (texts: readonly string[]) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
