import { hash, randomBytes } from 'node:crypto';
import type { VisitorRow } from './port.js';
import { dayIn, SITE_PAGE } from './rules.js';
import type { AnalyticsStore, CountBatch } from './store.js';

/** A reader's view of a page, as the public site hands it over. */
export interface View {
  siteId: string;
  /** The site's time zone: the view counts on the day it is there. */
  timeZone: string;
  /** A post's id, or the path of an index, tag or category page. */
  page: string;
  referrer: string;
  /** The client's address and user agent: held in memory until the next flush hashes them, never stored. */
  address: string;
  userAgent: string;
}

export interface CounterOptions {
  /** Milliseconds since the epoch (tests move it to the next day). */
  clock?: () => number;
  /** Distinct pending entries kept between flushes (views and readers apiece); past it, views are dropped (and told). */
  maxPending?: number;
  /** Distinct referrers stored per site and day (MAX_REFERRERS_PER_DAY; tests make it small). */
  maxReferrersPerDay?: number;
}

const SEP = '\u0000';
const DEFAULT_MAX_PENDING = 100_000;
/** Salts kept in memory: the days of all time zones now, and a little. */
const SALTS_KEPT = 4;
/** Visitor rows this process knows are stored (it wrote them): not written again. Forgotten all at once past this. */
const KNOWN_VISITORS = 200_000;

/**
 * A visitor: a keyed hash of (site, address, user agent) with the day's salt (SHA-256 of the
 * salt, a separator and the rest; the salt is a fixed-length prefix key, the one-shot hash a
 * third of an HMAC's cost), 128 bits in base64url.
 */
export const visitorHash = (salt: string, siteId: string, address: string, userAgent: string) =>
  hash('sha256', `${salt}${SEP}${siteId}${SEP}${address}${SEP}${userAgent}`, 'base64url').slice(0, 22);

/**
 * Views counted in memory and written in batches (flush): a request only adds to two maps,
 * views by (site, day, page, referrer), and the pages each reader (site, day, address, agent)
 * read. The flush hashes address and agent with the day's salt (shared by every instance
 * through the store), so neither leaves this process. A flush that fails loses its batch,
 * never a request.
 */
export class ViewCounter {
  private views = new Map<string, number>();
  private readers = new Map<string, Set<string>>();
  private readonly salts = new Map<string, string>();
  private readonly known = new Set<string>();
  private readonly clock: () => number;
  private readonly maxPending: number;
  private readonly maxReferrers: number | undefined;
  /** Views dropped since the last flush because the buffer was full. */
  dropped = 0;

  constructor(
    private readonly store: AnalyticsStore,
    options: CounterOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.maxReferrers = options.maxReferrersPerDay;
  }

  /** Distinct entries waiting for the next flush. */
  get size(): number {
    return this.views.size;
  }

  count(view: View): void {
    const day = dayIn(view.timeZone, this.clock());
    const entry = view.siteId + SEP + day + SEP + view.page + SEP + view.referrer;
    const reader = view.siteId + SEP + day + SEP + view.address + SEP + view.userAgent;
    const pages = this.readers.get(reader);
    const seen = this.views.get(entry);
    if ((seen === undefined && this.views.size >= this.maxPending) || (pages === undefined && this.readers.size >= this.maxPending)) {
      this.dropped++;
      return;
    }
    this.views.set(entry, (seen ?? 0) + 1);
    if (pages) pages.add(view.page);
    else this.readers.set(reader, new Set([view.page]));
  }

  /** Takes what is pending and writes it; answers the views written. Throws when the database does (the batch is lost). */
  async flush(): Promise<number> {
    if (this.views.size === 0) return 0;
    const views = this.views;
    const readers = this.readers;
    this.views = new Map();
    this.readers = new Map();
    this.dropped = 0;

    const pages = new Map<string, { siteId: string; day: string; page: string; views: number }>();
    const referrers = new Map<string, { siteId: string; day: string; referrer: string; views: number }>();
    for (const [entry, count] of views) {
      const [siteId, day, page, referrer] = entry.split(SEP) as [string, string, string, string];
      const pageKey = siteId + SEP + day + SEP + page;
      const pageRow = pages.get(pageKey);
      if (pageRow) pageRow.views += count;
      else pages.set(pageKey, { siteId, day, page, views: count });
      // One row per (site, day, referrer): an upsert may not touch a row twice.
      const referrerKey = siteId + SEP + day + SEP + referrer;
      const referrerRow = referrers.get(referrerKey);
      if (referrerRow) referrerRow.views += count;
      else referrers.set(referrerKey, { siteId, day, referrer, views: count });
    }

    const visitors: VisitorRow[] = [];
    const fresh: string[] = [];
    for (const [reader, readPages] of readers) {
      const [siteId, day, address, userAgent] = reader.split(SEP) as [string, string, string, string];
      const visitor = visitorHash(await this.saltOf(day), siteId, address, userAgent);
      for (const page of [SITE_PAGE, ...readPages]) {
        const known = siteId + SEP + day + SEP + page + SEP + visitor;
        if (this.known.has(known)) continue;
        visitors.push({ siteId, day, page, hash: visitor });
        fresh.push(known);
      }
    }
    const batch: CountBatch = { pages: [...pages.values()], referrers: [...referrers.values()], visitors };
    const written = await this.store.record(batch, this.maxReferrers);
    // Stored now (by this insert or another instance's): not written again by this process.
    if (this.known.size + fresh.length > KNOWN_VISITORS) this.known.clear();
    for (const key of fresh) this.known.add(key);
    return written;
  }

  private async saltOf(day: string): Promise<string> {
    let salt = this.salts.get(day);
    if (salt === undefined) {
      salt = await this.store.salt(day, randomBytes(32).toString('base64url'), new Date(this.clock()));
      this.salts.set(day, salt);
      // The oldest days go first: no zone is in them any more.
      for (const old of [...this.salts.keys()].sort().slice(0, Math.max(0, this.salts.size - SALTS_KEPT))) this.salts.delete(old);
    }
    return salt;
  }

  /** Forgets what this process remembers of the days whose hashes and salts were deleted (up to `day`). */
  forgetDays(day: string): void {
    for (const old of this.salts.keys()) if (old <= day) this.salts.delete(old);
    for (const key of this.known) if (key.split(SEP)[1]! <= day) this.known.delete(key);
  }
}
