import type { Executor } from '../db/sqlite.js';
import { media, posts } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { MediaPort } from './port.js';
import { and, count, desc, eq, inArray, sql } from '../db/orm.js';

const ofSite = (siteId: string, id: string) => and(eq(media.siteId, siteId), eq(media.id, id));

/** The media port as SQLite answers it, at once, inside the store's transaction. */
export const sqliteMedia: SyncAdapter<MediaPort, Executor> = {
  insert: (tx, row) => void tx.insert(media).values(row).run(),
  get: (tx, siteId, id) => tx.select().from(media).where(ofSite(siteId, id)).get(),
  byIds: (tx, siteId, ids) => (ids.length === 0 ? [] : tx.select().from(media).where(and(eq(media.siteId, siteId), inArray(media.id, [...ids]))).all()),
  page: (tx, siteId, limit, offset) => ({
    rows: tx.select().from(media).where(eq(media.siteId, siteId)).orderBy(desc(media.createdAt), desc(media.id)).limit(limit).offset(offset).all(),
    total: tx.select({ n: count() }).from(media).where(eq(media.siteId, siteId)).get()!.n,
  }),
  setAlt: (tx, siteId, id, alt) => tx.update(media).set({ alt }).where(ofSite(siteId, id)).returning().get(),
  remove: (tx, siteId, id) => tx.delete(media).where(ofSite(siteId, id)).returning().get(),
  clearFeatureImage: (tx, siteId, id) =>
    tx
      .update(posts)
      .set({ featureImage: null, featureImageAlt: null })
      .where(and(eq(posts.siteId, siteId), eq(posts.featureImage, id)))
      .run().changes,
  totalBytes: (tx, siteId) => tx.select({ n: sql<number>`coalesce(sum(${media.sizeBytes}), 0)` }).from(media).where(eq(media.siteId, siteId)).get()!.n,
};
