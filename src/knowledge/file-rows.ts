import type { KnowledgeFileRow } from '../db/schema.js';
import { notFound } from '../errors.js';
import { MEDIA_TYPES, type KnowledgeExtension } from './detect.js';
import { storageKeyFor } from './storage.js';

// The rows of knowledge files and chunks as both databases write them (service.ts and
// indexer.ts on SQLite, pg-files.ts on PostgreSQL): built here once, stored there.

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
export function chunkRows(fileId: string, siteId: string, texts: readonly string[], start = 0) {
  return texts.map((text, i) => ({ fileId, siteId, ordinal: start + i, text }));
}

/** The UTF-8 bytes of chunk texts, as the storage quota counts them. */
export const chunkTextBytes = (texts: readonly string[]) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
