import type { Executor } from '../db/sqlite.js';
import { prepared } from '../db/sqlite.js';
import { knowledgeChunks, knowledgeEmbeddings, knowledgeFiles } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { toInt8Blob } from '../db/vectors.js';
import { queuedFileColumns } from './file-rows.js';
import type { KnowledgeFilesOptions } from './files.js';
import type { ChunkEmbeddingPort, ChunkToEmbed, KnowledgeFilePort, KnowledgeSearchPort, KnowledgeUsagePort, RankedChunk } from './port.js';
import { queryTerms } from './search.js';
import { chunksMissingVectors, sitesMissingVectors } from './statements.js';
import { and, count, desc, eq, exists, inArray, sql } from '../db/orm.js';

/**
 * A transaction on SQLite runs synchronously, holding the event loop: a file's chunks are
 * written a few at a time, with a pause between transactions (one process writes the database,
 * so no other attempt at the file can slip in between).
 */
export const sqliteKnowledgeOptions: KnowledgeFilesOptions = { chunksPerTransaction: 25 };

const p = (name: string) => sql.placeholder(name);
const fileById = (db: Executor) => db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, p('id'))).prepare();
const siteFileById = (db: Executor) =>
  db
    .select()
    .from(knowledgeFiles)
    .where(and(eq(knowledgeFiles.id, p('id')), eq(knowledgeFiles.siteId, p('siteId'))))
    .prepare();

const files: SyncAdapter<KnowledgeFilePort, Executor> = {
  existingIds: (tx, siteId, fileIds) =>
    tx
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.siteId, siteId), inArray(knowledgeFiles.id, [...fileIds])))
      .all()
      .map((row) => row.id),
  get: (tx, siteId, fileId) => prepared(tx, siteFileById).get({ id: fileId, siteId }),
  count: (tx, siteId) => tx.select({ n: count() }).from(knowledgeFiles).where(eq(knowledgeFiles.siteId, siteId)).get()!.n,
  // Text compares byte by byte (BINARY): ids break ties as on PostgreSQL.
  page: (tx, siteId, offset, limit) =>
    tx.select().from(knowledgeFiles).where(eq(knowledgeFiles.siteId, siteId)).orderBy(desc(knowledgeFiles.createdAt), desc(knowledgeFiles.id)).limit(limit).offset(offset).all(),
  insert: (tx, row) => void tx.insert(knowledgeFiles).values(row).run(),
  delete: (tx, siteId, fileId) => tx.delete(knowledgeFiles).where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId))).run().changes > 0,
  pending: (tx) => tx.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.status, 'uploaded')).orderBy(knowledgeFiles.createdAt).all(),
  lookUp: (tx, fileId) => tx.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).get(),
  current: (tx, fileId) => prepared(tx, fileById).get({ id: fileId }),
  // The write transaction (BEGIN IMMEDIATE) holds the whole database already.
  holdForIndexing: (tx, fileId) => prepared(tx, fileById).get({ id: fileId })?.status,
  deleteChunks: (tx, fileId) => tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run().changes,
  // Index entries follow their chunks (triggers keep knowledge_fts in step).
  insertChunks: (tx, rows) => void (rows.length && tx.insert(knowledgeChunks).values([...rows]).run()),
  clearChunksAwaitingIndex: (tx, fileId) => {
    const awaitsIndexing = tx
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')));
    return tx.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, fileId), exists(awaitsIndexing))).run().changes;
  },
  settle: (tx, fileId, outcome, now) =>
    tx
      .update(knowledgeFiles)
      .set({ ...outcome, updatedAt: now })
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
      .returning()
      .get(),
};

/**
 * Turns free user text into an FTS5 query that cannot be syntax: every term of queryTerms()
 * becomes a quoted string (a phrase when it has several words), joined with OR so BM25 ranks
 * passages matching more terms higher. Operators, quotes, `*`, `NEAR(`, and column filters are
 * just dropped. Null when nothing is left to look for.
 */
export function toFtsQuery(text: string): string | null {
  return ftsMatch(queryTerms(text));
}

// Words hold letters, digits and marks only, so no quote can reach the query; never pass user text to MATCH unquoted.
const ftsMatch = (terms: readonly string[][]): string | null => (terms.length ? terms.map((term) => `"${term.join(' ')}"`).join(' OR ') : null);

const search: SyncAdapter<KnowledgeSearchPort, Executor> = {
  rank: (tx, siteId, plan) => {
    const fileFilter = plan.fileIds ? sql`and ${inArray(knowledgeFiles.id, [...plan.fileIds])}` : sql``;
    const rows = tx.all<Omit<RankedChunk, 'score'> & { rank: number }>(sql`
      select f.file_id as fileId, ${knowledgeFiles.name} as fileName, f.text as text, ${knowledgeChunks.ordinal} as ordinal, bm25(knowledge_fts) as rank
        from knowledge_fts f join ${knowledgeFiles} on ${knowledgeFiles.id} = f.file_id join ${knowledgeChunks} on ${knowledgeChunks.id} = f.rowid
       where knowledge_fts match ${ftsMatch(plan.terms)} and f.site_id = ${siteId} and ${knowledgeFiles.status} = 'indexed' ${fileFilter}
       order by rank limit ${plan.limit}`);
    // bm25() is lower for better matches.
    return rows.map(({ rank, ...chunk }) => ({ ...chunk, score: -rank }));
  },
};

const usage: SyncAdapter<KnowledgeUsagePort, Executor> = {
  fileBytes: (tx, siteId) =>
    tx
      .select({ bytes: sql<number>`coalesce(sum(${knowledgeFiles.sizeBytes}), 0)` })
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.siteId, siteId))
      .get()!.bytes,
  // UTF-8 bytes: the length of the text cast to a blob.
  chunkTextBytes: (tx, siteId) =>
    tx
      .select({ bytes: sql<number>`coalesce(sum(length(cast(${knowledgeChunks.text} as blob))), 0)` })
      .from(knowledgeChunks)
      .where(eq(knowledgeChunks.siteId, siteId))
      .get()!.bytes,
};

const tables = { files: knowledgeFiles, chunks: knowledgeChunks, embeddings: knowledgeEmbeddings };

/**
 * Vectors as int8 BLOBs (src/db/vectors.ts), ranked with sqlite-vec's vec_distance_cosine. A
 * vec0 table would fix the dimension at its creation; a model change would then need a new
 * table, while rows here just record their model.
 */
const embeddings: SyncAdapter<ChunkEmbeddingPort, Executor> = {
  missing: (tx, siteId, model, limit) => tx.all<ChunkToEmbed>(chunksMissingVectors(tables, siteId, model, limit)),
  save: (tx, siteId, model, vectors, now) => {
    let saved = 0;
    // A chunk deleted since it was read has no row to select: its vector is not written.
    for (const { chunkId, vector } of vectors) {
      saved += tx.run(sql`
        insert into ${knowledgeEmbeddings} (chunk_id, site_id, model, vector, created_at)
        select id, site_id, ${model}, ${toInt8Blob(vector)}, ${now.getTime()} from ${knowledgeChunks} where id = ${chunkId} and site_id = ${siteId}
        on conflict (chunk_id) do update set model = excluded.model, vector = excluded.vector, created_at = excluded.created_at`).changes;
    }
    return saved;
  },
  sitesMissing: (tx, model) => tx.all<{ siteId: string }>(sitesMissingVectors(tables, model)).map((row) => row.siteId),
  nearest: (tx, siteId, model, vector, options) => {
    // Chosen files narrow the scan through the chunks' file index (ids only, no chunk text).
    const fileFilter = options.fileIds ? sql`and chunk_id in (select ${knowledgeChunks.id} from ${knowledgeChunks} where ${inArray(knowledgeChunks.fileId, [...options.fileIds])})` : sql``;
    // The closest vectors first, over the embeddings alone (one pass over the site's rows of this
    // model); only those few are joined to their chunks, whose text would otherwise be read for
    // every vector. Files being indexed are left out (they have no vectors but while a file is
    // indexed again: the vector side then offers fewer candidates).
    const rows = tx.all<Omit<RankedChunk, 'score'> & { distance: number }>(sql`
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
    return rows.map(({ distance, ...chunk }) => ({ ...chunk, score: 1 - distance }));
  },
};

/** The knowledge ports as SQLite answers them. */
export const knowledgeSqliteAdapters = { knowledgeFiles: files, knowledgeSearch: search, knowledgeUsage: usage, chunkEmbeddings: embeddings };
