import { inArray, sql, type SQL } from 'drizzle-orm';
import { KNOWLEDGE_SEARCH_CONFIG, knowledgeChunks, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { planSearch, toPassage, type Passage, type SearchOptions } from './search.js';

// bm25() of FTS5, as search.ts calls it: its default parameters, and the weight it gives a
// term found in most rows instead of a negative one.
const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;
/** Chunks of a site whose lengths are averaged: all of them up to this many, else the first this many. */
const LENGTH_SAMPLE = 1000;

const CONFIG = sql.raw(`'${KNOWLEDGE_SEARCH_CONFIG}'::regconfig`);

/** A term as the index reads it (knowledge_chunks.search_vector): its words in a row, folded and stemmed. */
const termQuery = (words: readonly string[]): SQL => sql`phraseto_tsquery(${CONFIG}, search_text(${words.join(' ')}))`;

/**
 * The PostgreSQL twin of searchKnowledge (search.ts): the same terms, OR-ed, each a phrase; the
 * same filters (the site's chunks, of indexed files, of the files given); the same passages,
 * best first; and the same score, BM25 as FTS5 computes it, written out in SQL over the
 * chunks' tsvectors. (ts_rank and ts_rank_cd know neither how rare a term is nor how long
 * chunks are on average: ranked by them, whatever the normalization, the retrieval evaluation of
 * bench/retrieval.mjs scored recall@5 0.96-0.98 and MRR@10 0.86-0.95, against 1 and 0.985 on
 * SQLite, and 1 and 0.986 with this.)
 *
 * Three statistics differ from FTS5's, so scores are close to SQLite's without being equal
 * (compare them within one answer, as the relevance floor does):
 * - chunks, and chunks holding a term, are counted in the site, not in the whole index: another
 *   site's files never move a site's scores;
 * - a chunk's length is its number of distinct words (the tsvector's length, in its header),
 *   not of words (counting those would walk every position of every matched chunk);
 * - the average length is that of the site's first LENGTH_SAMPLE chunks, not of every chunk
 *   (FTS5 keeps the total; summing it here would read the whole site at every query).
 * Ties are broken by chunk id: the order chunks were written in.
 */
export async function pgSearchKnowledge(db: PgExecutor, siteId: string, query: string, options: SearchOptions = {}): Promise<Passage[]> {
  const plan = planSearch(query, options);
  if (!plan) return [];
  const terms = plan.terms.map(termQuery);
  const fileFilter = plan.fileIds ? sql`and ${inArray(knowledgeFiles.id, [...plan.fileIds])}` : sql``;
  // Every value is a bound parameter; terms hold letters, digits and marks only anyway.
  const { rows } = await db.execute<{ fileId: string; fileName: string; text: string; ordinal: number; score: number }>(sql`
    with term (i, query) as (values ${sql.join(
      terms.map((term, i) => sql`(${i}::int, ${term})`),
      sql`, `,
    )}),
    -- The site's chunks holding any term: the GIN index finds them. Materialized: read once.
    matched as materialized (
      select id, file_id, search_vector, length(search_vector)::float8 as length
        from ${knowledgeChunks}
       where site_id = ${siteId} and search_vector @@ (${sql.join(terms, sql` || `)})
    ),
    -- How often each term occurs in each matched chunk, a phrase counting whole: ts_rank_cd
    -- without normalization and with every word weighing 1 counts the term's covers.
    occurrence as materialized (
      select matched.id, term.i, ts_rank_cd('{1,1,1,1}', matched.search_vector, term.query, 0)::float8 as count
        from matched cross join term
    ),
    site as (
      select (select count(*) from ${knowledgeChunks} where site_id = ${siteId})::float8 as chunks,
             (select avg(length(search_vector)) from (select search_vector from ${knowledgeChunks} where site_id = ${siteId} limit ${LENGTH_SAMPLE}) sample)::float8 as average_length
    ),
    term_weight as (
      select occurrence.i, greatest(ln((site.chunks - count(*) + 0.5) / (count(*) + 0.5)), ${MIN_IDF}) as idf
        from occurrence cross join site
       where occurrence.count > 0
       group by occurrence.i, site.chunks
    ),
    ranked as (
      select matched.id, sum(term_weight.idf * occurrence.count * ${K1 + 1} / (occurrence.count + ${K1} * (${1 - B} + ${B} * matched.length / site.average_length))) as score
        from matched
        join ${knowledgeFiles} on ${knowledgeFiles.id} = matched.file_id
        join occurrence on occurrence.id = matched.id and occurrence.count > 0
        join term_weight on term_weight.i = occurrence.i
       cross join site
       where ${knowledgeFiles.status} = 'indexed' ${fileFilter}
       group by matched.id
       order by score desc, matched.id
       limit ${plan.limit}
    )
    select chunk.file_id as "fileId", file.name as "fileName", chunk.text, chunk.ordinal, ranked.score
      from ranked
      join ${knowledgeChunks} chunk on chunk.id = ranked.id
      join ${knowledgeFiles} file on file.id = chunk.file_id
     order by ranked.score desc, ranked.id`);
  return rows.map((row) => toPassage(row, row.score));
}
