import type { SQL } from 'drizzle-orm';
import { analyticsDays, analyticsPages, analyticsReferrers, analyticsSalts, analyticsVisitors, posts } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { ADDED, type AnalyticsPort, type DayCount, type PageCount, type PostCount, type ReferrerCount } from './port.js';
import * as statements from './statements.js';
import { and, eq, lt, lte } from '../db/orm.js';

/** Rows per statement: a flush of many views is a few statements, each well under PostgreSQL's 65,535 parameters. */
const CHUNK = 1000;

async function inChunks<T, R>(rows: T[], write: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const answers: R[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) answers.push(...(await write(rows.slice(i, i + CHUNK))));
  return answers;
}

const tables = { days: analyticsDays, pages: analyticsPages, referrers: analyticsReferrers, posts };

async function rowsOf<Row>(tx: PgExecutor, statement: SQL): Promise<Row[]> {
  return (await tx.execute(statement)).rows as Row[];
}

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
  countReferrers: async (tx, siteId, day) => (await rowsOf<{ count: number }>(tx, statements.countReferrers(tables, siteId, day)))[0]!.count,
  knownReferrers: async (tx, siteId, day, referrers) => (await rowsOf<{ referrer: string }>(tx, statements.knownReferrers(tables, siteId, day, referrers))).map((row) => row.referrer),
  siteDays: (tx, siteId, from, to) => rowsOf<DayCount>(tx, statements.siteDays(tables, siteId, from, to)),
  pageDays: (tx, siteId, page, from, to) => rowsOf<DayCount>(tx, statements.pageDays(tables, siteId, page, from, to)),
  topPosts: (tx, siteId, from, to, limit) => rowsOf<PostCount>(tx, statements.topPosts(tables, siteId, from, to, limit)),
  topPaths: (tx, siteId, from, to, limit) => rowsOf<PageCount>(tx, statements.topPaths(tables, siteId, from, to, limit)),
  topReferrers: (tx, siteId, from, to, limit) => rowsOf<ReferrerCount>(tx, statements.topReferrers(tables, siteId, from, to, limit)),
  pageTotals: (tx, siteId, pages, from, to) => rowsOf<PageCount>(tx, statements.pageTotals(tables, siteId, pages, from, to)),
  forgetPage: async (tx, siteId, page) => {
    await tx.delete(analyticsPages).where(and(eq(analyticsPages.siteId, siteId), eq(analyticsPages.page, page)));
    await tx.delete(analyticsVisitors).where(and(eq(analyticsVisitors.siteId, siteId), eq(analyticsVisitors.page, page)));
  },
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
