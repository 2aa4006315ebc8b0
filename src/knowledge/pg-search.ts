import { inArray, sql, type SQL } from 'drizzle-orm';
import { KNOWLEDGE_SEARCH_CONFIG, knowledgeChunks, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { planSearch, toPassage, type Passage, type SearchOptions } from './search.js';

// FTS5's bm25() parameters (its defaults, which search.ts uses).
const K1 = 1.2;
const B = 0.75;
/** FTS5 gives a term found in most rows this weight rather than a negative one. */
const MIN_IDF = 1e-6;

const CONFIG = sql.raw(`'${KNOWLEDGE_SEARCH_CONFIG}'::regconfig`);

/** A term as the index reads it: its words next to each other, folded and stemmed like chunk text. */
const termQuery = (words: readonly string[]): SQL => sql`phraseto_tsquery(${CONFIG}, search_text(${words.join(' ')}))`;

/**
 * The PostgreSQL twin of searchKnowledge (search.ts): the same terms OR-ed (each a phrase),
 * the same filters, the same passages, best first, and the same score: BM25 as FTS5 computes
 * it (k1 1.2, b 0.75, IDF floored at 1e-6), written out in SQL over the chunks' tsvectors,
 * because ts_rank_cd knows neither how rare a term is nor how long a chunk is on average.
 *
 * Two statistics are taken differently, to stay cheap and per site where FTS5 is global:
 * the number of chunks and of chunks holding each term count the site's chunks only (another
 * site's files never move this site's scores), and the average chunk length is that of the
 * chunks that match (FTS5 keeps every row's length; averaging them all here would read the
 * whole site). Scores are thus close to SQLite's, not equal: compare them within one answer.
 */
export async function pgSearchKnowledge(db: PgExecutor, siteId: string, query: string, options: SearchOptions = {}): Promise<Passage[]> {
  const plan = planSearch(query, options);
  if (!plan) return [];
  const terms = plan.terms.map(termQuery);
  const fileFilter = plan.fileIds ? sql`and ${inArray(knowledgeFiles.id, [...plan.fileIds])}` : sql``;
  const { rows } = await db.execute<{ fileId: string; fileName: string; text: string; ordinal: number; score: number }>(sql`
    with term (i, query) as (values ${sql.join(
      terms.map((term, i) => sql`(${i}, ${term})`),
      sql`, `,
    )}),
    -- The site's chunks holding any term (the GIN index finds them), with their length in lexemes.
    matched as materialized (
      select id, file_id, search_vector, length(search_vector)::float8 as words
        from ${knowledgeChunks}
       where site_id = ${siteId} and search_vector @@ (${sql.join(terms, sql` || `)})
    ),
    -- How often each term occurs in each matched chunk (phrases whole): cover density, every word weighing 1.
    occurrence as materialized (
      select matched.id, term.i, ts_rank_cd('{1,1,1,1}', matched.search_vector, term.query, 0)::float8 as n
        from matched cross join term
    ),
    corpus as (
      select (select count(*) from ${knowledgeChunks} where site_id = ${siteId})::float8 as chunks, avg(words) as average_words from matched
    ),
    term_weight as (
      select occurrence.i, greatest(ln((corpus.chunks - count(*) + 0.5) / (count(*) + 0.5)), ${MIN_IDF}) as idf
        from occurrence cross join corpus
       where occurrence.n > 0
       group by occurrence.i, corpus.chunks
    ),
    ranked as (
      select matched.id, sum(term_weight.idf * occurrence.n * ${K1 + 1} / (occurrence.n + ${K1} * (${1 - B} + ${B} * matched.words / corpus.average_words))) as score
        from matched
        join ${knowledgeFiles} on ${knowledgeFiles.id} = matched.file_id
        join occurrence on occurrence.id = matched.id and occurrence.n > 0
        join term_weight on term_weight.i = occurrence.i
       cross join corpus
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
