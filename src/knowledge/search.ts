import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeFiles } from '../db/schema.js';
import { STOPWORDS } from '../text/stopwords.js';

/** A knowledge-base excerpt: a search result, and what grounds a generated post. */
export interface Passage {
  fileId: string;
  fileName: string;
  text: string;
  score: number;
}

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
 * Stopwords, which nearly every passage contains, are dropped unless the query has nothing
 * else: OR-ing them in would make BM25 score most of the index ("how to brew coffee").
 */
export function toFtsQuery(text: string): string | null {
  const words = [...new Set((text.normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))];
  const meaningful = words.filter((w) => !STOPWORDS.has(w));
  const unique = (meaningful.length ? meaningful : words).slice(0, MAX_TERMS);
  return unique.length ? unique.map((w) => `"${w}"`).join(' OR ') : null;
}

/**
 * The best passages of a site's indexed files for a query, best first (score: higher is better).
 * Files still being indexed are left out, so a half-written file never grounds a post.
 */
export function searchKnowledge(db: Executor, siteId: string, query: string, options: SearchOptions = {}): Passage[] {
  const match = toFtsQuery(query);
  if (!match) return [];
  const limit = Math.min(Math.max(options.limit ?? 8, 1), 50);
  if (options.fileIds?.length === 0) return [];
  const fileFilter = options.fileIds ? sql`and ${inArray(knowledgeFiles.id, [...options.fileIds])}` : sql``;
  // FTS5 only in this module: its PostgreSQL twin will rank with tsvector instead.
  const rows = db.all<{ fileId: string; fileName: string; text: string; rank: number }>(sql`
    select f.file_id as fileId, ${knowledgeFiles.name} as fileName, f.text as text, bm25(knowledge_fts) as rank
      from knowledge_fts f join ${knowledgeFiles} on ${knowledgeFiles.id} = f.file_id
     where knowledge_fts match ${match} and f.site_id = ${siteId} and ${knowledgeFiles.status} = 'indexed' ${fileFilter}
     order by rank limit ${limit}`);
  return rows.map((row) => ({
    fileId: row.fileId,
    fileName: row.fileName,
    text: row.text.replace(FILE_HEADER, ''),
    // Four significant digits: BM25 scores of a tiny corpus are small, not zero.
    score: Number((-row.rank).toPrecision(4)),
  }));
}
