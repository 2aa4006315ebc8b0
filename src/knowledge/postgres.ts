import type { SQL } from 'drizzle-orm';
import { KNOWLEDGE_SEARCH_CONFIG, knowledgeChunks, knowledgeEmbeddings, knowledgeFiles } from '../db/pg-schema.js';
import { preparedQuery, type PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { queuedFileColumns } from './file-rows.js';
import type { ChunkEmbeddingPort, KnowledgeFilePort, KnowledgeSearchPort, KnowledgeUsagePort, RankedChunk } from './port.js';
import { chunksMissingVectors, sitesMissingVectors } from './statements.js';
import { and, count, desc, eq, exists, inArray, sql } from '../db/orm.js';

// Newest first, as on SQLite; ids (lowercase UUIDs) break ties byte by byte, whatever the database's collation.
const LIST_ORDER = [desc(knowledgeFiles.createdAt), desc(sql`${knowledgeFiles.id} collate "C"`)];

const files: AsyncAdapter<KnowledgeFilePort, PgExecutor> = {
  existingIds: async (tx, siteId, fileIds) =>
    (
      await tx
        .select({ id: knowledgeFiles.id })
        .from(knowledgeFiles)
        .where(and(eq(knowledgeFiles.siteId, siteId), inArray(knowledgeFiles.id, [...fileIds])))
    ).map((row) => row.id),
  get: async (tx, siteId, fileId) =>
    (
      await tx
        .select()
        .from(knowledgeFiles)
        .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)))
    )[0],
  count: async (tx, siteId) => (await tx.select({ n: count() }).from(knowledgeFiles).where(eq(knowledgeFiles.siteId, siteId)))[0]!.n,
  page: (tx, siteId, offset, limit) =>
    tx
      .select()
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.siteId, siteId))
      .orderBy(...LIST_ORDER)
      .limit(limit)
      .offset(offset),
  insert: async (tx, row) => void (await tx.insert(knowledgeFiles).values(row)),
  delete: async (tx, siteId, fileId) => Boolean((await tx.delete(knowledgeFiles).where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)))).rowCount),
  pending: (tx) => tx.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.status, 'uploaded')).orderBy(knowledgeFiles.createdAt),
  lookUp: async (tx, fileId) => (await tx.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)))[0],
  current: async (tx, fileId) => (await tx.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)))[0],
  // Locked against another instance's attempt at the file (it waits, then finds the file
  // settled) and against a delete (it waits for the commit, then takes the chunks along).
  holdForIndexing: async (tx, fileId) => (await tx.select({ status: knowledgeFiles.status }).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).for('no key update'))[0]?.status,
  deleteChunks: async (tx, fileId) => (await tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId))).rowCount ?? 0,
  // search_vector is a generated column: the index follows the chunks.
  insertChunks: async (tx, rows) => void (rows.length && (await tx.insert(knowledgeChunks).values([...rows]))),
  clearChunksAwaitingIndex: async (tx, fileId) => {
    const awaitsIndexing = tx
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')));
    return (await tx.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, fileId), exists(awaitsIndexing)))).rowCount ?? 0;
  },
  settle: async (tx, fileId, outcome, now) =>
    (
      await tx
        .update(knowledgeFiles)
        .set({ ...outcome, updatedAt: now })
        .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
        .returning()
    )[0],
};

// bm25() of FTS5, as SQLite's search calls it: its default parameters, and the weight it gives
// a term found in most rows instead of a negative one.
const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

const CONFIG = sql.raw(`'${KNOWLEDGE_SEARCH_CONFIG}'::regconfig`);

/** A term as the index reads it (knowledge_chunks.search_vector): its words in a row, folded and stemmed. */
const termQuery = (words: readonly string[]): SQL => sql`phraseto_tsquery(${CONFIG}, search_text(${words.join(' ')}))`;

/**
 * BM25 as FTS5 computes it, written out in SQL over the chunks' tsvectors. (ts_rank and
 * ts_rank_cd know neither how rare a term is nor how long chunks are on average: ranked by them,
 * whatever the normalization, the retrieval evaluation of bench/retrieval.mjs scored recall@5
 * 0.96-0.98 and MRR@10 0.86-0.95, against 1 and 0.985 on SQLite, and 1 and 0.986 with this.)
 *
 * Two statistics differ from FTS5's, so scores are close to SQLite's without being equal:
 * - chunks, and chunks holding a term, are counted in the site, not in the whole index: another
 *   site's files never move a site's scores;
 * - a chunk's length is its number of distinct words (the tsvector's length, in its header),
 *   not of words (counting those would walk every position of every matched chunk).
 * The site's number of chunks and their average length come from its statistics row
 * (knowledge_search_stats, kept by triggers on the chunks as FTS5 keeps its totals), not from
 * counting the site's chunks at every query.
 * Ties are broken by chunk id: the order chunks were written in.
 */
const search: AsyncAdapter<KnowledgeSearchPort, PgExecutor> = {
  rank: async (tx, siteId, plan) => {
    const terms = plan.terms.map(termQuery);
    // One array parameter, whatever the number of files: the statement's text stays one shape.
    const fileFilter = plan.fileIds ? sql`and ${knowledgeFiles.id} = any(${sql.param([...plan.fileIds])}::text[])` : sql``;
    // Every value is a bound parameter (terms hold letters, digits and marks only anyway), so
    // each number of terms is one prepared statement: planning this query costs as much as
    // running it.
    return preparedQuery<RankedChunk & Record<string, unknown>>(tx, 'knowledge_rank', sql`
      with term (i, query) as (values ${sql.join(
        terms.map((term, i) => sql`(${i}::int, ${term})`),
        sql`, `,
      )}),
      -- Each of the site's chunks holding any term (the GIN index finds them) with each term it
      -- holds and how often: ts_rank_cd without normalization and with every word weighing 1
      -- counts the term's covers, a phrase counting whole. One pass over the chunks, their
      -- tsvectors read there and not carried on (a few thousand of them outgrow work_mem).
      occurrence as materialized (
        select chunk.id, chunk.file_id, length(chunk.search_vector)::float8 as length, term.i,
               ts_rank_cd('{1,1,1,1}', chunk.search_vector, term.query, 0)::float8 as count
          from ${knowledgeChunks} chunk
          join term on chunk.search_vector @@ term.query
         where chunk.site_id = ${siteId} and chunk.search_vector @@ (${sql.join(terms, sql` || `)})
      ),
      -- The site's statistics row, kept by the chunks' triggers (PostgreSQL migration 0014): no count per search.
      site as (
        select stats.chunks::float8 as chunks, (stats.total_length::float8 / nullif(stats.chunks, 0)) as average_length
          from knowledge_search_stats stats
         where stats.site_id = ${siteId}
      ),
      term_weight as (
        select occurrence.i, greatest(ln((site.chunks - count(*) + 0.5) / (count(*) + 0.5)), ${MIN_IDF}) as idf
          from occurrence cross join site
         where occurrence.count > 0
         group by occurrence.i, site.chunks
      ),
      ranked as (
        select occurrence.id, sum(term_weight.idf * occurrence.count * ${K1 + 1} / (occurrence.count + ${K1} * (${1 - B} + ${B} * occurrence.length / site.average_length))) as score
          from occurrence
          join ${knowledgeFiles} on ${knowledgeFiles.id} = occurrence.file_id
          join term_weight on term_weight.i = occurrence.i
         cross join site
         where occurrence.count > 0 and ${knowledgeFiles.status} = 'indexed' ${fileFilter}
         group by occurrence.id
         order by score desc, occurrence.id
         limit ${plan.limit}
      )
      select chunk.file_id as "fileId", file.name as "fileName", chunk.text, chunk.ordinal, ranked.score
        from ranked
        join ${knowledgeChunks} chunk on chunk.id = ranked.id
        join ${knowledgeFiles} file on file.id = chunk.file_id
       order by ranked.score desc, ranked.id`);
  },
};

// Sums of bigints come back as numeric, read as text by the driver: mapped to numbers.
const usage: AsyncAdapter<KnowledgeUsagePort, PgExecutor> = {
  fileBytes: async (tx, siteId) =>
    (
      await tx
        .select({ bytes: sql<number>`coalesce(sum(${knowledgeFiles.sizeBytes}), 0)`.mapWith(Number) })
        .from(knowledgeFiles)
        .where(eq(knowledgeFiles.siteId, siteId))
    )[0]!.bytes,
  chunkTextBytes: async (tx, siteId) =>
    (
      await tx
        .select({ bytes: sql<number>`coalesce(sum(octet_length(${knowledgeChunks.text})), 0)`.mapWith(Number) })
        .from(knowledgeChunks)
        .where(eq(knowledgeChunks.siteId, siteId))
    )[0]!.bytes,
};

/** A vector as a PostgreSQL array literal, bound as one text parameter (a JS array would become a list of parameters). */
const arrayLiteral = (vector: Float32Array) => `{${Array.from(vector).join(',')}}`;

/** The signs of a vector as sign_bits() writes them (1 where positive), for the Hamming ranking. */
const signBits = (vector: Float32Array) => Array.from(vector, (value) => (value > 0 ? '1' : '0')).join('');

/**
 * Vectors whose exact cosine is computed per result wanted: the closest by Hamming distance of
 * their signs. Sign bits keep most of a dense embedding's neighbourhood (binary quantization);
 * four times the results wanted, re-ranked exactly, keeps the closest ones among them.
 */
const SIGN_CANDIDATES_PER_RESULT = 4;

const tables = { files: knowledgeFiles, chunks: knowledgeChunks, embeddings: knowledgeEmbeddings };

/**
 * Vectors as `real[]` (pgvector is not assumed to be installed) with the signs of each in a
 * generated bit string (`sign_bits`, migration 0007), ranked by cosine similarity computed in
 * SQL (see nearest).
 */
const embeddings: AsyncAdapter<ChunkEmbeddingPort, PgExecutor> = {
  missing: async (tx, siteId, model, limit) => {
    const { rows } = await tx.execute<{ id: string | number; text: string }>(chunksMissingVectors(tables, siteId, model, limit));
    // Ids are bigints, read as text by the driver.
    return rows.map((row) => ({ id: Number(row.id), text: row.text }));
  },
  save: async (tx, siteId, model, vectors, now) => {
    if (vectors.length === 0) return 0;
    const values = sql.join(
      vectors.map(({ chunkId, vector }) => sql`(${chunkId}::bigint, ${arrayLiteral(vector)}::real[])`),
      sql`, `,
    );
    // A chunk deleted since it was read has no row to join: its vector is not written.
    const result = await tx.execute(sql`
      insert into ${knowledgeEmbeddings} (chunk_id, site_id, model, vector, created_at)
      select c.id, c.site_id, ${model}, v.vector, ${now.toISOString()}::timestamptz
        from (values ${values}) as v (chunk_id, vector)
        join ${knowledgeChunks} c on c.id = v.chunk_id and c.site_id = ${siteId}
      on conflict (chunk_id) do update set model = excluded.model, vector = excluded.vector, created_at = excluded.created_at`);
    return result.rowCount ?? 0;
  },
  sitesMissing: async (tx, model) => (await tx.execute<{ siteId: string }>(sitesMissingVectors(tables, model))).rows.map((row) => row.siteId),
  nearest: async (tx, siteId, model, vector, options) => {
    // As on SQLite: chosen files narrow the scan by the chunks' file index, and only the closest
    // vectors are joined to their chunks.
    const fileFilter = options.fileIds
      ? sql`and e.chunk_id in (select ${knowledgeChunks.id} from ${knowledgeChunks} where ${inArray(knowledgeChunks.fileId, [...options.fileIds])})`
      : sql``;
    // Two steps: every vector of the site and model ranked by the Hamming distance of its signs
    // to the query's (C functions over 96 bytes each: milliseconds), then the exact cosine of the
    // closest few, a dot product in SQL (vectors are stored at length 1; this query's too).
    const { rows } = await tx.execute<Omit<RankedChunk, 'score'> & { similarity: number }>(sql`
      with candidates as materialized (
        select e.chunk_id, e.vector
          from ${knowledgeEmbeddings} e
         where e.site_id = ${siteId} and e.model = ${model} ${fileFilter}
         order by bit_count(e.sign_bits # ${signBits(vector)}::varbit), e.chunk_id
         limit ${options.limit * SIGN_CANDIDATES_PER_RESULT}
      ),
      scored as materialized (
        select chunk_id, (select sum(x::float8 * y) from unnest(vector, ${arrayLiteral(vector)}::real[]) as t (x, y)) as similarity
          from candidates
         order by similarity desc nulls last, chunk_id
         limit ${options.limit}
      )
      select c.file_id as "fileId", ${knowledgeFiles.name} as "fileName", c.text, c.ordinal, scored.similarity
        from scored
        join ${knowledgeChunks} c on c.id = scored.chunk_id
        join ${knowledgeFiles} on ${knowledgeFiles.id} = c.file_id
       where ${knowledgeFiles.status} = 'indexed'
       order by scored.similarity desc, scored.chunk_id`);
    return rows.map(({ similarity, ...chunk }) => ({ ...chunk, score: Number(similarity) }));
  },
};

/** The knowledge ports as PostgreSQL answers them. */
export const knowledgePostgresAdapters = { knowledgeFiles: files, knowledgeSearch: search, knowledgeUsage: usage, chunkEmbeddings: embeddings };
