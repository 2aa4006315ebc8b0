import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import { knowledgeChunks, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { paginateAsync, type Page } from '../pagination.js';
import { chunkRows, chunkTextBytes, knowledgeItemNotFound, queuedFileColumns, type IndexOutcome, type KnowledgeFileRow, type QueuedFile } from './file-rows.js';
import type { PgSiteStorageUsage } from './pg-usage.js';

export type { IndexOutcome, KnowledgeFileRow, QueuedFile };

/** Runs inside the transaction that marks a file indexed or failed (KnowledgeSettledListener of indexer.ts, on PostgreSQL). */
export type PgKnowledgeSettledListener = (tx: PgExecutor, file: KnowledgeFileRow) => Promise<void>;

// Newest first, as on SQLite; ids (lowercase UUIDs) break ties byte by byte, whatever the database's collation.
const LIST_ORDER = [desc(knowledgeFiles.createdAt), desc(sql`${knowledgeFiles.id} collate "C"`)];

/**
 * The PostgreSQL twin of the statements of KnowledgeService (service.ts) and KnowledgeIndexer
 * (indexer.ts): knowledge file rows, their chunks and their status, with the same results,
 * errors (404 knowledge item) and storage tally. Storing files, extracting and chunking text,
 * queuing and retrying stay with the service and the indexer; rows are built by file-rows.ts.
 *
 * Several instances may index and delete at once: a batch of chunks is written only while its
 * file's row is there, the row held against deletion (FOR KEY SHARE) until the batch commits,
 * and a file turns indexed or failed only from `uploaded`, once.
 */
export class PgKnowledgeFiles {
  private readonly settledListeners: PgKnowledgeSettledListener[] = [];

  constructor(
    private readonly db: PgExecutor,
    private readonly usage?: PgSiteStorageUsage,
  ) {}

  /** Calls `listener` inside the transaction that marks a file indexed or failed. */
  onSettled(listener: PgKnowledgeSettledListener): void {
    this.settledListeners.push(listener);
  }

  /** Of the given ids, those that are knowledge files of the site. */
  async existingIds(siteId: string, fileIds: readonly string[]): Promise<Set<string>> {
    if (fileIds.length === 0) return new Set();
    const rows = await this.db
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.siteId, siteId), inArray(knowledgeFiles.id, [...fileIds])));
    return new Set(rows.map((row) => row.id));
  }

  /** The site's file; 404 when it is not. */
  async get(siteId: string, fileId: string): Promise<KnowledgeFileRow> {
    const [row] = await this.db
      .select()
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)));
    if (!row) throw knowledgeItemNotFound();
    return row;
  }

  list(siteId: string, page: number, limit: number): Promise<Page<KnowledgeFileRow>> {
    const where = eq(knowledgeFiles.siteId, siteId);
    return paginateAsync(
      page,
      limit,
      async () => (await this.db.select({ n: count() }).from(knowledgeFiles).where(where))[0]!.n,
      (offset, size) => this.db.select().from(knowledgeFiles).where(where).orderBy(...LIST_ORDER).limit(size).offset(offset),
    );
  }

  /** Records a stored upload (uploadedFileRow). */
  async insert(row: KnowledgeFileRow): Promise<void> {
    await this.db.insert(knowledgeFiles).values(row);
  }

  /** Deletes the site's file row, its chunks with it (the foreign key cascades); 404 when it is gone. */
  async delete(siteId: string, fileId: string): Promise<void> {
    const { rowCount } = await this.db.delete(knowledgeFiles).where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)));
    if (!rowCount) throw knowledgeItemNotFound();
    this.usage?.changed(siteId);
  }

  /** Files left `uploaded` (by a crash, or a stop), oldest first: to index again. */
  pending(): Promise<QueuedFile[]> {
    return this.db.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.status, 'uploaded')).orderBy(knowledgeFiles.createdAt);
  }

  async lookUp(fileId: string): Promise<QueuedFile | undefined> {
    return (await this.db.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)))[0];
  }

  /** The file's row as it is now, whatever its site (the indexer's look before it works on a file). */
  async current(fileId: string, db: PgExecutor = this.db): Promise<KnowledgeFileRow | undefined> {
    return (await db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)))[0];
  }

  /**
   * Writes a batch of the file's chunks, the first being chunk `start`; false (nothing
   * written) when the file was deleted meanwhile.
   */
  async writeChunks(fileId: string, siteId: string, texts: readonly string[], start: number): Promise<boolean> {
    const written = await this.db.transaction(async (tx) => {
      const [file] = await tx.select({ id: knowledgeFiles.id }).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).for('key share');
      if (!file) return false;
      if (texts.length > 0) await tx.insert(knowledgeChunks).values(chunkRows(fileId, siteId, texts, start));
      return true;
    });
    if (written) this.usage?.added(siteId, chunkTextBytes(texts));
    return written;
  }

  /** Removes the file's chunks (before indexing it again; they follow the file otherwise). */
  async clearChunks(fileId: string, siteId?: string): Promise<void> {
    const { rowCount } = await this.db.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId));
    if (rowCount && siteId) this.usage?.changed(siteId);
  }

  /**
   * Marks an `uploaded` file indexed or failed, in one transaction with its listeners: a failed
   * file never keeps chunks. Answers the row as marked; undefined when the file is gone or was
   * marked already.
   */
  async finish(fileId: string, outcome: IndexOutcome, now = new Date()): Promise<KnowledgeFileRow | undefined> {
    return this.db.transaction(async (tx) => {
      if (outcome.status === 'failed') {
        const { rowCount } = await tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId));
        const siteId = rowCount ? (await this.current(fileId, tx))?.siteId : undefined;
        if (siteId) this.usage?.changed(siteId);
      }
      const [row] = await tx
        .update(knowledgeFiles)
        .set({ ...outcome, updatedAt: now })
        .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
        .returning();
      if (row) for (const listener of this.settledListeners) await listener(tx, row);
      return row;
    });
  }
}
