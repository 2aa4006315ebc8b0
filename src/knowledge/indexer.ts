import { and, eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeChunks, knowledgeFiles } from '../db/schema.js';
import type { KnowledgeExtension } from './detect.js';
import { extractChunksInWorker } from './extract-runner.js';
import { ExtractionError } from './extract.js';
import type { FileStorage } from './storage.js';

/** Text of a stored file cut into index chunks; by default extracted and chunked in a child process. */
export type ChunkSource = (filePath: string, extension: KnowledgeExtension, fileName: string, options: { signal: AbortSignal }) => Promise<string[]>;

// Chunks are written in small transactions with a pause between them, so indexing a large
// file never holds the event loop (and with it every other request) for long.
const WRITE_BATCH = 25;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Indexes uploaded files one at a time, in the background: extract, chunk, write the chunks
 * (their FTS5 rows follow by trigger), then mark the file `indexed` (or `failed` with a readable error).
 * A file's status turns `indexed` only after all its chunks are written, so a crash leaves
 * it `uploaded`, and `resumePending()` at start-up indexes it again from scratch.
 */
export class KnowledgeIndexer {
  private readonly queue: string[] = [];
  private running: Promise<void> | null = null;
  private closed = false;
  // Aborted on close, so shutdown does not wait for a long extraction to finish.
  private readonly shutdown = new AbortController();

  constructor(
    private readonly db: Executor,
    private readonly storage: FileStorage,
    private readonly log: Logger,
    private readonly chunkSource: ChunkSource = extractChunksInWorker,
  ) {}

  enqueue(fileId: string): void {
    if (this.closed) return;
    this.queue.push(fileId);
    this.running ??= this.drain();
  }

  /** Queues every file a previous process left `uploaded`. */
  resumePending(): number {
    const pending = this.db
      .select({ id: knowledgeFiles.id })
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.status, 'uploaded'))
      .all();
    for (const { id } of pending) this.enqueue(id);
    return pending.length;
  }

  /** Resolves when nothing is queued or being indexed. */
  async whenIdle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops taking work and waits for the file in progress; queued files stay `uploaded`. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    this.shutdown.abort();
    await this.whenIdle();
  }

  private async drain(): Promise<void> {
    try {
      for (let fileId = this.queue.shift(); fileId && !this.closed; fileId = this.queue.shift()) {
        try {
          await this.index(fileId);
        } catch (error) {
          this.log.error({ err: error, fileId }, 'knowledge indexing failed unexpectedly');
          this.finish(fileId, { status: 'failed', error: 'Indexing failed unexpectedly; upload the file again', chunkCount: 0 });
        }
      }
    } finally {
      // Cleared in the same synchronous step that found the queue empty: an enqueue() right
      // after always starts a new drain.
      this.running = null;
    }
  }

  private currentRow(fileId: string, db: Executor = this.db) {
    return db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).get();
  }

  private async index(fileId: string): Promise<void> {
    const file = this.currentRow(fileId);
    if (!file || file.status !== 'uploaded') return;
    this.clearChunks(fileId);

    let chunks: string[];
    try {
      chunks = await this.chunkSource(this.storage.pathOf(file.storageKey), file.extension as KnowledgeExtension, file.name, {
        signal: this.shutdown.signal,
      });
      if (chunks.length === 0) throw new ExtractionError('The file contains no text');
    } catch (error) {
      if (this.closed) return; // cancelled by shutdown: left `uploaded`, indexed at the next start
      if (!(error instanceof ExtractionError)) throw error;
      this.log.warn({ fileId, reason: error.message }, 'knowledge file could not be indexed');
      this.finish(fileId, { status: 'failed', error: error.message, chunkCount: 0 });
      return;
    }

    for (let start = 0; start < chunks.length; start += WRITE_BATCH) {
      if (this.closed) return; // left `uploaded`: the next start indexes it again
      const stillThere = this.db.transaction((tx) => {
        if (!this.currentRow(fileId, tx)) return false; // deleted while being indexed
        const rows = chunks.slice(start, start + WRITE_BATCH).map((text, i) => ({ fileId, siteId: file.siteId, ordinal: start + i, text }));
        tx.insert(knowledgeChunks).values(rows).run();
        return true;
      });
      if (!stillThere) return;
      await yieldToEventLoop();
    }
    this.finish(fileId, { status: 'indexed', error: null, chunkCount: chunks.length });
    this.log.info({ fileId, chunks: chunks.length }, 'knowledge file indexed');
  }

  /** Index entries follow their chunks (triggers keep knowledge_fts in step). */
  private clearChunks(fileId: string): void {
    this.db.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run();
  }

  private finish(fileId: string, result: { status: 'indexed' | 'failed'; error: string | null; chunkCount: number }): void {
    if (result.status === 'failed') this.clearChunks(fileId);
    this.db
      .update(knowledgeFiles)
      .set({ ...result, updatedAt: new Date() })
      .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
      .run();
  }
}
