import { eq, sql } from 'drizzle-orm';
import { sites } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';

/** touchSiteContent() of settings.ts on PostgreSQL: an atomic increment, as several instances may write at once. */
export async function touchSiteContent(db: PgExecutor, siteId: string, now = new Date()): Promise<void> {
  await db
    .update(sites)
    .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: now })
    .where(eq(sites.id, siteId));
}
