import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ViewCounter } from '../src/analytics/counter.js';
import { addDays, dayIn, isReader, lastFinishedDay, referrerOf, utmSourceOf } from '../src/analytics/rules.js';
import type { AnalyticsStore } from '../src/analytics/store.js';
import type { PageView } from '../src/public-site/pages.js';

export interface AnalyticsPluginOptions {
  /** Milliseconds since the epoch: the day a view counts on, and when salts and old days go (tests). */
  clock?: () => number;
  /** Distinct referrers stored per site and day (tests make it small). */
  maxReferrersPerDay?: number;
}

export interface Analytics {
  store: AnalyticsStore;
  /** Counts a GET of a public page answered 200 or 304, unless a bot, a tool or a prefetch asked (or ANALYTICS=off). */
  seen(request: FastifyRequest, view: PageView): void;
  /** Writes the views counted so far (one flush at a time); answers how many. A failure is logged, and loses only them. */
  flush(): Promise<number>;
  /** Forgets the visitor hashes and salts of finished days, and prunes days past STATS_RETENTION_DAYS. */
  sweep(): Promise<void>;
  /** Today in a time zone, by the plugin's clock. */
  today(timeZone: string): string;
}

declare module 'fastify' {
  interface FastifyInstance {
    analytics: Analytics;
  }
}

/** Views reach the database at most this long after they were counted. */
const FLUSH_INTERVAL_MS = 1000;
const SWEEP_INTERVAL_MS = 60 * 60_000;

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Privacy-friendly analytics counted on the server: the public site hands every page view to
 * `seen`, which only adds to a map in memory (no database, no await on the request's path);
 * a timer writes the map every second, and the close writes what is left. Addresses and user
 * agents never leave this process: the flush hashes them with the day's salt.
 */
export default fp(
  async function analyticsPlugin(app: FastifyInstance, opts: AnalyticsPluginOptions) {
    const { config } = app;
    const store = app.stores.analytics;
    const clock = opts.clock ?? Date.now;
    const counter = new ViewCounter(store, { clock, maxReferrersPerDay: opts.maxReferrersPerDay });

    let flushing: Promise<unknown> = Promise.resolve();
    const flushNow = async () => {
      const dropped = counter.dropped;
      const pending = counter.size;
      try {
        const written = await counter.flush();
        if (dropped > 0) app.log.warn({ dropped }, 'analytics: views dropped, the buffer was full');
        return written;
      } catch (error) {
        // The database is busy or down: these views are lost, the pages were served.
        app.log.warn({ err: error, lost: pending }, 'analytics: could not write counted views');
        return 0;
      }
    };
    const flush = () => {
      const next = flushing.then(flushNow);
      flushing = next;
      return next;
    };

    const sweep = async () => {
      try {
        const finished = lastFinishedDay(clock());
        const forgotten = await store.forgetVisitors(finished);
        counter.forgetDays(finished);
        const pruned = await store.prune(addDays(dayIn('UTC', clock()), -config.statsRetentionDays));
        if (forgotten > 0 || pruned > 0) app.log.info({ forgotten, pruned }, 'analytics: forgot visitor hashes of finished days, pruned old days');
      } catch (error) {
        app.log.warn({ err: error }, 'analytics: could not sweep old stats');
      }
    };

    const seen = (request: FastifyRequest, view: PageView) => {
      if (!config.analytics || request.method !== 'GET') return;
      try {
        count(request, view);
      } catch (error) {
        // Counting never fails a page.
        request.log.warn({ err: error }, 'analytics: a view could not be counted');
      }
    };
    const count = (request: FastifyRequest, view: PageView) => {
      const userAgent = header(request, 'user-agent');
      if (!isReader(userAgent, header(request, 'sec-purpose') ?? header(request, 'purpose') ?? header(request, 'x-purpose'))) return;
      const host = request.hostname?.toLowerCase();
      counter.count({
        siteId: view.siteId,
        timeZone: view.timeZone,
        page: view.page,
        referrer: referrerOf(header(request, 'referer'), utmSourceOf(request.url), host ? [...view.hosts, host] : view.hosts),
        // request.ip believes X-Forwarded-For only as TRUST_PROXY says.
        address: request.ip,
        userAgent: userAgent!,
      });
    };

    app.decorate<Analytics>('analytics', { store, seen, flush, sweep, today: (timeZone) => dayIn(timeZone, clock()) });

    let flushTimer: NodeJS.Timeout | null = null;
    let sweepTimer: NodeJS.Timeout | null = null;
    app.addHook('onListen', async () => {
      void sweep();
      flushTimer = setInterval(() => {
        if (counter.size > 0) void flush();
      }, FLUSH_INTERVAL_MS).unref();
      sweepTimer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS).unref();
    });
    // Before the database closes (hooks close in reverse order): what is counted is written.
    app.addHook('onClose', async () => {
      if (flushTimer) clearInterval(flushTimer);
      if (sweepTimer) clearInterval(sweepTimer);
      await flush();
    });
  },
  { name: 'analytics', dependencies: ['db'] },
);
