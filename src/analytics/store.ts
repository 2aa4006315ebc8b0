import { ask, inSavepoint, type StepDatabase, type Steps } from '../db/steps.js';
import { daysOf, DIRECT, MAX_REFERRERS_PER_DAY, OTHER_REFERRERS, SITE_PAGE, TOP_ROWS, type DayRange } from './rules.js';
import type { DayCount, PageCount, PageIncrement, PostCount, ReferrerCount, ReferrerIncrement, VisitorRow } from './port.js';

/** What a flush writes: views per page, views per referrer, and the visitors seen (hashes). */
export interface CountBatch {
  pages: Omit<PageIncrement, 'visitors'>[];
  referrers: ReferrerIncrement[];
  /** Distinct; site-wide ones have page SITE_PAGE. */
  visitors: VisitorRow[];
}

export interface SiteStats {
  from: string;
  to: string;
  /** Every day of the range, days without views too. */
  days: DayCount[];
  /** Views, and the sum of each day's visitors (a reader on two days counts twice). */
  totals: { views: number; visitors: number };
  topPosts: PostCount[];
  topPages: PageCount[];
  topReferrers: ReferrerCount[];
}

export interface PageStats {
  from: string;
  to: string;
  days: DayCount[];
  totals: { views: number; visitors: number };
}

const key = (...parts: string[]) => parts.join('\n');

/** Every day of `range`, with the counts `rows` hold (zero elsewhere). */
function everyDay(range: DayRange, rows: DayCount[]): { days: DayCount[]; totals: { views: number; visitors: number } } {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const days = daysOf(range.from, range.to).map((day) => ({ day, views: byDay.get(day)?.views ?? 0, visitors: byDay.get(day)?.visitors ?? 0 }));
  return { days, totals: { views: days.reduce((n, d) => n + d.views, 0), visitors: days.reduce((n, d) => n + d.visitors, 0) } };
}

/** Names looked up at once (a statement's parameters stay few on both databases). */
const LOOKUP_CHUNK = 500;

/**
 * A site's referrer rows with those past the day's cap folded into OTHER_REFERRERS: referrers
 * the day already has keep counting, new ones are admitted (the busiest first) while the day
 * has fewer than `cap`. Instances writing at once may each admit up to the cap's remainder.
 */
function* cappedReferrersSteps(rows: ReferrerIncrement[], cap: number): Steps<ReferrerIncrement[]> {
  const byDay = new Map<string, ReferrerIncrement[]>();
  for (const row of rows) byDay.set(row.day, [...(byDay.get(row.day) ?? []), row]);
  const kept: ReferrerIncrement[] = [];
  for (const [day, dayRows] of byDay) {
    const { siteId } = dayRows[0]!;
    const stored = yield* ask('analytics', 'countReferrers', siteId, day);
    if (stored + dayRows.length <= cap) {
      kept.push(...dayRows);
      continue;
    }
    const names = dayRows.map((row) => row.referrer);
    const known = new Set<string>();
    for (let i = 0; i < names.length; i += LOOKUP_CHUNK) {
      for (const name of yield* ask('analytics', 'knownReferrers', siteId, day, names.slice(i, i + LOOKUP_CHUNK))) known.add(name);
    }
    let room = Math.max(0, cap - stored);
    let other = 0;
    for (const row of [...dayRows].sort((a, b) => b.views - a.views || (a.referrer < b.referrer ? -1 : 1))) {
      if (row.referrer === DIRECT || row.referrer === OTHER_REFERRERS || known.has(row.referrer)) kept.push(row);
      else if (room > 0) {
        room--;
        kept.push(row);
      } else other += row.views;
    }
    if (other > 0) {
      const existing = kept.find((row) => row.day === day && row.referrer === OTHER_REFERRERS);
      if (existing) existing.views += other;
      else kept.push({ siteId, day, referrer: OTHER_REFERRERS, views: other });
    }
  }
  return kept;
}

/** A site's share of a batch, written in a savepoint of its own: a site deleted meanwhile loses only its counts. */
function* recordSiteSteps(batch: CountBatch, maxReferrers: number): Steps<void> {
  // Sorted, so that instances writing the same rows at once take their locks in one order.
  const visitors = [...batch.visitors].sort((a, b) => (key(a.day, a.page, a.hash) < key(b.day, b.page, b.hash) ? -1 : 1));
  const added = visitors.length > 0 ? yield* ask('analytics', 'addVisitors', visitors) : [];
  // A visitor counts once a day: where this instance's insert made the hash.
  const newVisitors = new Map<string, number>();
  for (const row of added) newVisitors.set(key(row.day, row.page), (newVisitors.get(key(row.day, row.page)) ?? 0) + 1);

  const siteId = batch.pages[0]?.siteId ?? batch.visitors[0]?.siteId;
  if (siteId === undefined) return;
  const days = new Map<string, number>();
  for (const page of batch.pages) days.set(page.day, (days.get(page.day) ?? 0) + page.views);
  const dayRows = [...days].sort().map(([day, views]) => ({ siteId, day, page: SITE_PAGE, views, visitors: newVisitors.get(key(day, SITE_PAGE)) ?? 0 }));
  const pageRows = batch.pages
    .map((page) => ({ ...page, visitors: newVisitors.get(key(page.day, page.page)) ?? 0 }))
    .sort((a, b) => (key(a.day, a.page) < key(b.day, b.page) ? -1 : 1));
  const referrerRows = (yield* cappedReferrersSteps(batch.referrers, maxReferrers)).sort((a, b) => (key(a.day, a.referrer) < key(b.day, b.referrer) ? -1 : 1));
  if (dayRows.length > 0) yield* ask('analytics', 'addDays', dayRows);
  if (pageRows.length > 0) yield* ask('analytics', 'addPages', pageRows);
  if (referrerRows.length > 0) yield* ask('analytics', 'addReferrers', referrerRows);
}

function* recordSteps(bySite: Map<string, CountBatch>, maxReferrers: number): Steps<number> {
  let written = 0;
  for (const siteId of [...bySite.keys()].sort()) {
    const batch = bySite.get(siteId)!;
    try {
      yield* inSavepoint(() => recordSiteSteps(batch, maxReferrers));
      written += batch.pages.reduce((n, page) => n + page.views, 0);
    } catch (error) {
      // The site is gone (its rows' foreign key): its stats went with it.
      if (!isForeignKeyViolation(error)) throw error;
    }
  }
  return written;
}

function isForeignKeyViolation(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || e.code === '23503') return true;
  }
  return false;
}

/**
 * Stats of every site: daily counts written in batches (record), read back per site and per
 * page, and the visitor hashes forgotten once their day is over everywhere (forgetVisitors).
 */
export class AnalyticsStore {
  constructor(private readonly db: StepDatabase) {}

  /** The salt of `day` every instance uses: `candidate` when this call stores the first. */
  salt(day: string, candidate: string, now: Date): Promise<string> {
    return this.db.read(() => ask('analytics', 'salt', day, candidate, now));
  }

  /** Writes a batch in one transaction; answers the views written. A day keeps at most `maxReferrers` referrers (the rest count as other). */
  record(batch: CountBatch, maxReferrers = MAX_REFERRERS_PER_DAY): Promise<number> {
    const bySite = new Map<string, CountBatch>();
    const of = (siteId: string) => {
      let site = bySite.get(siteId);
      if (!site) bySite.set(siteId, (site = { pages: [], referrers: [], visitors: [] }));
      return site;
    };
    for (const row of batch.pages) of(row.siteId).pages.push(row);
    for (const row of batch.referrers) of(row.siteId).referrers.push(row);
    for (const row of batch.visitors) of(row.siteId).visitors.push(row);
    return this.db.write(() => recordSteps(bySite, maxReferrers));
  }

  /** A site's days, top posts, pages and referrers over `range`. */
  siteStats(siteId: string, range: DayRange, top = TOP_ROWS): Promise<SiteStats> {
    const { from, to } = range;
    return this.db.read(function* () {
      const rows = yield* ask('analytics', 'siteDays', siteId, from, to);
      return {
        from,
        to,
        ...everyDay(range, rows),
        topPosts: yield* ask('analytics', 'topPosts', siteId, from, to, top),
        topPages: yield* ask('analytics', 'topPaths', siteId, from, to, top),
        topReferrers: yield* ask('analytics', 'topReferrers', siteId, from, to, top),
      };
    });
  }

  /** One page's (a post's id) days over `range`. */
  async pageStats(siteId: string, page: string, range: DayRange): Promise<PageStats> {
    const rows = await this.db.read(() => ask('analytics', 'pageDays', siteId, page, range.from, range.to));
    return { from: range.from, to: range.to, ...everyDay(range, rows) };
  }

  /** Views and visitors over `range` of each of `pages` (posts' ids), zero for those without. */
  async pageTotals(siteId: string, pages: string[], range: DayRange): Promise<PageCount[]> {
    const rows = pages.length === 0 ? [] : await this.db.read(() => ask('analytics', 'pageTotals', siteId, pages, range.from, range.to));
    const byPage = new Map(rows.map((row) => [row.page, row]));
    return pages.map((page) => byPage.get(page) ?? { page, views: 0, visitors: 0 });
  }

  /** Deletes the salts and visitor hashes of days up to `day` (see lastFinishedDay). */
  forgetVisitors(day: string): Promise<number> {
    return this.db.read(() => ask('analytics', 'forgetVisitors', day));
  }

  /** Deletes the counts of days before `day` (STATS_RETENTION_DAYS). */
  prune(day: string): Promise<number> {
    return this.db.read(() => ask('analytics', 'prune', day));
  }
}
