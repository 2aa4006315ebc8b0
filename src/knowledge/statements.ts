import type { SQL, Table } from 'drizzle-orm';
import { sql } from '../db/orm.js';

// Statements both databases spell alike, over either database's tables (each adapter passes
// its own schema's): written once here, run by sqlite.ts and postgres.ts.

interface KnowledgeTables {
  files: Table;
  chunks: Table;
  embeddings: Table;
}

/** `from ... where ...` of the chunks of indexed files without a vector of `model`. */
const withoutVector = (tables: KnowledgeTables, model: string): SQL => sql`
    from ${tables.chunks} c
    join ${tables.files} f on f.id = c.file_id
    left join ${tables.embeddings} e on e.chunk_id = c.id and e.model = ${model}
   where f.status = 'indexed' and e.chunk_id is null`;

/** Up to `limit` of the site's chunks without a vector of `model`, oldest first: `id`, `text`. */
export const chunksMissingVectors = (tables: KnowledgeTables, siteId: string, model: string, limit: number): SQL =>
  sql`select c.id as "id", c.text as "text" ${withoutVector(tables, model)} and c.site_id = ${siteId} order by c.id limit ${limit}`;

/** The sites with chunks without a vector of `model`: `siteId`. */
export const sitesMissingVectors = (tables: KnowledgeTables, model: string): SQL => sql`select distinct c.site_id as "siteId" ${withoutVector(tables, model)}`;
