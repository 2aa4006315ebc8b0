import type { ListQuery } from './rules.js';
import type { PostsJsonPage } from './view.js';

/** What the list pages kept may hold at most, counted as the characters of their JSON. */
export const LIST_CACHE_CHARS = 32 * 1024 * 1024;

/**
 * Whole list pages (the posts' JSON and the pagination), kept per content version of their
 * site as the public pages are (site/pages.ts): every post write moves the version in its own
 * transaction, so no page outlives a change, also one made by another process or instance.
 * A page read again before the next write costs a lookup instead of reading and encoding its
 * posts again. Bounded by the size of the JSON held; the least recently used page goes first,
 * and pages of a version that has moved on are never asked for again, so they age out.
 *
 * The version must be read before the page: a page read after it is at least as new as it,
 * so a page is never kept under a version newer than its content.
 */
export class ListPageCache {
  private readonly pages = new Map<string, PostsJsonPage>();
  private chars = 0;

  constructor(private readonly maxChars = LIST_CACHE_CHARS) {}

  /** The page of `query` on the site at `version`: kept, or produced and kept. */
  page<P extends PostsJsonPage | Promise<PostsJsonPage>>(siteId: string, version: number, query: ListQuery, produce: () => P): P | PostsJsonPage {
    const key = JSON.stringify([siteId, version, query.status ?? null, query.page, query.limit, query.tag ?? null, query.category ?? null, query.q ?? null]);
    const hit = this.pages.get(key);
    if (hit) {
      // Most recently used last: Map keeps insertion order.
      this.pages.delete(key);
      this.pages.set(key, hit);
      return hit;
    }
    const produced = produce();
    if (produced instanceof Promise) return produced.then((page) => this.keep(key, page)) as P;
    return this.keep(key, produced as PostsJsonPage);
  }

  /** How many pages are kept (tests). */
  get size(): number {
    return this.pages.size;
  }

  private keep(key: string, page: PostsJsonPage): PostsJsonPage {
    const size = page.posts.text.length;
    // A page too large to keep beside others (limits allow 100 long posts) is not kept.
    if (size > this.maxChars / 4) return page;
    // Two reads that missed together (answers that come later: PostgreSQL) keep it once.
    const twin = this.pages.get(key);
    if (twin) {
      this.pages.delete(key);
      this.chars -= twin.posts.text.length;
    }
    this.pages.set(key, page);
    this.chars += size;
    for (const [oldest, kept] of this.pages) {
      if (this.chars <= this.maxChars) break;
      this.pages.delete(oldest);
      this.chars -= kept.posts.text.length;
    }
    return page;
  }
}
