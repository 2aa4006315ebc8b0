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

// Ids hold no spaces; page keys start with '['.
const postKey = (siteId: string, version: number, postId: string) => `${siteId} ${version} ${postId}`;
const charsOf = (kept: Kept) => ('posts' in kept ? kept.posts.text.length : kept.text.length);

/**
 * Posts as the API shows them, single (GET one post) and as whole list pages (the posts'
 * JSON and the pagination), kept per content version of their site as the public pages are
 * (public-site/pages.ts): every post write moves the version in its own transaction, so nothing kept
 * outlives a change, also one made by another process or instance. A post or page read again
 * before the next write of its site costs reading that version and a lookup, instead of
 * reading and encoding the posts again. Bounded by the size of the JSON held; the least
 * recently used goes first, and what a site kept under a version it has moved past goes as
 * soon as something is kept under the newer one.
 *
 * The version must be read before the posts: what is read after it is at least as new as
 * it, so nothing is kept under a version newer than its content.
 */
export class PostJsonCache {
  private readonly kept = new Map<string, { siteId: string; value: Kept }>();
  /** Per site read, the newest version anything was kept under and the keys still kept under it. */
  private readonly sites = new Map<string, { version: number; keys: Set<string> }>();
  private chars = 0;

  constructor(private readonly maxChars = POST_JSON_CACHE_CHARS) {}

  /** The page of `query` on the site at `version`, if kept. */
  lookupPage(siteId: string, version: number, query: ListQuery): PostsJsonPage | undefined {
    return this.lookup(pageKey(siteId, version, query)) as PostsJsonPage | undefined;
  }

  keepPage(siteId: string, version: number, query: ListQuery, page: PostsJsonPage): PostsJsonPage {
    return this.keep(siteId, version, pageKey(siteId, version, query), page);
  }

  /** One post of the site at `version`, if kept. */
  lookupPost(siteId: string, version: number, postId: string): RawJson | undefined {
    return this.lookup(postKey(siteId, version, postId)) as RawJson | undefined;
  }

  keepPost(siteId: string, version: number, postId: string, post: RawJson): RawJson {
    return this.keep(siteId, version, postKey(siteId, version, postId), post);
  }

  /** How many posts and pages are kept, and their characters (tests). */
  get size(): number {
    return this.kept.size;
  }

  get keptChars(): number {
    return this.chars;
  }

  private lookup(key: string): Kept | undefined {
    const hit = this.kept.get(key);
    if (!hit) return undefined;
    // Most recently used last: Map keeps insertion order.
    this.kept.delete(key);
    this.kept.set(key, hit);
    return hit.value;
  }

  private keep<V extends Kept>(siteId: string, version: number, key: string, value: V): V {
    const size = charsOf(value);
    // A page too large to keep beside others (limits allow 100 long posts) is not kept.
    if (size > this.maxChars / 4) return value;
    // Two reads that missed together (answers that come later: PostgreSQL) keep it once.
    this.drop(key);
    let site = this.sites.get(siteId);
    // Read under a version the site has moved past (answers that come later: PostgreSQL): nobody will ask for it.
    if (site && version < site.version) return value;
    if (!site || version > site.version) {
      // The site moved on: what its older version kept is dropped now rather than aging out.
      for (const old of site?.keys ?? []) this.drop(old);
      site = { version, keys: new Set() };
      this.sites.set(siteId, site);
    }
    this.kept.set(key, { siteId, value });
    site.keys.add(key);
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
    this.sites.get(entry.siteId)!.keys.delete(key);
  }
}
