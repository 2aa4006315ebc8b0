import { and, desc, eq, gte, inArray, lt, lte, not, like, sql, type AnyColumn } from 'drizzle-orm';
import { prepared, type Executor } from '../db/sqlite.js';
import { analyticsDays, analyticsPages, analyticsReferrers, analyticsSalts, analyticsVisitors, posts } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { ADDED, PATH_PAGES, type AnalyticsPort } from './port.js';

const p = (name: string) => sql.placeholder(name);

// A flush writes row by row, each statement prepared once per connection.
const insertVisitor = (db: Executor) =>
  db
    .insert(analyticsVisitors)
    .values({ siteId: p('siteId'), day: p('day'), page: p('page'), hash: p('hash') })
    .onConflictDoNothing()
    .returning({ hash: analyticsVisitors.hash })
    .prepare();

const addDay = (db: Executor) =>
  db
    .insert(analyticsDays)
    .values({ siteId: p('siteId'), day: p('day'), views: p('views'), visitors: p('visitors') })
    .onConflictDoUpdate({ target: [analyticsDays.siteId, analyticsDays.day], set: ADDED.days })
    .prepare();

const addPage = (db: Executor) =>
  db
    .insert(analyticsPages)
    .values({ siteId: p('siteId'), day: p('day'), page: p('page'), views: p('views'), visitors: p('visitors') })
    .onConflictDoUpdate({ target: [analyticsPages.siteId, analyticsPages.day, analyticsPages.page], set: ADDED.pages })
    .prepare();

const addReferrer = (db: Executor) =>
  db
    .insert(analyticsReferrers)
    .values({ siteId: p('siteId'), day: p('day'), referrer: p('referrer'), views: p('views') })
    .onConflictDoUpdate({ target: [analyticsReferrers.siteId, analyticsReferrers.day, analyticsReferrers.referrer], set: ADDED.referrers })
    .prepare();

const inRange = (column: AnyColumn, from: string, to: string) => and(gte(column, from), lte(column, to));
const sum = (column: AnyColumn) => sql<number>`cast(coalesce(sum(${column}), 0) as integer)`;

/** The analytics port on SQLite. */
export const sqliteAnalytics: SyncAdapter<AnalyticsPort, Executor> = {
  salt: (tx, day, candidate, now) => {
    tx.insert(analyticsSalts).values({ day, salt: candidate, createdAt: now }).onConflictDoNothing().run();
    return tx.select({ salt: analyticsSalts.salt }).from(analyticsSalts).where(eq(analyticsSalts.day, day)).get()!.salt;
  },
  addVisitors: (tx, rows) => rows.filter((row) => prepared(tx, insertVisitor).get({ ...row }) !== undefined),
  addDays: (tx, rows) => rows.forEach(({ siteId, day, views, visitors }) => prepared(tx, addDay).run({ siteId, day, views, visitors })),
  addPages: (tx, rows) => rows.forEach((row) => prepared(tx, addPage).run({ ...row })),
  addReferrers: (tx, rows) => rows.forEach((row) => prepared(tx, addReferrer).run({ ...row })),
  siteDays: (tx, siteId, from, to) =>
    tx
      .select({ day: analyticsDays.day, views: analyticsDays.views, visitors: analyticsDays.visitors })
      .from(analyticsDays)
      .where(and(eq(analyticsDays.siteId, siteId), inRange(analyticsDays.day, from, to)))
      .orderBy(analyticsDays.day)
      .all(),
  pageDays: (tx, siteId, page, from, to) =>
    tx
      .select({ day: analyticsPages.day, views: analyticsPages.views, visitors: analyticsPages.visitors })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), eq(analyticsPages.page, page), inRange(analyticsPages.day, from, to)))
      .orderBy(analyticsPages.day)
      .all(),
  topPosts: (tx, siteId, from, to, limit) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors), title: posts.title, slug: posts.slug })
      .from(analyticsPages)
      .leftJoin(posts, and(eq(posts.id, analyticsPages.page), eq(posts.siteId, analyticsPages.siteId)))
      .where(and(eq(analyticsPages.siteId, siteId), inRange(analyticsPages.day, from, to), not(like(analyticsPages.page, PATH_PAGES))))
      .groupBy(analyticsPages.page, posts.title, posts.slug)
      .orderBy(desc(sum(analyticsPages.views)), analyticsPages.page)
      .limit(limit)
      .all(),
  topPaths: (tx, siteId, from, to, limit) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors) })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), inRange(analyticsPages.day, from, to), like(analyticsPages.page, PATH_PAGES)))
      .groupBy(analyticsPages.page)
      .orderBy(desc(sum(analyticsPages.views)), analyticsPages.page)
      .limit(limit)
      .all(),
  topReferrers: (tx, siteId, from, to, limit) =>
    tx
      .select({ referrer: analyticsReferrers.referrer, views: sum(analyticsReferrers.views) })
      .from(analyticsReferrers)
      .where(and(eq(analyticsReferrers.siteId, siteId), inRange(analyticsReferrers.day, from, to)))
      .groupBy(analyticsReferrers.referrer)
      .orderBy(desc(sum(analyticsReferrers.views)), analyticsReferrers.referrer)
      .limit(limit)
      .all(),
  pageTotals: (tx, siteId, pages, from, to) =>
    tx
      .select({ page: analyticsPages.page, views: sum(analyticsPages.views), visitors: sum(analyticsPages.visitors) })
      .from(analyticsPages)
      .where(and(eq(analyticsPages.siteId, siteId), inArray(analyticsPages.page, pages), inRange(analyticsPages.day, from, to)))
      .groupBy(analyticsPages.page)
      .all(),
  forgetVisitors: (tx, day) => {
    tx.delete(analyticsSalts).where(lte(analyticsSalts.day, day)).run();
    return tx.delete(analyticsVisitors).where(lte(analyticsVisitors.day, day)).run().changes;
  },
  prune: (tx, day) =>
    tx.delete(analyticsDays).where(lt(analyticsDays.day, day)).run().changes +
    tx.delete(analyticsPages).where(lt(analyticsPages.day, day)).run().changes +
    tx.delete(analyticsReferrers).where(lt(analyticsReferrers.day, day)).run().changes,
};
