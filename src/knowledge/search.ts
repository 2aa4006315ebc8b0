import type Database from 'better-sqlite3';
import type { Passage } from '../generation/types.js';

export interface SearchOptions {
  fileIds?: readonly string[];
  limit?: number;
}

const MAX_TERMS = 32;
// Chunks start with their file's name on a line of its own (it makes names searchable).
const FILE_HEADER = /^\[[^\n]*\]\n/;

/**
 * Turns free user text into an FTS5 query that cannot be syntax: every word (letters and
 * digits only) becomes a quoted string, joined with OR so BM25 ranks passages matching more
 * words higher. Operators, quotes, `*`, `NEAR(`, `-` and column filters are just dropped.
 */
export function toFtsQuery(text: string): string | null {
  const words = text.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
  const unique = [...new Set(words.map((w) => w.toLowerCase()))].slice(0, MAX_TERMS);
  return unique.length ? unique.map((w) => `"${w}"`).join(' OR ') : null;
}

/**
 * The best passages of a site's indexed files for a query, best first (score: higher is better).
 * Files still being indexed are left out, so a half-written file never grounds a post.
 */
export function searchKnowledge(sqlite: Database.Database, siteId: string, query: string, options: SearchOptions = {}): Passage[] {
  const match = toFtsQuery(query);
  if (!match) return [];
  const limit = Math.min(Math.max(options.limit ?? 8, 1), 50);
  const params: unknown[] = [match, siteId];
  let fileFilter = '';
  if (options.fileIds) {
    if (options.fileIds.length === 0) return [];
    fileFilter = `and f.file_id in (${options.fileIds.map(() => '?').join(',')})`;
    params.push(...options.fileIds);
  }
  params.push(limit);
  const rows = sqlite
    .prepare(
      `select f.file_id as fileId, k.name as fileName, f.text as text, bm25(knowledge_fts) as rank
         from knowledge_fts f join knowledge_files k on k.id = f.file_id
        where knowledge_fts match ? and f.site_id = ? and k.status = 'indexed' ${fileFilter}
        order by rank limit ?`,
    )
    .all(...params) as { fileId: string; fileName: string; text: string; rank: number }[];
  return rows.map((row) => ({
    fileId: row.fileId,
    fileName: row.fileName,
    text: row.text.replace(FILE_HEADER, ''),
    score: Math.round(-row.rank * 1000) / 1000,
  }));
}
