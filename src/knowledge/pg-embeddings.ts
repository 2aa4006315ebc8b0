import { inArray, sql } from 'drizzle-orm';
import { knowledgeChunks, knowledgeEmbeddings, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { embeddingText, type ChunkToEmbed, type EmbeddingStore } from './hybrid.js';
import { toPassage, type Passage } from './search.js';

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

/** Rows per insert statement (5 parameters each, a vector of ~768 floats among them). */
const SAVE_BATCH = 100;

/**
 * The PostgreSQL twin of ChunkEmbeddings (embeddings.ts): vectors as `real[]` in
 * knowledge_embeddings (pgvector is not assumed to be installed) with the signs of each in a
 * generated bit string (`sign_bits`, migration 0007), ranked by cosine similarity computed in
 * SQL (see nearest()).
 */
export class PgChunkEmbeddings implements EmbeddingStore {
  constructor(private readonly db: PgExecutor) {}

  async missing(siteId: string, model: string, limit: number): Promise<ChunkToEmbed[]> {
    const { rows } = await this.db.execute<{ id: string | number; text: string }>(sql`
      select c.id, c.text
        from ${knowledgeChunks} c
        join ${knowledgeFiles} f on f.id = c.file_id
        left join ${knowledgeEmbeddings} e on e.chunk_id = c.id and e.model = ${model}
       where c.site_id = ${siteId} and f.status = 'indexed' and e.chunk_id is null
       order by c.id
       limit ${limit}`);
    return rows.map((row) => ({ id: Number(row.id), text: embeddingText(row.text) }));
  }

  async save(siteId: string, model: string, vectors: readonly { chunkId: number; vector: Float32Array }[], now = new Date()): Promise<number> {
    let saved = 0;
    for (let start = 0; start < vectors.length; start += SAVE_BATCH) {
      const slice = vectors.slice(start, start + SAVE_BATCH);
      const values = sql.join(
        slice.map(({ chunkId, vector }) => sql`(${chunkId}::bigint, ${arrayLiteral(vector)}::real[])`),
        sql`, `,
      );
      // A chunk deleted since it was read has no row to join: its vector is not written.
      const result = await this.db.execute(sql`
        insert into ${knowledgeEmbeddings} (chunk_id, site_id, model, vector, created_at)
        select c.id, c.site_id, ${model}, v.vector, ${now.toISOString()}::timestamptz
          from (values ${values}) as v (chunk_id, vector)
          join ${knowledgeChunks} c on c.id = v.chunk_id and c.site_id = ${siteId}
        on conflict (chunk_id) do update set model = excluded.model, vector = excluded.vector, created_at = excluded.created_at`);
      saved += result.rowCount ?? 0;
    }
    return saved;
  }

  async sitesMissing(model: string): Promise<string[]> {
    const { rows } = await this.db.execute<{ siteId: string }>(sql`
      select distinct c.site_id as "siteId"
        from ${knowledgeChunks} c
        join ${knowledgeFiles} f on f.id = c.file_id
        left join ${knowledgeEmbeddings} e on e.chunk_id = c.id and e.model = ${model}
       where f.status = 'indexed' and e.chunk_id is null`);
    return rows.map((row) => row.siteId);
  }

  async nearest(siteId: string, model: string, vector: Float32Array, options: { limit: number; fileIds?: readonly string[] }): Promise<Passage[]> {
    // As on SQLite: chosen files narrow the scan by the chunks' file index, and only the closest
    // vectors are joined to their chunks.
    const fileFilter = options.fileIds
      ? sql`and e.chunk_id in (select ${knowledgeChunks.id} from ${knowledgeChunks} where ${inArray(knowledgeChunks.fileId, [...options.fileIds])})`
      : sql``;
    // Two steps: every vector of the site and model ranked by the Hamming distance of its signs
    // to the query's (C functions over 96 bytes each: milliseconds), then the exact cosine of the
    // closest few, a dot product in SQL (vectors are stored at length 1; this query's too).
    const { rows } = await this.db.execute<{ fileId: string; fileName: string; text: string; ordinal: number; similarity: number }>(sql`
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
    return rows.map((row) => toPassage(row, Number(row.similarity)));
  }
}
