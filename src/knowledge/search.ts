import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeFiles } from '../db/schema.js';

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

// Words nearly every passage contains: OR-ing them in makes BM25 score most of the index for
// nothing ("how to brew coffee for beginners"). Dropped unless the query has nothing else.
const STOPWORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him
  himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
  our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
  these they this those through to too under until up very was we were what when where which while who whom why will
  with would you your yours yourself yourselves`.split(/\s+/),
);
// Chunks start with their file's name on a line of its own (it makes names searchable).
const FILE_HEADER = /^\[[^\n]*\]\n/;

/**
 * Turns free user text into an FTS5 query that cannot be syntax: every word (letters and
 * digits only) becomes a quoted string, joined with OR so BM25 ranks passages matching more
 * words higher. Operators, quotes, `*`, `NEAR(`, `-` and column filters are just dropped.
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
