import { inArray, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeChunks, knowledgeEmbeddings, knowledgeFiles } from '../db/schema.js';
import { toInt8Blob } from '../db/vectors.js';
import { embeddingText, type ChunkToEmbed, type EmbeddingStore } from './hybrid.js';
import { toPassage, type Passage } from './search.js';

/**
 * Chunk vectors on SQLite: int8 BLOBs in knowledge_embeddings (src/db/vectors.ts), one per
 * chunk (its rowid is the key; deleting a chunk, so a file or a re-indexing, deletes its vector
 * by foreign key), ranked with sqlite-vec's vec_distance_cosine. A vec0 table would fix the dimension at its
 * creation; a model change would then need a new table, while rows here just record their model.
 * The twin of PgChunkEmbeddings (pg-embeddings.ts).
 */
export class ChunkEmbeddings implements EmbeddingStore {
  constructor(private readonly db: Executor) {}

  missing(siteId: string, model: string, limit: number): ChunkToEmbed[] {
    const rows = this.db.all<ChunkToEmbed>(sql`
      select c.id as id, c.text as text
        from ${knowledgeChunks} c
        join ${knowledgeFiles} f on f.id = c.file_id
        left join ${knowledgeEmbeddings} e on e.chunk_id = c.id and e.model = ${model}
       where c.site_id = ${siteId} and f.status = 'indexed' and e.chunk_id is null
       order by c.id
       limit ${limit}`);
    return rows.map((row) => ({ id: row.id, text: embeddingText(row.text) }));
  }

  save(siteId: string, model: string, vectors: readonly { chunkId: number; vector: Float32Array }[], now = new Date()): number {
    // A chunk deleted since it was read has no row to select: its vector is not written.
    return this.db.transaction((tx) => {
      let saved = 0;
      for (const { chunkId, vector } of vectors) {
        saved += tx.run(sql`
          insert into ${knowledgeEmbeddings} (chunk_id, site_id, model, vector, created_at)
          select id, site_id, ${model}, ${toInt8Blob(vector)}, ${now.getTime()} from ${knowledgeChunks} where id = ${chunkId} and site_id = ${siteId}
          on conflict (chunk_id) do update set model = excluded.model, vector = excluded.vector, created_at = excluded.created_at`).changes;
      }
      return saved;
    });
  }

  sitesMissing(model: string): string[] {
    return this.db
      .all<{ siteId: string }>(sql`
        select distinct c.site_id as siteId
          from ${knowledgeChunks} c
          join ${knowledgeFiles} f on f.id = c.file_id
          left join ${knowledgeEmbeddings} e on e.chunk_id = c.id and e.model = ${model}
         where f.status = 'indexed' and e.chunk_id is null`)
      .map((row) => row.siteId);
  }

  nearest(siteId: string, model: string, vector: Float32Array, options: { limit: number; fileIds?: readonly string[] }): Passage[] {
    // Chosen files narrow the scan through the chunks' file index (ids only, no chunk text).
    const fileFilter = options.fileIds ? sql`and chunk_id in (select ${knowledgeChunks.id} from ${knowledgeChunks} where ${inArray(knowledgeChunks.fileId, [...options.fileIds])})` : sql``;
    // The closest vectors first, over the embeddings alone (one pass over the site's rows of this
    // model); only those few are joined to their chunks, whose text would otherwise be read for
    // every vector. Files being indexed are left out, as in lexical search (they have no vectors
    // but while a file is indexed again: the vector side then offers fewer candidates).
    const rows = this.db.all<{ fileId: string; fileName: string; text: string; ordinal: number; distance: number }>(sql`
      with scored as (
        select chunk_id, vec_distance_cosine(vec_int8(vector), vec_int8(${toInt8Blob(vector)})) as distance
          from ${knowledgeEmbeddings}
         where site_id = ${siteId} and model = ${model} ${fileFilter}
         order by distance, chunk_id
         limit ${options.limit}
      )
      select c.file_id as fileId, ${knowledgeFiles.name} as fileName, c.text as text, c.ordinal as ordinal, scored.distance as distance
        from scored
        join ${knowledgeChunks} c on c.id = scored.chunk_id
        join ${knowledgeFiles} on ${knowledgeFiles.id} = c.file_id
       where ${knowledgeFiles.status} = 'indexed'
       order by scored.distance, scored.chunk_id`);
    return rows.map((row) => toPassage(row, 1 - row.distance));
  }
}
