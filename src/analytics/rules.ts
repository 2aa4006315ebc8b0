import { isbot } from 'isbot';
import { validationError } from '../errors.js';

/*
 * What counts as a view, where a reader came from, and the days stats are kept by: rules of
 * the analytics concern, free of HTTP (the plugin hands them header values).
 */

/** The longest range of days a stats request may ask for. */
export const MAX_STATS_DAYS = 366;
/** Days a stats request covers when it names none: the last 30, today included. */
export const DEFAULT_STATS_DAYS = 30;
/** Rows in the top lists of GET /api/v1/stats. */
export const TOP_ROWS = 10;
/** The longest referrer kept (a `utm_source` or a host); longer ones are cut. */
export const MAX_REFERRER_LENGTH = 100;
/**
 * Distinct referrers stored per site and day (beside direct and other): every new `utm_source`
 * or host would otherwise make a row, so a stranger could grow the table at will.
 */
export const MAX_REFERRERS_PER_DAY = 500;
/** Where the site-wide visitor of a day is kept among the pages' (no post id or path is empty). */
export const SITE_PAGE = '';
/** The referrer of a view nobody referred, or referred from the site itself. */
export const DIRECT = '';
/** Where the views of a day's referrers past MAX_REFERRERS_PER_DAY count. */
export const OTHER_REFERRERS = '(other)';

/**
 * Whether a request for a page is a reader's: not a crawler, tool, headless browser, link
 * preview or monitor (the isbot list; no user agent at all is a tool too), nor a prefetch.
 */
export function isReader(userAgent: string | undefined, purpose: string | undefined): boolean {
  if (!userAgent) return false;
  if (purpose !== undefined && /prefetch|preview/i.test(purpose)) return false;
  let bot = botAgents.get(userAgent);
  if (bot === undefined) {
    // isbot's pattern costs microseconds; readers' agents repeat.
    if (botAgents.size >= BOT_CACHE) botAgents.clear();
    botAgents.set(userAgent, (bot = isbot(userAgent)));
  }
  return !bot;
}

const BOT_CACHE = 10_000;
const botAgents = new Map<string, boolean>();

/**
 * Where a view came from: `utm_source` when the URL has one, else the referrer's host (no path,
 * no query), else direct. A referrer on one of the site's own hosts is direct / internal.
 */
export function referrerOf(referer: string | undefined, utmSource: string | null, ownHosts: readonly string[]): string {
  const source = utmSource?.trim().toLowerCase().slice(0, MAX_REFERRER_LENGTH);
  if (source) return source;
  if (!referer) return DIRECT;
  let host: string;
  try {
    const url = new URL(referer);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return DIRECT;
    host = url.hostname.toLowerCase();
  } catch {
    return DIRECT;
  }
  return ownHosts.includes(host) ? DIRECT : host.slice(0, MAX_REFERRER_LENGTH);
}

/** The `utm_source` of a request URL's query, if any (only that parameter is read). */
export function utmSourceOf(url: string): string | null {
  const query = url.indexOf('?');
  if (query < 0 || !url.includes('utm_source=', query)) return null;
  return new URLSearchParams(url.slice(query + 1)).get('utm_source');
}

// Formatting a date in a time zone costs microseconds: one formatter per zone, and a day per zone and minute.
const formatters = new Map<string, Intl.DateTimeFormat>();
const dayOfMinute = new Map<string, { minute: number; day: string }>();

/** The calendar day (YYYY-MM-DD) it is at `at` in IANA time zone `timeZone`. */
export function dayIn(timeZone: string, at: number): string {
  // Every zone's offset is whole minutes: the day is the same all through a minute.
  const minute = Math.floor(at / 60_000);
  const cached = dayOfMinute.get(timeZone);
  if (cached && cached.minute === minute) return cached.day;
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    } catch {
      formatter = new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' });
    }
    formatters.set(timeZone, formatter);
  }
  const day = formatter.format(at);
  dayOfMinute.set(timeZone, { minute, day });
  return day;
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` as a UTC midnight (ms), or NaN when it is no real date. */
export function parseDay(day: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return Number.NaN;
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day ? Number.NaN : ms;
}

export const formatDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The day `days` after `day` (before, when negative). */
export const addDays = (day: string, days: number) => formatDay(parseDay(day) + days * DAY_MS);

/** Every day from `from` to `to`, both included. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = parseDay(from), end = parseDay(to); ms <= end; ms += DAY_MS) days.push(formatDay(ms));
  return days;
}

export interface DayRange {
  from: string;
  to: string;
}

/**
 * The days a stats request covers: `from` and `to` (YYYY-MM-DD, real dates, `from` not after
 * `to`, at most MAX_STATS_DAYS days), by default the last DEFAULT_STATS_DAYS ending `today`.
 */
export function statsRange(from: string | undefined, to: string | undefined, today: string): DayRange {
  // What was sent is checked before any default is worked out from it (2031-02-30 is no day).
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (value !== undefined && Number.isNaN(parseDay(value))) throw validationError(`${name} must be a real date YYYY-MM-DD`, [{ path: `/query/${name}`, message: 'must be a real date YYYY-MM-DD' }]);
  }
  const end = to ?? (from !== undefined && parseDay(from) > parseDay(today) ? from : today);
  // The default range stops at the first day a YYYY-MM-DD can say (0000-01-01).
  const start = from ?? formatDay(Math.max(parseDay(end) - (DEFAULT_STATS_DAYS - 1) * DAY_MS, parseDay('0000-01-01')));
  if (start > end) throw validationError('from must not be after to', [{ path: '/query/from', message: 'must not be after to' }]);
  if ((parseDay(end) - parseDay(start)) / DAY_MS + 1 > MAX_STATS_DAYS) {
    throw validationError(`A range covers at most ${MAX_STATS_DAYS} days`, [{ path: '/query/from', message: `at most ${MAX_STATS_DAYS} days before to` }]);
  }
  return { from: start, to: end };
}

/**
 * The last day whose visitor hashes and salt may go at `now`: a day no time zone is in any
 * more (the latest zone, UTC-12, leaves day D at D+1 12:00 UTC), so at most about 50 hours
 * after the day began in the earliest zone (UTC+14).
 */
export function lastFinishedDay(now: number): string {
  return formatDay(now - 36 * 3_600_000);
}
