import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { paginateSteps, type Page } from '../pagination.js';
import { chunkRows, chunkTextBytes, knowledgeItemNotFound, type IndexOutcome, type KnowledgeFileRow, type KnowledgeFileStore, type QueuedFile } from './file-rows.js';
import type { ChunkTextTally } from './usage.js';

/** Runs inside the transaction that marks a file indexed or failed, with the row as marked (webhooks write their outbox there). */
export type KnowledgeSettledListener = (file: KnowledgeFileRow) => Steps<void>;

export interface KnowledgeFilesOptions {
  /** The storage tally the writes keep up to date (SiteStorageUsage). */
  usage?: ChunkTextTally;
  /**
   * Chunks written per transaction while indexing (all of them, by default, in the one that
   * marks the file indexed). Where a transaction holds the event loop while it runs (SQLite),
   * a few at a time, with a pause between transactions, so a large file never stalls requests.
   */
  chunksPerTransaction?: number;
}

/** Chunks per insert statement (4 parameters each): few statements, each of a few hundred kilobytes. */
const CHUNKS_PER_STATEMENT = 500;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A transaction of writeIndex() done: whether it replaced chunks of an earlier attempt, and the row it marked indexed, if it was the last. */
interface ChunksWritten {
  replaced: boolean;
  row?: KnowledgeFileRow;
}

/** Thrown inside a transaction of writeIndex() to roll it back when its signal stops it. */
class Stopped extends Error {}

/**
 * Knowledge file rows, their chunks (the database's search index follows them) and their
 * status, on either database.
 *
 * A file turns indexed or failed only from `uploaded`, once. Each transaction that writes chunks
 * first holds the file's row and finds it still `uploaded`; the last one marks it indexed. Two
 * attempts at one file (instances sharing PostgreSQL: one resumes the files still `uploaded`,
 * among them those another is indexing right now) therefore leave one set of chunks and one
 * final status; a later attempt finds the file settled and writes nothing, and a delete waits
 * for the commit (then takes the chunks along). A file no longer `uploaded` keeps its chunks.
 */
export class KnowledgeFiles implements KnowledgeFileStore {
  private readonly settledListeners: KnowledgeSettledListener[] = [];
  private readonly chunksPerTransaction: number;

  constructor(
    private readonly db: StepDatabase,
    private readonly options: KnowledgeFilesOptions = {},
  ) {
    this.chunksPerTransaction = Math.max(1, options.chunksPerTransaction ?? Infinity);
  }

  /** Runs `listener` inside the transaction that marks a file indexed or failed. */
  onSettled(listener: KnowledgeSettledListener): void {
    this.settledListeners.push(listener);
  }

  async existingIds(siteId: string, fileIds: readonly string[]): Promise<Set<string>> {
    if (fileIds.length === 0) return new Set();
    return new Set(await this.db.read(() => ask('knowledgeFiles', 'existingIds', siteId, fileIds)));
  }

  async get(siteId: string, fileId: string): Promise<KnowledgeFileRow> {
    const row = await this.db.read(() => ask('knowledgeFiles', 'get', siteId, fileId));
    if (!row) throw knowledgeItemNotFound();
    return row;
  }

  list(siteId: string, page: number, limit: number): Promise<Page<KnowledgeFileRow>> {
    return this.db.read(() =>
      paginateSteps(
        page,
        limit,
        () => ask('knowledgeFiles', 'count', siteId),
        (offset, size) => ask('knowledgeFiles', 'page', siteId, offset, size),
      ),
    );
  }

  insert(row: KnowledgeFileRow): Promise<void> {
    return this.db.write(() => ask('knowledgeFiles', 'insert', row));
  }

  /** Deletes the site's file row, its chunks with it; 404 when it is gone. */
  async delete(siteId: string, fileId: string): Promise<void> {
    if (!(await this.db.write(() => ask('knowledgeFiles', 'delete', siteId, fileId)))) throw knowledgeItemNotFound();
    this.options.usage?.changed(siteId);
  }

  pending(): Promise<QueuedFile[]> {
    return this.db.read(() => ask('knowledgeFiles', 'pending'));
  }

  lookUp(fileId: string): Promise<QueuedFile | undefined> {
    return this.db.read(() => ask('knowledgeFiles', 'lookUp', fileId));
  }

  current(fileId: string): Promise<KnowledgeFileRow | undefined> {
    return this.db.read(() => ask('knowledgeFiles', 'current', fileId));
  }

  async clearChunks(fileId: string, siteId?: string): Promise<void> {
    const cleared = await this.db.write(() => ask('knowledgeFiles', 'clearChunksAwaitingIndex', fileId));
    if (cleared > 0 && siteId) this.options.usage?.changed(siteId);
  }

  /**
   * Writes the file's chunks, replacing those of an earlier attempt, and marks it indexed in the
   * transaction that writes the last of them. Undefined (nothing more written) when the file is
   * gone or settled, or when `signal` stops the writing: the transaction under way rolls back and
   * the file stays `uploaded`, for the next start to index again.
   */
  async writeIndex(fileId: string, siteId: string, texts: readonly string[], signal?: AbortSignal, now = new Date()): Promise<KnowledgeFileRow | undefined> {
    for (let start = 0; ; start += this.chunksPerTransaction) {
      const end = Math.min(texts.length, start + this.chunksPerTransaction);
      let written: ChunksWritten | undefined;
      try {
        if (signal?.aborted) throw new Stopped();
        written = await this.db.write(() => this.writeChunks(fileId, siteId, texts, { start, end, signal, now }));
      } catch (error) {
        if (error instanceof Stopped) return undefined;
        throw error;
      }
      if (!written) return undefined;
      if (written.replaced) this.options.usage?.changed(siteId);
      else this.options.usage?.added(siteId, chunkTextBytes(texts.slice(start, end)));
      if (end === texts.length) return written.row;
      await yieldToEventLoop();
    }
  }

  /** One transaction of writeIndex(): chunks `start` to `end`, and the mark after the last. */
  private *writeChunks(
    fileId: string,
    siteId: string,
    texts: readonly string[],
    { start, end, signal, now }: { start: number; end: number; signal?: AbortSignal; now: Date },
  ): Steps<ChunksWritten | undefined> {
    if ((yield* ask('knowledgeFiles', 'holdForIndexing', fileId)) !== 'uploaded') return undefined;
    const replaced = start === 0 && (yield* ask('knowledgeFiles', 'deleteChunks', fileId)) > 0;
    for (let from = start; from < end; from += CHUNKS_PER_STATEMENT) {
      if (signal?.aborted) throw new Stopped();
      yield* ask('knowledgeFiles', 'insertChunks', chunkRows(fileId, siteId, texts.slice(from, Math.min(end, from + CHUNKS_PER_STATEMENT)), from));
    }
    if (end < texts.length) return { replaced };
    const settled = yield* this.settle(fileId, { status: 'indexed', error: null, chunkCount: texts.length }, now);
    return settled && { replaced, row: settled.row };
  }

  /** Marks an `uploaded` file indexed or failed (a failed file keeps no chunks); undefined when gone or marked already. */
  async finish(fileId: string, outcome: IndexOutcome, now = new Date()): Promise<KnowledgeFileRow | undefined> {
    const settled = await this.db.write(() => this.settle(fileId, outcome, now));
    if (settled?.cleared) this.options.usage?.changed(settled.row.siteId);
    return settled?.row;
  }

  /** The mark comes first, so it holds the row before anything else changes; then the listeners, in the same transaction. */
  private *settle(fileId: string, outcome: IndexOutcome, now: Date): Steps<{ row: KnowledgeFileRow; cleared: boolean } | undefined> {
    const row = yield* ask('knowledgeFiles', 'settle', fileId, outcome, now);
    if (!row) return undefined;
    const cleared = outcome.status === 'failed' && (yield* ask('knowledgeFiles', 'deleteChunks', fileId)) > 0;
    for (const listener of this.settledListeners) yield* listener(row);
    return { row, cleared };
  }
}
