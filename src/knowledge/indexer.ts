import os from 'node:os';
import { isDatabaseBusy, isDatabaseUnavailable, isStorageFull, isStorageUnavailable } from '../errors.js';
import type { KnowledgeExtension } from './detect.js';
import { extractChunksInWorker } from './extract-runner.js';
import { ExtractionError } from './extractor-protocol.js';
import { chunkRows, type IndexOutcome, type KnowledgeFileStore, type QueuedFile } from './file-rows.js';
import type { ObjectStore } from './object-store.js';

/** Kept importable from here, where they began. */
export { chunkRows, type QueuedFile };

/** Text of a stored file cut into index chunks; by default extracted and chunked in a child process. */
export type ChunkSource = (
  filePath: string,
  extension: KnowledgeExtension,
  fileName: string,
  options: { signal: AbortSignal; maxTextBytes?: number },
) => Promise<string[]>;

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
}

/** Formats whose extraction cost follows their size; PDF and Word files can be slow at any size. */
const CHEAP_FORMATS: ReadonlySet<string> = new Set(['txt', 'md', 'csv']);

export interface IndexerStatus {
  queued: number;
  active: number;
  /** Set while indexing waits for the disk to have space, the database to be unlocked or reachable, or the file store to answer. */
  waiting: { reason: WaitReason; retryAt: Date } | null;
}

/** Why indexing waits: a full disk, a locked database, a database or a file store that does not answer. */
export type WaitReason = 'storage-full' | 'database-busy' | 'database-unavailable' | 'storage-unavailable';

const WAIT_MESSAGES: Record<WaitReason, string> = {
  'storage-full': 'knowledge indexing waits: the disk is full',
  'database-busy': 'knowledge indexing waits: the database is locked',
  'database-unavailable': 'knowledge indexing waits: the database cannot be reached',
  'storage-unavailable': 'knowledge indexing waits: the file store cannot be reached',
};

/** PostgreSQL's SQLSTATEs of an error and of its causes (Drizzle wraps the driver's error in `cause`). */
function sqlStates(error: unknown): string[] {
  const codes: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const { code } = e as { code?: unknown };
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** PostgreSQL's disk full (53100), and its lock conflicts: a deadlock, a serialization failure, a lock not available. */
const isPostgresDiskFull = (error: unknown) => sqlStates(error).includes('53100');
const isPostgresConflict = (error: unknown) => sqlStates(error).some((code) => code === '40001' || code === '40P01' || code === '55P03');

/** The file's work could not be done for a reason outside it (full disk, locked database, unreachable store): it waits. */
class Postponed extends Error {
  constructor(readonly reason: WaitReason, options: ErrorOptions) {
    super(reason, options);
  }
}

const DEFAULT_SMALL_FILE_BYTES = 128 * 1024;

/**
 * Indexes uploaded files in the background: extract, chunk, write the chunks, then mark the
 * file `indexed` (or `failed` with a readable error), through the files store (KnowledgeFiles,
 * whose last transaction of chunks marks the file). A file's status turns `indexed` only after
 * all its chunks are written, so a crash leaves it `uploaded`, and `resumePending()` at start-up
 * indexes it again from scratch.
 *
 * Sites take turns (round robin): a site that uploads a hundred files delays another site's
 * next file by one file, not a hundred. A full disk, a locked database or one that cannot be
 * reached, or a file store that does not answer never fails a file nor ends the process: the
 * file stays `uploaded`, indexing pauses with a growing backoff and resumes by itself once a
 * write succeeds again.
 */
export class KnowledgeIndexer {
  /** Per site, files in upload order. */
  private readonly queues = new Map<string, QueuedFile[]>();
  /** When each site was last served (a running count), for round robin. */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;
  private readonly queuedIds = new Set<string>();
  /** Files being indexed: queued again meanwhile (resumePending() while one is indexed), they are not indexed twice at once. */
  private readonly activeIds = new Set<string>();
  /** Files enqueued by id whose rows are being looked up. */
  private lookingUp = 0;
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
    private readonly files: KnowledgeFileStore,
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
  enqueue(file: string | QueuedFile): void {
    if (this.closed) return;
    if (typeof file !== 'string') return this.add({ id: file.id, siteId: file.siteId, sizeBytes: file.sizeBytes, extension: file.extension });
    this.lookingUp++;
    this.files
      .lookUp(file)
      .then(
        (row) => row && this.add(row),
        (error: unknown) => this.log.warn({ err: error, fileId: file }, 'could not look up a knowledge file to index; it is indexed at the next start'),
      )
      .finally(() => {
        this.lookingUp--;
        this.notifyIfIdle();
      });
  }

  private add(queued: QueuedFile): void {
    if (this.closed || this.queuedIds.has(queued.id) || this.activeIds.has(queued.id)) return;
    this.queuedIds.add(queued.id);
    const siteQueue = this.queues.get(queued.siteId);
    if (siteQueue) siteQueue.push(queued);
    else this.queues.set(queued.siteId, [queued]);
    this.pump();
  }

  /**
   * Queues every file left `uploaded` (by a previous process, or by an instance sharing the
   * database that stopped); answers how many. On PostgreSQL this includes
   * files another live instance is indexing right now: both may index such a file, and the
   * files store keeps the first attempt to finish (one set of chunks, one final status).
   */
  async resumePending(): Promise<number> {
    const pending = await this.files.pending();
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
    return this.lookingUp === 0 && this.lanes.every((lane) => lane === null) && (this.queuedIds.size === 0 || this.waiting !== null || this.closed);
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Starts queued files on free lanes: the general lanes take any file, the last lane small text files only. */
  private pump(): void {
    if (this.closed) return;
    // While waiting, `waiting` stays set (with its attempt count) until a file gets through. A
    // timer may fire a millisecond before the clock reaches retryAt: it is set again for the rest.
    if (this.waiting && Date.now() < this.waiting.retryAt) {
      if (!this.retryTimer) this.retryAfter(this.waiting.retryAt - Date.now());
      return;
    }
    this.lanes.forEach((lane, index) => {
      if (lane) return;
      const file = this.takeNext(index >= this.generalLanes);
      if (!file) return;
      this.activeBySite.set(file.siteId, (this.activeBySite.get(file.siteId) ?? 0) + 1);
      this.activeIds.add(file.id);
      this.lanes[index] = this.run(file).finally(() => {
        this.activeIds.delete(file.id);
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
        await this.files.finish(file.id, { status: 'failed', error: 'Indexing failed unexpectedly; upload the file again', chunkCount: 0 });
      } catch (finishError) {
        const again = this.classify(finishError);
        if (again) return this.postpone(file, again);
        this.log.error({ err: finishError, fileId: file.id }, 'could not record a knowledge file as failed');
      }
    }
  }

  private classify(error: unknown): Postponed | null {
    if (isStorageFull(error) || isPostgresDiskFull(error)) return new Postponed('storage-full', { cause: error });
    if (isDatabaseBusy(error) || isPostgresConflict(error)) return new Postponed('database-busy', { cause: error });
    // The store's error first: it carries its own network failure (ECONNREFUSED) as its cause.
    if (isStorageUnavailable(error)) return new Postponed('storage-unavailable', { cause: error });
    if (isDatabaseUnavailable(error)) return new Postponed('database-unavailable', { cause: error });
    return null;
  }

  private postpone(file: QueuedFile, postponed: Postponed): void {
    // Partial chunks (of a file written in several transactions) would be cleared by the next
    // attempt anyway; try now, it may not work yet (still full or locked: the next attempt will).
    this.files.clearChunks(file.id, file.siteId).catch(() => {});
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
    this.retryAfter(delay);
  }

  private retryAfter(delay: number): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.pump();
    }, delay);
    this.retryTimer.unref();
  }

  private async index(fileId: string): Promise<void> {
    const file = await this.files.current(fileId);
    if (!file || file.status !== 'uploaded') return;
    await this.files.clearChunks(fileId, file.siteId);

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
      await this.finish(fileId, { status: 'failed', error: error.message, chunkCount: 0 });
      return;
    }

    // Stopped by shutdown, it is left `uploaded`: the next start indexes it again. Deleted or
    // settled meanwhile (by another instance), nothing of this attempt stays.
    const row = await this.files.writeIndex(fileId, file.siteId, chunks, this.shutdown.signal);
    if (row) this.log.info({ fileId, chunks: chunks.length }, 'knowledge file indexed');
  }

  private async finish(fileId: string, result: IndexOutcome): Promise<void> {
    await this.files.finish(fileId, result);
  }
}
