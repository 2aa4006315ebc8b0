import { eq, sql } from 'drizzle-orm';
import { knowledgeChunks, knowledgeFiles } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { ChunkTextTally, storageUsage } from './usage.js';

/**
 * The PostgreSQL twin of SiteStorageUsage (usage.ts): the same estimate from the same counts.
 * Chunk text is measured in UTF-8 bytes by octet_length (SQLite: length of the text cast to a
 * blob). Sums of bigints come back as numeric, read as text by the driver: mapped to numbers.
 *
 * The tally of chunk text is this instance's: chunks another instance writes are counted once
 * this one counts the site again (after a file of the site is deleted or fails here, or a restart).
 */
export class PgSiteStorageUsage extends ChunkTextTally {
  constructor(private readonly db: PgExecutor) {
    super();
  }

  /** Stored files plus their index, in bytes. */
  async usage(siteId: string): Promise<number> {
    const [files] = await this.db
      .select({ bytes: sql<number>`coalesce(sum(${knowledgeFiles.sizeBytes}), 0)`.mapWith(Number) })
      .from(knowledgeFiles)
      .where(eq(knowledgeFiles.siteId, siteId));
    return storageUsage(files!.bytes, await this.chunkTextBytes(siteId));
  }

  private async chunkTextBytes(siteId: string): Promise<number> {
    const known = this.known(siteId);
    if (known !== undefined) return known;
    const [chunks] = await this.db
      .select({ bytes: sql<number>`coalesce(sum(octet_length(${knowledgeChunks.text})), 0)`.mapWith(Number) })
      .from(knowledgeChunks)
      .where(eq(knowledgeChunks.siteId, siteId));
    return this.counted(siteId, chunks!.bytes);
  }
}
