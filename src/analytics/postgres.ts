import { and, desc, eq, gte, inArray, like, lt, lte, not, sql, type AnyColumn } from 'drizzle-orm';
import { analyticsDays, analyticsPages, analyticsReferrers, analyticsSalts, analyticsVisitors, posts } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { ADDED, PATH_PAGES, type AnalyticsPort } from './port.js';

/** Rows per statement: a flush of many views is a few statements, each well under PostgreSQL's 65,535 parameters. */
const CHUNK = 1000;

async function inChunks<T, R>(rows: T[], write: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const answers: R[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) answers.push(...(await write(rows.slice(i, i + CHUNK))));
  return answers;
}

const inRange = (column: AnyColumn, from: string, to: string) => and(gte(column, from), lte(column, to));
const sum = (column: AnyColumn) => sql<number>`cast(coalesce(sum(${column}), 0) as integer)`;

/** The analytics port on PostgreSQL. */
export const postgresAnalytics: AsyncAdapter<AnalyticsPort, PgExecutor> = {
  salt: async (tx, day, candidate, now) => {
    await tx.insert(analyticsSalts).values({ day, salt: candidate, createdAt: now }).onConflictDoNothing();
    return (await tx.select({ salt: analyticsSalts.salt }).from(analyticsSalts).where(eq(analyticsSalts.day, day)))[0]!.salt;
  },
  // Of instances inserting the same hash at once, one inserts it; the others wait for its commit and insert nothing.
  addVisitors: (tx, rows) =>
    inChunks(rows, (chunk) =>
      tx
        .insert(analyticsVisitors)
        .values(chunk)
        .onConflictDoNothing()
        .returning({ siteId: analyticsVisitors.siteId, day: analyticsVisitors.day, page: analyticsVisitors.page, hash: analyticsVisitors.hash }),
    ),
  addDays: async (tx, rows) =>
    void (await inChunks(rows, async (chunk) => {
      await tx
        .insert(analyticsDays)
        .values(chunk.map(({ siteId, day, views, visitors }) => ({ siteId, day, views, visitors })))
        .onConflictDoUpdate({ target: [analyticsDays.siteId, analyticsDays.day], set: ADDED.days });
      return [];
    })),
  addPages: async (tx, rows) =>
    void (await inChunks(rows, async (chunk) => {
      await tx
        .insert(analyticsPages)
        .values(chunk)
        .onConflictDoUpdate({ target: [analyticsPages.siteId, analyticsPages.day, analyticsPages.page], set: ADDED.pages });
      return [];
    })),
  addReferrers: async (tx, rows) =>
    void (await inChunks(rows, async (chunk) => {
      await tx
        .insert(analyticsReferrers)
        .values(chunk)
        .onConflictDoUpdate({ target: [analyticsReferrers.siteId, analyticsReferrers.day, analyticsReferrers.referrer], set: ADDED.referrers });
      return [];
    })),
  siteDays: (tx, siteId, from, to) =>
    tx
      .select({ day: analyticsDays.day, views: analyticsDays.views, visitors: analyticsDays.visitors })
      .from(analyticsDays)
      .where(and(eq(analyticsDays.siteId, siteId), inRange(analyticsDays.day, from, to)))
      .orderBy(analyticsDays.day),
  pageDays: (tx, siteId, page, from, to) =>
    tx
      .select({ day: analyticsPages.day, views: analyticsPages.views, visitors: analyticsPages.visitors })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), eq(analyticsPages.page, page), inRange(analyticsPages.day, from, to)))
      .orderBy(analyticsPages.day),
  topPosts: (tx, siteId, from, to, limit) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors), title: posts.title, slug: posts.slug })
      .from(analyticsPages)
      .leftJoin(posts, and(eq(posts.id, analyticsPages.page), eq(posts.siteId, analyticsPages.siteId)))
      .where(and(eq(analyticsPages.siteId, siteId), inRange(analyticsPages.day, from, to), not(like(analyticsPages.page, PATH_PAGES))))
      .groupBy(analyticsPages.page, posts.title, posts.slug)
      .orderBy(desc(sum(analyticsPages.views)), analyticsPages.page)
      .limit(limit),
  topPaths: (tx, siteId, from, to, limit) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors) })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), inRange(analyticsPages.day, from, to), like(analyticsPages.page, PATH_PAGES)))
      .groupBy(analyticsPages.page)
      .orderBy(desc(sum(analyticsPages.views)), analyticsPages.page)
      .limit(limit),
  topReferrers: (tx, siteId, from, to, limit) =>
    tx
      .select({ referrer: analyticsReferrers.referrer, views: sum(analyticsReferrers.views) })
      .from(analyticsReferrers)
      .where(and(eq(analyticsReferrers.siteId, siteId), inRange(analyticsReferrers.day, from, to)))
      .groupBy(analyticsReferrers.referrer)
      .orderBy(desc(sum(analyticsReferrers.views)), analyticsReferrers.referrer)
      .limit(limit),
  pageTotals: (tx, siteId, pages, from, to) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors) })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), inArray(analyticsPages.page, pages), inRange(analyticsPages.day, from, to)))
      .groupBy(analyticsPages.page),
  forgetVisitors: async (tx, day) => {
    await tx.delete(analyticsSalts).where(lte(analyticsSalts.day, day));
    return (await tx.delete(analyticsVisitors).where(lte(analyticsVisitors.day, day))).rowCount ?? 0;
  },
  prune: async (tx, day) => {
    let rows = 0;
    for (const table of [analyticsDays, analyticsPages, analyticsReferrers]) rows += (await tx.delete(table).where(lt(table.day, day))).rowCount ?? 0;
    return rows;
  },
};
