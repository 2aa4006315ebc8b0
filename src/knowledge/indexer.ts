import os from 'node:os';
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeChunks, knowledgeFiles, type KnowledgeFileRow } from '../db/schema.js';
import { isDatabaseBusy, isStorageFull, isStorageUnavailable } from '../errors.js';
import type { KnowledgeExtension } from './detect.js';
import { extractChunksInWorker } from './extract-runner.js';
import { ExtractionError } from './extract.js';
import type { ObjectStore } from './storage.js';
import type { SiteStorageUsage } from './usage.js';
import { chunkRows, chunkTextBytes, queuedFileColumns, type IndexOutcome, type QueuedFile } from './file-rows.js';

/** Kept importable from here, where they began. */
export { chunkRows, type QueuedFile };

/** Text of a stored file cut into index chunks; by default extracted and chunked in a child process. */
export type ChunkSource = (
  filePath: string,
  extension: KnowledgeExtension,
  fileName: string,
  options: { signal: AbortSignal; maxTextBytes?: number },
) => Promise<string[]>;

// Chunks are written in small transactions with a pause between them, so indexing a large
// file never holds the event loop (and with it every other request) for long.
const WRITE_BATCH = 25;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface IndexerOptions {
  /** Most text taken from one file, in UTF-8 bytes (MAX_EXTRACTED_TEXT_MB). */
  maxTextBytes?: number;
  /**
   * Files of any kind indexed at the same time (default: 2 on a machine with 2 or more CPUs,
   * else 1). Beside them, one more lane takes only small text files (txt, md, csv up to
   * `smallFileBytes`), whose extraction costs milliseconds: they never wait behind a slow PDF.
   */
  concurrency?: number;
  /** Text files up to this size take the lane for small files (0: no such lane). */
  smallFileBytes?: number;
  /** First wait after a full disk or a locked database; each further one doubles, up to `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Told of the chunk text written and removed, for the sites' storage quota. */
  usage?: SiteStorageUsage;
}

/** Formats whose extraction cost follows their size; PDF and Word files can be slow at any size. */
const CHEAP_FORMATS: ReadonlySet<string> = new Set(['txt', 'md', 'csv']);

export interface IndexerStatus {
  queued: number;
  active: number;
  /** Set while indexing waits for the disk to have space, the database to be unlocked, or the file store to answer. */
  waiting: { reason: WaitReason; retryAt: Date } | null;
}

/** Why indexing waits: a full disk, a locked database, a file store that does not answer. */
export type WaitReason = 'storage-full' | 'database-busy' | 'storage-unavailable';

const WAIT_MESSAGES: Record<WaitReason, string> = {
  'storage-full': 'knowledge indexing waits: the disk is full',
  'database-busy': 'knowledge indexing waits: the database is locked',
  'storage-unavailable': 'knowledge indexing waits: the file store cannot be reached',
};

/** The file's work could not be done for a reason outside it (full disk, locked database, unreachable store): it waits. */
class Postponed extends Error {
  constructor(readonly reason: WaitReason, options: ErrorOptions) {
    super(reason, options);
  }
}

const DEFAULT_SMALL_FILE_BYTES = 128 * 1024;

/**
 * Indexes uploaded files in the background: extract, chunk, write the chunks (their FTS5
 * rows follow by trigger), then mark the file `indexed` (or `failed` with a readable error).
 * A file's status turns `indexed` only after all its chunks are written, so a crash leaves
 * it `uploaded`, and `resumePending()` at start-up indexes it again from scratch.
 *
 * Sites take turns (round robin): a site that uploads a hundred files delays another site's
 * next file by one file, not a hundred. A full disk or a locked database never fails a file
 * nor ends the process: the file stays `uploaded`, indexing pauses with a growing backoff and
 * resumes by itself once a write succeeds again.
 */
/** Runs inside the transaction that marks a file indexed or failed, with the row as marked. */
export type KnowledgeSettledListener = (tx: Executor, file: KnowledgeFileRow) => void;

export class KnowledgeIndexer {
  private readonly settledListeners: KnowledgeSettledListener[] = [];
  /** Per site, files in upload order. */
  private readonly queues = new Map<string, QueuedFile[]>();
  /** When each site was last served (a running count), for round robin. */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;
  private readonly queuedIds = new Set<string>();
  /** Lanes for any file, then (last) the lane for small text files. */
  private readonly lanes: (Promise<void> | null)[];
  private readonly generalLanes: number;
  /** Files in progress per site: a site with none goes first. */
  private readonly activeBySite = new Map<string, number>();
  private closed = false;
  // Aborted on close, so shutdown does not wait for a long extraction to finish.
  private readonly shutdown = new AbortController();
  private waiting: { reason: WaitReason; retryAt: number; attempt: number } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private idleWaiters: (() => void)[] = [];
  private readonly smallFileBytes: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;

  constructor(
    private readonly db: Executor,
    private readonly storage: ObjectStore,
    private readonly log: Logger,
    private readonly chunkSource: ChunkSource = extractChunksInWorker,
    private readonly options: IndexerOptions = {},
  ) {
    const cpus = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    this.smallFileBytes = options.smallFileBytes ?? DEFAULT_SMALL_FILE_BYTES;
    this.generalLanes = Math.max(1, options.concurrency ?? (cpus >= 2 ? 2 : 1));
    this.lanes = Array.from({ length: this.generalLanes + (this.smallFileBytes > 0 ? 1 : 0) }, () => null);
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.retryMaxMs = options.retryMaxMs ?? 60_000;
  }

  /** Queues a file for indexing (its row, or its id, looked up). */
  /** Calls `listener` inside the transaction that marks a file indexed or failed (webhooks write their outbox there). */
  onSettled(listener: KnowledgeSettledListener): void {
    this.settledListeners.push(listener);
  }

  enqueue(file: string | QueuedFile): void {
    if (this.closed) return;
    const queued = typeof file === 'string' ? this.lookUp(file) : { id: file.id, siteId: file.siteId, sizeBytes: file.sizeBytes, extension: file.extension };
    if (!queued || this.queuedIds.has(queued.id)) return;
    this.queuedIds.add(queued.id);
    const siteQueue = this.queues.get(queued.siteId);
    if (siteQueue) siteQueue.push(queued);
    else this.queues.set(queued.siteId, [queued]);
    this.pump();
  }

  /** Queues every file a previous process left `uploaded`. */
  resumePending(): number {
    const pending = this.db
      .select(queuedFileColumns(knowledgeFiles))
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.status, 'uploaded'))
      .orderBy(knowledgeFiles.createdAt)
      .all();
    for (const file of pending) this.enqueue(file);
    return pending.length;
  }

  status(): IndexerStatus {
    return {
      queued: this.queuedIds.size,
      active: this.lanes.filter(Boolean).length,
      waiting: this.waiting ? { reason: this.waiting.reason, retryAt: new Date(this.waiting.retryAt) } : null,
    };
  }

  /**
   * Resolves when no file is being indexed and none is queued, or every queued one waits for
   * the disk or the database (tests wait on this; a waiting indexer makes no progress alone).
   */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work and waits for the files in progress; queued files stay `uploaded`. */
  async close(): Promise<void> {
    this.closed = true;
    this.queues.clear();
    this.queuedIds.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.shutdown.abort();
    await Promise.all(this.lanes.filter(Boolean));
    this.notifyIfIdle();
  }

  private isIdle(): boolean {
    return this.lanes.every((lane) => lane === null) && (this.queuedIds.size === 0 || this.waiting !== null || this.closed);
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private lookUp(fileId: string): QueuedFile | undefined {
    return this.db
      .select(queuedFileColumns(knowledgeFiles))
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.id, fileId))
      .get();
  }

  /** Starts queued files on free lanes: the general lanes take any file, the last lane small text files only. */
  private pump(): void {
    // While waiting, `waiting` stays set (with its attempt count) until a file gets through.
    if (this.closed || (this.waiting && Date.now() < this.waiting.retryAt)) return;
    this.lanes.forEach((lane, index) => {
      if (lane) return;
      const file = this.takeNext(index >= this.generalLanes);
      if (!file) return;
      this.activeBySite.set(file.siteId, (this.activeBySite.get(file.siteId) ?? 0) + 1);
      this.lanes[index] = this.run(file).finally(() => {
        const left = (this.activeBySite.get(file.siteId) ?? 1) - 1;
        if (left > 0) this.activeBySite.set(file.siteId, left);
        else this.activeBySite.delete(file.siteId);
        this.lanes[index] = null;
        this.pump();
        this.notifyIfIdle();
      });
    });
  }

  private isSmallText(file: QueuedFile): boolean {
    return CHEAP_FORMATS.has(file.extension) && file.sizeBytes <= this.smallFileBytes;
  }

  /**
   * The next file (a small text file only, for the small-file lane) in round robin: of the
   * sites with such a file, one with nothing in progress first, then the one whose last turn
   * is the oldest (a site never served first; ties to the site that queued first). A site's
   * turn holds even when its queue ran empty between two uploads.
   */
  private takeNext(smallTextOnly: boolean): QueuedFile | undefined {
    let chosen: { siteId: string; files: QueuedFile[]; at: number; rank: [number, number] } | undefined;
    for (const [siteId, files] of this.queues) {
      const at = smallTextOnly ? files.findIndex((f) => this.isSmallText(f)) : 0;
      if (at < 0 || files.length === 0) continue;
      const rank: [number, number] = [this.activeBySite.has(siteId) ? 1 : 0, this.lastTurn.get(siteId) ?? 0];
      if (!chosen || rank[0] < chosen.rank[0] || (rank[0] === chosen.rank[0] && rank[1] < chosen.rank[1])) chosen = { siteId, files, at, rank };
    }
    if (!chosen) return undefined;
    const [file] = chosen.files.splice(chosen.at, 1);
    if (chosen.files.length === 0) this.queues.delete(chosen.siteId);
    this.lastTurn.set(chosen.siteId, ++this.turns);
    this.queuedIds.delete(file!.id);
    return file;
  }

  /** Indexes one file; never rejects. A postponed file goes back to the head of its site's queue. */
  private async run(file: QueuedFile): Promise<void> {
    try {
      await this.index(file.id);
      if (this.waiting) {
        this.log.info({ after: this.waiting.reason }, 'knowledge indexing resumed');
        this.waiting = null;
      }
    } catch (error) {
      if (this.closed) return;
      const postponed = this.classify(error);
      if (postponed) return this.postpone(file, postponed);
      this.log.error({ err: error, fileId: file.id }, 'knowledge indexing failed unexpectedly');
      try {
        this.finish(file.id, { status: 'failed', error: 'Indexing failed unexpectedly; upload the file again', chunkCount: 0 });
      } catch (finishError) {
        const again = this.classify(finishError);
        if (again) return this.postpone(file, again);
        this.log.error({ err: finishError, fileId: file.id }, 'could not record a knowledge file as failed');
      }
    }
  }

  private classify(error: unknown): Postponed | null {
    if (isStorageFull(error)) return new Postponed('storage-full', { cause: error });
    if (isDatabaseBusy(error)) return new Postponed('database-busy', { cause: error });
    if (isStorageUnavailable(error)) return new Postponed('storage-unavailable', { cause: error });
    return null;
  }

  private postpone(file: QueuedFile, postponed: Postponed): void {
    // Partial chunks would be cleared by the next attempt anyway; try now, it may not work yet.
    try {
      this.clearChunks(file.id, file.siteId);
    } catch {
      // Still full or locked: the next attempt starts by clearing them.
    }
    if (!this.queuedIds.has(file.id)) {
      this.queuedIds.add(file.id);
      this.queues.set(file.siteId, [file, ...(this.queues.get(file.siteId) ?? [])]);
    }
    const attempt = (this.waiting?.attempt ?? 0) + 1;
    const delay = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempt - 1));
    this.waiting = { reason: postponed.reason, retryAt: Date.now() + delay, attempt };
    this.log.warn(
      { fileId: file.id, reason: postponed.reason, err: postponed.cause, retryInMs: delay },
      WAIT_MESSAGES[postponed.reason],
    );
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pump();
    }, delay);
    this.retryTimer.unref();
  }

  private currentRow(fileId: string, db: Executor = this.db) {
    return db.select().from(knowledgeFiles).where(eq(knowledgeFiles.id, fileId)).get();
  }

  private async index(fileId: string): Promise<void> {
    const file = this.currentRow(fileId);
    if (!file || file.status !== 'uploaded') return;
    this.clearChunks(fileId, file.siteId);

    let chunks: string[];
    try {
      chunks = await this.storage.withLocalFile(file.storageKey, (filePath) =>
        this.chunkSource(filePath, file.extension as KnowledgeExtension, file.name, {
          signal: this.shutdown.signal,
          maxTextBytes: this.options.maxTextBytes,
        }),
      );
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
        tx.insert(knowledgeChunks).values(chunkRows(fileId, file.siteId, chunks.slice(start, start + WRITE_BATCH), start)).run();
        return true;
      });
      if (!stillThere) return;
      this.options.usage?.added(file.siteId, chunkTextBytes(chunks.slice(start, start + WRITE_BATCH)));
      await yieldToEventLoop();
    }
    this.finish(fileId, { status: 'indexed', error: null, chunkCount: chunks.length });
    this.log.info({ fileId, chunks: chunks.length }, 'knowledge file indexed');
  }

  /** Index entries follow their chunks (triggers keep knowledge_fts in step). */
  private clearChunks(fileId: string, siteId?: string): void {
    const { changes } = this.db.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run();
    if (changes > 0 && siteId) this.options.usage?.changed(siteId);
  }

  private finish(fileId: string, result: IndexOutcome): void {
    // One transaction: a failed file never keeps chunks, whatever fails in between.
    this.db.transaction((tx) => {
      if (result.status === 'failed' && tx.delete(knowledgeChunks).where(eq(knowledgeChunks.fileId, fileId)).run().changes > 0) {
        const siteId = this.currentRow(fileId, tx)?.siteId;
        if (siteId) this.options.usage?.changed(siteId);
      }
      const row = tx
        .update(knowledgeFiles)
        .set({ ...result, updatedAt: new Date() })
        .where(and(eq(knowledgeFiles.id, fileId), eq(knowledgeFiles.status, 'uploaded')))
        .returning()
        .get();
      if (row) for (const listener of this.settledListeners) listener(tx, row);
    });
  }
}
