import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { AppError } from '../errors.js';
import { formatSize } from './storage.js';

/**
 * Database bytes per byte of chunk text: the chunk row, its FTS5 index entries and the
 * indexes on the chunks table. Measured on English prose: 5 MB of plain text makes 5.8 MB of
 * chunk text (overlap and file-name headers) and grows the database by 9.9 MB.
 */
export const INDEX_BYTES_PER_TEXT_BYTE = 1.75;

/** Stored files plus their index, in bytes, from the bytes of files and of chunk text. */
export const storageUsage = (fileBytes: number, textBytes: number) => fileBytes + Math.round(textBytes * INDEX_BYTES_PER_TEXT_BYTE);

/** What the files store tells the storage tally: chunks written or gone. */
export interface ChunkTextTally {
  /** The indexer wrote chunks of `bytes` of text for the site. */
  added(siteId: string, bytes: number): void;
  /** Chunks went away (a file deleted, or failed): counted again at the next look. */
  changed(siteId: string): void;
}

/**
 * What a site's knowledge base takes: its stored files plus their index, estimated from the
 * bytes of chunk text (SQLite's FTS5 index cannot be measured per site). The chunk text is
 * counted once per site (one pass over its chunks), then kept up to date by the files store's
 * writes, so checking the quota on every upload costs one small query.
 *
 * The tally is this process's: chunks another instance sharing the database writes are counted
 * once this one counts the site again (after a file of the site is deleted or fails here, or a
 * restart).
 */
export class SiteStorageUsage implements ChunkTextTally {
  private readonly textBytes = new Map<string, number>();

  constructor(private readonly db: StepDatabase) {}

  added(siteId: string, bytes: number): void {
    const known = this.textBytes.get(siteId);
    if (known !== undefined) this.textBytes.set(siteId, known + bytes);
  }

  changed(siteId: string): void {
    this.textBytes.delete(siteId);
  }

  /** Stored files (knowledge files and images) plus the knowledge index, in bytes. */
  usage(siteId: string): Promise<number> {
    return this.db.read(() => this.measure(siteId));
  }

  private *measure(siteId: string): Steps<number> {
    // Images of the media library count in the same quota.
    const files = (yield* ask('knowledgeUsage', 'fileBytes', siteId)) + (yield* ask('media', 'totalBytes', siteId));
    let text = this.textBytes.get(siteId);
    if (text === undefined) this.textBytes.set(siteId, (text = yield* ask('knowledgeUsage', 'chunkTextBytes', siteId)));
    return storageUsage(files, text);
  }
}

/**
 * The 413 refusing `incomingBytes` more (0: anything more) to a site that uses `usedBytes` of
 * its quota, or null when they fit.
 */
export function quotaRefusal(usedBytes: number, quotaBytes: number, incomingBytes: number): AppError | null {
  const fits = incomingBytes === 0 ? usedBytes < quotaBytes : usedBytes + incomingBytes <= quotaBytes;
  return fits ? null : quotaExceeded(usedBytes, quotaBytes, incomingBytes === 0 ? undefined : incomingBytes);
}

/** 413 naming what the site uses and its quota. */
export function quotaExceeded(usageBytes: number, quotaBytes: number, uploadBytes?: number): AppError {
  const upload = uploadBytes === undefined ? '' : `; this file (${formatSize(uploadBytes)}) does not fit`;
  return new AppError(
    413,
    'QUOTA_EXCEEDED',
    `The site uses ${formatSize(usageBytes)} of its ${formatSize(quotaBytes)} storage quota (knowledge files, their index and images)${upload}. Delete files or images to make room`,
    { usageBytes, quotaBytes, ...(uploadBytes === undefined ? {} : { fileBytes: uploadBytes }) },
  );
}
