import { sql } from '../db/orm.js';

/*
 * What the analytics store (store.ts) asks its database. Counts are written as increments
 * (an upsert adds to the row), so instances sharing a database add up; a visitor hash is
 * inserted where it is missing, and only the instance whose insert made it counts the visitor.
 */

/** Views (and visitors new to the row) to add to a page's day, or to a site's (page omitted). */
export interface PageIncrement {
  siteId: string;
  day: string;
  /** A post's id, or the path of an index, tag or category page. */
  page: string;
  views: number;
  visitors: number;
}

export interface ReferrerIncrement {
  siteId: string;
  day: string;
  referrer: string;
  views: number;
}

/** One visitor of a day: site-wide (page SITE_PAGE) or of a page. */
export interface VisitorRow {
  siteId: string;
  day: string;
  page: string;
  hash: string;
}

export interface DayCount {
  day: string;
  views: number;
  visitors: number;
}

export interface PageCount {
  page: string;
  views: number;
  visitors: number;
}

export interface PostCount extends PageCount {
  /** Null once the post is deleted. */
  title: string | null;
  slug: string | null;
}

export interface ReferrerCount {
  referrer: string;
  views: number;
}

export interface AnalyticsPort {
  /** The salt of `day`: `candidate` unless another instance stored one first (then that one). */
  salt(day: string, candidate: string, now: Date): string;
  /** Inserts the visitor hashes not stored yet; answers those it inserted. */
  addVisitors(rows: VisitorRow[]): VisitorRow[];
  /** Adds to sites' days. */
  addDays(rows: PageIncrement[]): void;
  addPages(rows: PageIncrement[]): void;
  addReferrers(rows: ReferrerIncrement[]): void;
  /** How many referrers a site's day has stored, direct and other not counted. */
  countReferrers(siteId: string, day: string): number;
  /** Which of `referrers` (at most 500) a site's day has stored. */
  knownReferrers(siteId: string, day: string, referrers: string[]): string[];
  /** A site's days from `from` to `to` that have counts. */
  siteDays(siteId: string, from: string, to: string): DayCount[];
  /** A page's days from `from` to `to` that have counts. */
  pageDays(siteId: string, page: string, from: string, to: string): DayCount[];
  /** Posts by views over the range (most first), with their title and slug. */
  topPosts(siteId: string, from: string, to: string, limit: number): PostCount[];
  /** Index, tag and category pages (paths) by views over the range. */
  topPaths(siteId: string, from: string, to: string, limit: number): PageCount[];
  topReferrers(siteId: string, from: string, to: string, limit: number): ReferrerCount[];
  /** Views and visitors over the range of each of `pages` that has any. */
  pageTotals(siteId: string, pages: string[], from: string, to: string): PageCount[];
  /** Deletes the salts and visitor hashes of days up to `day`; answers how many hashes. */
  forgetVisitors(day: string): number;
  /** Deletes a page's daily counts and visitor hashes (a deleted post's: the site's own totals stay). */
  forgetPage(siteId: string, page: string): void;
  /** Deletes the counts of days before `day`; answers how many rows. */
  prune(day: string): number;
}

declare module '../db/steps.js' {
  interface Ports {
    analytics: AnalyticsPort;
  }
}

/** Pages that are paths (index, tag, category), not posts' ids: LIKE pattern. */
export const PATH_PAGES = '/%';

const plus = (table: string, column: string) => sql.raw(`"${table}"."${column}" + excluded.${column}`);

/** An upsert's update: the counts it tried to insert, added to the row's (both dialects spell it alike). */
export const ADDED = {
  days: { views: plus('analytics_days', 'views'), visitors: plus('analytics_days', 'visitors') },
  pages: { views: plus('analytics_pages', 'views'), visitors: plus('analytics_pages', 'visitors') },
  referrers: { views: plus('analytics_referrers', 'views') },
};
