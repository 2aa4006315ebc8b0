import { prepared, type Executor } from '../db/sqlite.js';
import { analyticsDays, analyticsPages, analyticsReferrers, analyticsSalts, analyticsVisitors, posts } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { ADDED, type AnalyticsPort, type DayCount, type PageCount, type PostCount, type ReferrerCount } from './port.js';
import * as statements from './statements.js';
import { and, eq, lt, lte, sql } from '../db/orm.js';

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

const tables = { days: analyticsDays, pages: analyticsPages, referrers: analyticsReferrers, posts };

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
  countReferrers: (tx, siteId, day) => tx.get<{ count: number }>(statements.countReferrers(tables, siteId, day))!.count,
  knownReferrers: (tx, siteId, day, referrers) => tx.all<{ referrer: string }>(statements.knownReferrers(tables, siteId, day, referrers)).map((row) => row.referrer),
  siteDays: (tx, siteId, from, to) => tx.all<DayCount>(statements.siteDays(tables, siteId, from, to)),
  pageDays: (tx, siteId, page, from, to) => tx.all<DayCount>(statements.pageDays(tables, siteId, page, from, to)),
  topPosts: (tx, siteId, from, to, limit) => tx.all<PostCount>(statements.topPosts(tables, siteId, from, to, limit)),
  topPaths: (tx, siteId, from, to, limit) => tx.all<PageCount>(statements.topPaths(tables, siteId, from, to, limit)),
  topReferrers: (tx, siteId, from, to, limit) => tx.all<ReferrerCount>(statements.topReferrers(tables, siteId, from, to, limit)),
  pageTotals: (tx, siteId, pages, from, to) => tx.all<PageCount>(statements.pageTotals(tables, siteId, pages, from, to)),
  forgetPage: (tx, siteId, page) => {
    tx.delete(analyticsPages).where(and(eq(analyticsPages.siteId, siteId), eq(analyticsPages.page, page))).run();
    tx.delete(analyticsVisitors).where(and(eq(analyticsVisitors.siteId, siteId), eq(analyticsVisitors.page, page))).run();
  },
  forgetVisitors: (tx, day) => {
    tx.delete(analyticsSalts).where(lte(analyticsSalts.day, day)).run();
    return tx.delete(analyticsVisitors).where(lte(analyticsVisitors.day, day)).run().changes;
  },
  prune: (tx, day) =>
    tx.delete(analyticsDays).where(lt(analyticsDays.day, day)).run().changes +
    tx.delete(analyticsPages).where(lt(analyticsPages.day, day)).run().changes +
    tx.delete(analyticsReferrers).where(lt(analyticsReferrers.day, day)).run().changes,
};
