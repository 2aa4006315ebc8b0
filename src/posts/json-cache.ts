import type { RawJson } from '../json.js';
import type { ListQuery } from './rules.js';
import type { PostsJsonPage } from './view.js';

/** What the posts' JSON kept may hold at most, counted in characters. */
export const POST_JSON_CACHE_CHARS = 32 * 1024 * 1024;

type Kept = PostsJsonPage | RawJson;

/** A page's key: the whole query (every member, sorted), so a new filter keys pages apart without anyone listing it here. */
const pageKey = (siteId: string, version: number, query: ListQuery) =>
  JSON.stringify([
    siteId,
    version,
    ...Object.entries(query)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  ]);

// Ids hold no spaces; page keys start with '['. A post is kept under one key whatever its version.
const postKey = (siteId: string, postId: string) => `${siteId} ${postId}`;
const charsOf = (kept: Kept) => ('posts' in kept ? kept.posts.text.length : kept.text.length);

/** How many of a site's latest committed post changes are remembered (see `committed`). */
export const CHANGE_LOG_LENGTH = 1024;
/** How many are remembered over all sites (about 10 MB): the sites written least recently are forgotten first. */
export const CHANGE_LOG_ENTRIES = 65_536;

interface Entry {
  siteId: string;
  value: Kept;
  /** The site's content version the value was read at (a post's moves forward while it stays unchanged). */
  version: number;
  /** A single post's id; pages have none. */
  postId?: string;
}

/**
 * Posts as the API shows them, single (GET one post) and as whole list pages (the posts'
 * JSON and the pagination), kept per content version of their site as the public pages are
 * (public-site/pages.ts): every post write moves the version in its own transaction, so nothing kept
 * outlives a change, also one made by another process or instance. A post or page read again
 * before the next write of its site costs reading that version and a lookup, instead of
 * reading and encoding the posts again. Bounded by the size of the JSON held; the least
 * recently used goes first, and a site's pages kept under a version it has moved past go as
 * soon as something is kept under the newer one.
 *
 * A single post outlives versions that changed other posts: committed post writes are told to
 * `committed` (the version each made and the post it changed: this process's own once they
 * commit, other PostgreSQL instances' as their notifications arrive), and a post kept at version
 * v still answers at version w when every version after v up to w is one of them and none
 * changed it. A version not told (a writer outside the service, a rolled-back write, a site
 * setting) breaks the chain, and the post is read again. So while a batch of generated posts is
 * written, the posts already kept keep answering.
 *
 * The version must be read before the posts: what is read after it is at least as new as
 * it, so nothing is kept under a version newer than its content.
 */
export class PostJsonCache {
  private readonly kept = new Map<string, Entry>();
  /** Per site read, the newest version anything was kept under and the page keys still kept under it. */
  private readonly sites = new Map<string, { version: number; keys: Set<string> }>();
  /** Per site (the most recently written last), the post each of its latest committed changes changed, by the version it made. */
  private readonly changes = new Map<string, Map<number, string>>();
  private logged = 0;
  private chars = 0;

  constructor(private readonly maxChars = POST_JSON_CACHE_CHARS) {}

  /** The page of `query` on the site at `version`, if kept. */
  lookupPage(siteId: string, version: number, query: ListQuery): PostsJsonPage | undefined {
    return this.lookup(pageKey(siteId, version, query))?.value as PostsJsonPage | undefined;
  }

  keepPage(siteId: string, version: number, query: ListQuery, page: PostsJsonPage): PostsJsonPage {
    return this.keep({ siteId, version, value: page }, pageKey(siteId, version, query));
  }

  /** One post of the site at `version`, if kept at that version or at one since which only other posts changed. */
  lookupPost(siteId: string, version: number, postId: string): RawJson | undefined {
    const entry = this.lookup(postKey(siteId, postId));
    if (!entry || entry.version > version) return undefined;
    if (entry.version < version) {
      if (!this.unchangedBetween(siteId, postId, entry.version, version)) return undefined;
      entry.version = version;
    }
    return entry.value as RawJson;
  }

  keepPost(siteId: string, version: number, postId: string, post: RawJson): RawJson {
    const key = postKey(siteId, postId);
    // A read answered after a newer one of the same post was kept (PostgreSQL) keeps the newer.
    if ((this.kept.get(key)?.version ?? -1) > version) return post;
    return this.keep({ siteId, version, value: post, postId }, key);
  }

  /**
   * A post write of this process committed: it took the site to `version` and changed `postId`
   * (only that post's JSON). Told only once the database has committed it, so a version
   * remembered here is one the database keeps.
   */
  committed(siteId: string, version: number, postId: string): void {
    const log = this.changes.get(siteId) ?? new Map<number, string>();
    // Most recently written last: Map keeps insertion order.
    this.changes.delete(siteId);
    this.changes.set(siteId, log);
    // Told twice (a write of this instance, then its notification): the same fact.
    if (log.has(version)) return;
    log.set(version, postId);
    this.logged++;
    if (log.size > CHANGE_LOG_LENGTH) {
      log.delete(log.keys().next().value!);
      this.logged--;
    }
    for (const [oldest, oldestLog] of this.changes) {
      if (this.logged <= CHANGE_LOG_ENTRIES) break;
      this.changes.delete(oldest);
      this.logged -= oldestLog.size;
    }
  }

  /** How many committed changes are remembered over all sites (tests). */
  get loggedChanges(): number {
    return this.logged;
  }

  /** How many posts and pages are kept, and their characters (tests). */
  get size(): number {
    return this.kept.size;
  }

  get keptChars(): number {
    return this.chars;
  }

  /** Whether every version after `from` up to `to` is a committed change of another post. */
  private unchangedBetween(siteId: string, postId: string, from: number, to: number): boolean {
    const log = this.changes.get(siteId);
    if (!log || to - from > log.size) return false;
    for (let version = from + 1; version <= to; version++) {
      const changed = log.get(version);
      if (changed === undefined || changed === postId) return false;
    }
    return true;
  }

  private lookup(key: string): Entry | undefined {
    const hit = this.kept.get(key);
    if (!hit) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.kept.delete(key);
    this.kept.set(key, hit);
    return hit;
  }

  private keep<V extends Kept>(entry: Entry & { value: V }, key: string): V {
    const { siteId, version, value } = entry;
    const size = charsOf(value);
    // A page too large to keep beside others (limits allow 100 long posts) is not kept.
    if (size > this.maxChars / 4) return value;
    // Two reads that missed together (answers that come later: PostgreSQL) keep it once.
    this.drop(key);
    let site = this.sites.get(siteId);
    // A page read under a version the site has moved past (answers that come later: PostgreSQL): nobody will ask for it.
    if (site && version < site.version && !entry.postId) return value;
    if (!site || version > site.version) {
      // The site moved on: the pages its older version kept are dropped now rather than aging out.
      for (const old of site?.keys ?? []) this.drop(old);
      site = { version, keys: new Set() };
      this.sites.set(siteId, site);
    }
    this.kept.set(key, entry);
    if (!entry.postId) site.keys.add(key);
    this.chars += size;
    for (const oldest of this.kept.keys()) {
      if (this.chars <= this.maxChars) break;
      this.drop(oldest);
    }
    return value;
  }

  private drop(key: string): void {
    const entry = this.kept.get(key);
    if (!entry) return;
    this.kept.delete(key);
    this.chars -= charsOf(entry.value);
    this.sites.get(entry.siteId)?.keys.delete(key);
  }
}
