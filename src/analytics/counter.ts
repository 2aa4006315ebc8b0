import { createHmac, randomBytes } from 'node:crypto';
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
  /** Distinct pending entries kept between flushes; past it, views are dropped (and told). */
  maxPending?: number;
}

const SEP = '\u0000';
const DEFAULT_MAX_PENDING = 100_000;
/** Salts kept in memory: the days of all time zones now, and a little. */
const SALTS_KEPT = 4;

/** A visitor: HMAC-SHA-256 keyed with the day's salt of (site, address, user agent), 128 bits in base64url. */
export const visitorHash = (salt: string, siteId: string, address: string, userAgent: string) =>
  createHmac('sha256', salt).update(`${siteId}${SEP}${address}${SEP}${userAgent}`).digest().subarray(0, 16).toString('base64url');

/**
 * Views counted in memory and written in batches (flush): a request only adds to a map. Each
 * entry is (site, day, page, referrer, address, agent) with its number of views; the flush
 * hashes address and agent with the day's salt (shared by every instance through the store),
 * so neither leaves this process. A flush that fails loses its batch, never a request.
 */
export class ViewCounter {
  private pending = new Map<string, number>();
  private readonly salts = new Map<string, string>();
  private readonly clock: () => number;
  private readonly maxPending: number;
  /** Views dropped since the last flush because the buffer was full. */
  dropped = 0;

  constructor(
    private readonly store: AnalyticsStore,
    options: CounterOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  }

  /** Views waiting for the next flush. */
  get size(): number {
    return this.pending.size;
  }

  count(view: View): void {
    const day = dayIn(view.timeZone, this.clock());
    const entry = view.siteId + SEP + day + SEP + view.page + SEP + view.referrer + SEP + view.address + SEP + view.userAgent;
    const views = this.pending.get(entry);
    if (views !== undefined) this.pending.set(entry, views + 1);
    else if (this.pending.size < this.maxPending) this.pending.set(entry, 1);
    else this.dropped++;
  }

  /** Takes what is pending and writes it; answers the views written. Throws when the database does (the batch is lost). */
  async flush(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const taken = this.pending;
    this.pending = new Map();
    this.dropped = 0;
    const entries = [...taken].map(([entry, views]) => {
      const [siteId, day, page, referrer, address, userAgent] = entry.split(SEP) as [string, string, string, string, string, string];
      return { siteId, day, page, referrer, address, userAgent, views };
    });
    for (const day of new Set(entries.map((e) => e.day))) await this.saltOf(day);

    const pages = new Map<string, { siteId: string; day: string; page: string; views: number }>();
    const referrers = new Map<string, { siteId: string; day: string; referrer: string; views: number }>();
    const visitors = new Map<string, VisitorRow>();
    for (const e of entries) {
      const pageKey = e.siteId + SEP + e.day + SEP + e.page;
      const page = pages.get(pageKey);
      if (page) page.views += e.views;
      else pages.set(pageKey, { siteId: e.siteId, day: e.day, page: e.page, views: e.views });
      const referrerKey = e.siteId + SEP + e.day + SEP + e.referrer;
      const referrer = referrers.get(referrerKey);
      if (referrer) referrer.views += e.views;
      else referrers.set(referrerKey, { siteId: e.siteId, day: e.day, referrer: e.referrer, views: e.views });
      const hash = visitorHash(this.salts.get(e.day)!, e.siteId, e.address, e.userAgent);
      for (const p of [SITE_PAGE, e.page]) visitors.set(e.siteId + SEP + e.day + SEP + p + SEP + hash, { siteId: e.siteId, day: e.day, page: p, hash });
    }
    const batch: CountBatch = { pages: [...pages.values()], referrers: [...referrers.values()], visitors: [...visitors.values()] };
    return this.store.record(batch);
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

  /** Forgets the salts held in memory (their rows were deleted). */
  forgetSalts(): void {
    this.salts.clear();
  }
}
