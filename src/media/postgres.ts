import { media, posts } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { MediaPort } from './port.js';
import { and, count, desc, eq, inArray, sql } from '../db/orm.js';

const ofSite = (siteId: string, id: string) => and(eq(media.siteId, siteId), eq(media.id, id));

/** The media port as PostgreSQL answers it, with promises, inside the store's transaction. */
export const postgresMedia: AsyncAdapter<MediaPort, PgExecutor> = {
  insert: async (tx, row) => void (await tx.insert(media).values(row)),
  get: async (tx, siteId, id) => (await tx.select().from(media).where(ofSite(siteId, id)))[0],
  byIds: async (tx, siteId, ids) => (ids.length === 0 ? [] : tx.select().from(media).where(and(eq(media.siteId, siteId), inArray(media.id, [...ids])))),
  page: async (tx, siteId, limit, offset) => ({
    rows: await tx.select().from(media).where(eq(media.siteId, siteId)).orderBy(desc(media.createdAt), desc(media.id)).limit(limit).offset(offset),
    total: (await tx.select({ n: count() }).from(media).where(eq(media.siteId, siteId)))[0]!.n,
  }),
  setAlt: async (tx, siteId, id, alt) => (await tx.update(media).set({ alt }).where(ofSite(siteId, id)).returning())[0],
  remove: async (tx, siteId, id) => (await tx.delete(media).where(ofSite(siteId, id)).returning())[0],
  clearFeatureImage: async (tx, siteId, id) =>
    (
      await tx
        .update(posts)
        .set({ featureImage: null, featureImageAlt: null })
        .where(and(eq(posts.siteId, siteId), eq(posts.featureImage, id)))
        .returning({ id: posts.id })
    ).length,
  totalBytes: async (tx, siteId) =>
    Number((await tx.select({ n: sql<string>`coalesce(sum(${media.sizeBytes}), 0)` }).from(media).where(eq(media.siteId, siteId)))[0]!.n),
};
