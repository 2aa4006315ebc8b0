import { and, count, desc, eq, exists, inArray, sql } from 'drizzle-orm';
import { knowledgeChunks, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { paginateAsync, type Page } from '../pagination.js';
import {
  chunkRows,
  chunkTextBytes,
  knowledgeItemNotFound,
  queuedFileColumns,
  type IndexOutcome,
  type KnowledgeFileRow,
  type KnowledgeFileStore,
  type QueuedFile,
} from './file-rows.js';
import { pgSearchKnowledge } from './pg-search.js';
import type { PgSiteStorageUsage } from './pg-usage.js';
import type { Passage, SearchOptions } from './search.js';

export type { IndexOutcome, KnowledgeFileRow, QueuedFile };

/** Runs inside the transaction that marks a file indexed or failed (KnowledgeSettledListener of indexer.ts, on PostgreSQL). */
export type PgKnowledgeSettledListener = (tx: PgExecutor, file: KnowledgeFileRow) => Promise<void>;

// Newest first, as on SQLite; ids (lowercase UUIDs) break ties byte by byte, whatever the database's collation.
const LIST_ORDER = [desc(knowledgeFiles.createdAt), desc(sql`${knowledgeFiles.id} collate "C"`)];

/** Chunks per insert statement (4 parameters each): few round trips, statements of a few hundred kilobytes. */
const WRITE_BATCH = 500;

/** Thrown inside writeIndex()'s transaction to roll it back when its signal stops it. */
class Stopped extends Error {}

/**
 * The PostgreSQL twin of KnowledgeFiles (files.ts), which KnowledgeService (service.ts) and
 * KnowledgeIndexer (indexer.ts) work over: knowledge file rows, their chunks and their status,
 * with the same results, errors (404 knowledge item) and storage tally. Storing files,
 * extracting and chunking text, queuing and retrying stay with the service and the indexer;
 * rows are built by file-rows.ts.
 *
 * Several instances may index and delete at once, and two of them may index the same file
 * (one resumes at its start the files still `uploaded`, among them those another is indexing
 * right now). So a file's chunks are written in the transaction that marks it indexed, with its
 * row locked and checked to be still `uploaded`: the first attempt to commit writes the one set
 * of chunks and the one final status, a later one finds the file settled and writes nothing,
 * and a delete waits for the commit (then takes the chunks along). A file turns indexed or
 * failed only from `uploaded`, once, and a file that is no longer `uploaded` keeps its chunks.
 */
export class PgKnowledgeFiles implements KnowledgeFileStore {
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

  search(siteId: string, query: string, options?: SearchOptions): Promise<Passage[]> {
    return pgSearchKnowledge(this.db, siteId, query, options);
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
   * Writes the file's chunks and marks it indexed, in one transaction that holds the file's row
   * (locked against another attempt and against deletion) and finds it still `uploaded`; chunks
   * of an earlier attempt are replaced. Undefined (nothing written) when the file is gone or
   * settled, or when `signal` stops the writing (rolled back: the file stays `uploaded`).
   */
  async writeIndex(fileId: string, siteId: string, texts: readonly string[], signal?: AbortSignal, now = new Date()): Promise<KnowledgeFileRow | undefined> {
    let replaced = false;
    const row = await this.db
      .transaction(async (tx) => {
        const [file] = await tx.select({ status: knowledgeFiles.status }).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).for('no key update');
        if (file?.status !== 'uploaded') return undefined;
        replaced = Boolean((await tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId))).rowCount);
        for (let start = 0; start < texts.length; start += WRITE_BATCH) {
          if (signal?.aborted) throw new Stopped();
          await tx.insert(knowledgeChunks).values(chunkRows(fileId, siteId, texts.slice(start, start + WRITE_BATCH), start));
        }
        return this.settle(tx, fileId, { status: 'indexed', error: null, chunkCount: texts.length }, now);
      })
      .catch((error: unknown) => {
        if (error instanceof Stopped) return undefined;
        throw error;
      });
    if (row && replaced) this.usage?.changed(siteId);
    else if (row) this.usage?.added(siteId, chunkTextBytes(texts));
    return row;
  }

  /** Removes the chunks of a file that still awaits indexing (a file indexed or failed keeps its own). */
  async clearChunks(fileId: string, siteId?: string): Promise<void> {
    const awaitsIndexing = this.db
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')));
    const { rowCount } = await this.db.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, fileId), exists(awaitsIndexing)));
    if (rowCount && siteId) this.usage?.changed(siteId);
  }

  /**
   * Marks an `uploaded` file indexed or failed, in one transaction with its listeners: a failed
   * file never keeps chunks. Answers the row as marked; undefined when the file is gone or was
   * marked already (its chunks then left as they are).
   */
  finish(fileId: string, outcome: IndexOutcome, now = new Date()): Promise<KnowledgeFileRow | undefined> {
    return this.db.transaction((tx) => this.settle(tx, fileId, outcome, now));
  }

  /** finish() inside `tx`: the row's update comes first, so it holds the row before anything else changes. */
  private async settle(tx: PgExecutor, fileId: string, outcome: IndexOutcome, now: Date): Promise<KnowledgeFileRow | undefined> {
    const [row] = await tx
      .update(knowledgeFiles)
      .set({ ...outcome, updatedAt: now })
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
      .returning();
    if (!row) return undefined;
    if (outcome.status === 'failed' && (await tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId))).rowCount) this.usage?.changed(row.siteId);
    for (const listener of this.settledListeners) await listener(tx, row);
    return row;
  }
}
