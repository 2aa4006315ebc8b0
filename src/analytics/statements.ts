import type { SQL, Table } from 'drizzle-orm';
import { PATH_PAGES } from './port.js';
import { DIRECT, OTHER_REFERRERS } from './rules.js';
import { sql } from '../db/orm.js';

// The reads of the stats, which both databases spell alike, over either database's tables (each
// adapter passes its own schema's): written once here, run by sqlite.ts and postgres.ts.

export interface AnalyticsTables {
  days: Table;
  pages: Table;
  referrers: Table;
  posts: Table;
}

/** Counts add up as integers on both databases (PostgreSQL's sum of integers would be a bigint, read as text). */
const total = (column: SQL) => sql`cast(coalesce(sum(${column}), 0) as integer)`;
const inRange = (from: string, to: string) => sql`day >= ${from} and day <= ${to}`;

/** The site's days from `from` to `to` that have counts: `day`, `views`, `visitors`. */
export const siteDays = (t: AnalyticsTables, siteId: string, from: string, to: string): SQL =>
  sql`select day as "day", views as "views", visitors as "visitors" from ${t.days}
       where site_id = ${siteId} and ${inRange(from, to)} order by day`;

/** A page's days from `from` to `to` that have counts: `day`, `views`, `visitors`. */
export const pageDays = (t: AnalyticsTables, siteId: string, page: string, from: string, to: string): SQL =>
  sql`select day as "day", views as "views", visitors as "visitors" from ${t.pages}
       where site_id = ${siteId} and page = ${page} and ${inRange(from, to)} order by day`;

/** Posts by views over the range, most first, with their title and slug (null once deleted). */
export const topPosts = (t: AnalyticsTables, siteId: string, from: string, to: string, limit: number): SQL =>
  sql`select a.page as "page", ${total(sql`a.views`)} as "views", ${total(sql`a.visitors`)} as "visitors", p.title as "title", p.slug as "slug"
        from ${t.pages} a left join ${t.posts} p on p.id = a.page and p.site_id = a.site_id
       where a.site_id = ${siteId} and a.day >= ${from} and a.day <= ${to} and a.page not like ${PATH_PAGES}
       group by a.page, p.title, p.slug
       order by ${total(sql`a.views`)} desc, a.page limit ${limit}`;

/** Index, tag and category pages (paths) by views over the range: `page`, `views`, `visitors`. */
export const topPaths = (t: AnalyticsTables, siteId: string, from: string, to: string, limit: number): SQL =>
  sql`select page as "page", ${total(sql`views`)} as "views", ${total(sql`visitors`)} as "visitors" from ${t.pages}
       where site_id = ${siteId} and ${inRange(from, to)} and page like ${PATH_PAGES}
       group by page order by ${total(sql`views`)} desc, page limit ${limit}`;

/** Referrers by views over the range: `referrer`, `views`. */
export const topReferrers = (t: AnalyticsTables, siteId: string, from: string, to: string, limit: number): SQL =>
  sql`select referrer as "referrer", ${total(sql`views`)} as "views" from ${t.referrers}
       where site_id = ${siteId} and ${inRange(from, to)}
       group by referrer order by ${total(sql`views`)} desc, referrer limit ${limit}`;

/** How many referrers a site's day has, direct and other not counted: `count`. */
export const countReferrers = (t: AnalyticsTables, siteId: string, day: string): SQL =>
  sql`select cast(count(*) as integer) as "count" from ${t.referrers}
       where site_id = ${siteId} and day = ${day} and referrer <> ${DIRECT} and referrer <> ${OTHER_REFERRERS}`;

/** Which of `referrers` a site's day has already: `referrer`. */
export const knownReferrers = (t: AnalyticsTables, siteId: string, day: string, referrers: readonly string[]): SQL =>
  sql`select referrer as "referrer" from ${t.referrers}
       where site_id = ${siteId} and day = ${day} and referrer in (${sql.join(referrers.map((referrer) => sql`${referrer}`), sql`, `)})`;

/** Views and visitors over the range of each of `pages` that has any: `page`, `views`, `visitors`. */
export const pageTotals = (t: AnalyticsTables, siteId: string, pages: readonly string[], from: string, to: string): SQL => {
  const chosen = pages.length ? sql`page in (${sql.join(pages.map((page) => sql`${page}`), sql`, `)})` : sql`1 = 0`;
  return sql`select page as "page", ${total(sql`views`)} as "views", ${total(sql`visitors`)} as "visitors" from ${t.pages}
              where site_id = ${siteId} and ${chosen} and ${inRange(from, to)} group by page`;
};
