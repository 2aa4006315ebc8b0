import { and, count, desc, eq, exists, inArray } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeChunks, knowledgeFiles } from '../db/schema.js';
import { paginate, type Page } from '../pagination.js';
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
import { searchKnowledge, type Passage, type SearchOptions } from './search.js';
import type { SiteStorageUsage } from './usage.js';

/** Runs inside the transaction that marks a file indexed or failed, with the row as marked. */
export type KnowledgeSettledListener = (tx: Executor, file: KnowledgeFileRow) => void;

// Chunks are written in small transactions with a pause between them, so indexing a large
// file never holds the event loop (and with it every other request) for long.
const WRITE_BATCH = 25;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Knowledge file rows, their chunks (their FTS5 rows follow by trigger) and their status on
 * SQLite, answered synchronously; the twin of PgKnowledgeFiles (pg-files.ts), with the same
 * methods, results, errors (404 knowledge item) and storage tally.
 *
 * A file turns indexed or failed only from `uploaded`, once; chunks are written only while it
 * is `uploaded`, so an attempt that lost its file (deleted, or settled) stops writing.
 */
export class KnowledgeFiles implements KnowledgeFileStore {
  private readonly settledListeners: KnowledgeSettledListener[] = [];

  constructor(
    private readonly db: Executor,
    private readonly usage?: SiteStorageUsage,
  ) {}

  /** Calls `listener` inside the transaction that marks a file indexed or failed (webhooks write their outbox there). */
  onSettled(listener: KnowledgeSettledListener): void {
    this.settledListeners.push(listener);
  }

  existingIds(siteId: string, fileIds: readonly string[]): Set<string> {
    if (fileIds.length === 0) return new Set();
    const rows = this.db
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.siteId, siteId), inArray(knowledgeFiles.id, [...fileIds])))
      .all();
    return new Set(rows.map((row) => row.id));
  }

  get(siteId: string, fileId: string): KnowledgeFileRow {
    const row = this.db
      .select()
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId)))
      .get();
    if (!row) throw knowledgeItemNotFound();
    return row;
  }

  list(siteId: string, page: number, limit: number): Page<KnowledgeFileRow> {
    const where = eq(knowledgeFiles.siteId, siteId);
    return paginate(
      page,
      limit,
      () => this.db.select({ n: count() }).from(knowledgeFiles).where(where).get()!.n,
      (offset, size) =>
        this.db.select().from(knowledgeFiles).where(where).orderBy(desc(knowledgeFiles.createdAt), desc(knowledgeFiles.id)).limit(size).offset(offset).all(),
    );
  }

  insert(row: KnowledgeFileRow): void {
    this.db.insert(knowledgeFiles).values(row).run();
  }

  delete(siteId: string, fileId: string): void {
    const { changes } = this.db.delete(knowledgeFiles).where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.siteId, siteId))).run();
    if (changes === 0) throw knowledgeItemNotFound();
    this.usage?.changed(siteId);
  }

  search(siteId: string, query: string, options?: SearchOptions): Passage[] {
    return searchKnowledge(this.db, siteId, query, options);
  }

  pending(): QueuedFile[] {
    return this.db.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.status, 'uploaded')).orderBy(knowledgeFiles.createdAt).all();
  }

  lookUp(fileId: string): QueuedFile | undefined {
    return this.db.select(queuedFileColumns(knowledgeFiles)).from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).get();
  }

  current(fileId: string, db: Executor = this.db): KnowledgeFileRow | undefined {
    return db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).get();
  }

  /**
   * Writes a batch of the file's chunks, the first being chunk `start`; false (nothing
   * written) when the file was deleted or settled meanwhile.
   */
  writeChunks(fileId: string, siteId: string, texts: readonly string[], start: number): boolean {
    const written = this.db.transaction((tx) => {
      if (this.current(fileId, tx)?.status !== 'uploaded') return false;
      if (texts.length > 0) tx.insert(knowledgeChunks).values(chunkRows(fileId, siteId, texts, start)).run();
      return true;
    });
    if (written) this.usage?.added(siteId, chunkTextBytes(texts));
    return written;
  }

  /** In batches of a small transaction each, yielding to the event loop between them; then finish(). */
  async writeIndex(fileId: string, siteId: string, texts: readonly string[], signal?: AbortSignal): Promise<KnowledgeFileRow | undefined> {
    for (let start = 0; start < texts.length; start += WRITE_BATCH) {
      if (signal?.aborted) return undefined; // left `uploaded`: the next start indexes it again
      if (!this.writeChunks(fileId, siteId, texts.slice(start, start + WRITE_BATCH), start)) return undefined;
      await yieldToEventLoop();
    }
    return this.finish(fileId, { status: 'indexed', error: null, chunkCount: texts.length });
  }

  clearChunks(fileId: string, siteId?: string): void {
    const awaitsIndexing = this.db
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')));
    // Index entries follow their chunks (triggers keep knowledge_fts in step).
    const { changes } = this.db.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, fileId), exists(awaitsIndexing))).run();
    if (changes > 0 && siteId) this.usage?.changed(siteId);
  }

  finish(fileId: string, outcome: IndexOutcome, now = new Date()): KnowledgeFileRow | undefined {
    // One transaction: a failed file never keeps chunks, whatever fails in between.
    return this.db.transaction((tx) => {
      const row = tx
        .update(knowledgeFiles)
        .set({ ...outcome, updatedAt: now })
        .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
        .returning()
        .get();
      if (!row) return undefined;
      if (outcome.status === 'failed' && tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run().changes > 0) this.usage?.changed(row.siteId);
      for (const listener of this.settledListeners) listener(tx, row);
      return row;
    });
  }
}
