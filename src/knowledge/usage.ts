import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { knowledgeChunks, knowledgeFiles } from '../db/schema.js';
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

/**
 * Per site, the bytes of chunk text: counted once (one pass over the site's chunks, by the
 * database's twin below), then kept up to date by the indexer, so checking the quota on every
 * upload costs one small query.
 */
export abstract class ChunkTextTally {
  private readonly textBytes = new Map<string, number>();

  /** The indexer wrote chunks of `bytes` of text for the site. */
  added(siteId: string, bytes: number): void {
    const known = this.textBytes.get(siteId);
    if (known !== undefined) this.textBytes.set(siteId, known + bytes);
  }

  /** Chunks went away (a file deleted, or failed): counted again at the next look. */
  changed(siteId: string): void {
    this.textBytes.delete(siteId);
  }

  protected known(siteId: string): number | undefined {
    return this.textBytes.get(siteId);
  }

  protected counted(siteId: string, bytes: number): number {
    this.textBytes.set(siteId, bytes);
    return bytes;
  }
}

/**
 * What a site's knowledge base takes on disk: its stored files plus their index, estimated
 * from the bytes of chunk text (the FTS5 index cannot be measured per site).
 */
export class SiteStorageUsage extends ChunkTextTally {
  constructor(private readonly db: Executor) {
    super();
  }

  /** Stored files plus their index, in bytes. */
  usage(siteId: string): number {
    const files = this.db
      .select({ bytes: sql<number>`coalesce(sum(${knowledgeFiles.sizeBytes}), 0)` })
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.siteId, siteId))
      .get()!.bytes;
    return storageUsage(files, this.chunkTextBytes(siteId));
  }

  private chunkTextBytes(siteId: string): number {
    return (
      this.known(siteId) ??
      this.counted(
        siteId,
        this.db
          .select({ bytes: sql<number>`coalesce(sum(length(cast(${knowledgeChunks.text} as blob))), 0)` })
          .from(knowledgeChunks)
          .where(eq(knowledgeChunks.siteId, siteId))
          .get()!.bytes,
      )
    );
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
    `The site's knowledge base uses ${formatSize(usageBytes)} of its ${formatSize(quotaBytes)} storage quota (files plus their index)${upload}. Delete files to make room`,
    { usageBytes, quotaBytes, ...(uploadBytes === undefined ? {} : { fileBytes: uploadBytes }) },
  );
}
