import type { PostListStatus } from '../limits.js';
import type { ListQuery, PostChange, PostCountChange, PostCountValues, PostRow } from './rules.js';

/**
 * What the posts store asks its database (see src/db/steps.ts). Each database answers it in its
 * adapter (posts/sqlite.ts, posts/postgres.ts) with its own SQL; nothing else differs.
 */
export interface PostPort {
  /**
   * Takes the site's write lock for the rest of the transaction, so that the writes of one site
   * queue up (SQLite's write transaction already holds the database's; PostgreSQL locks the
   * site's row, which every write moves anyway).
   */
  lockSite(siteId: string): void;
  /**
   * What a create reads first, in one question: the creation time of the site's newest post
   * (null when it has none) and the id of the site's post with `slug`, if any.
   */
  creationContext(siteId: string, slug: string): { latest: Date | null; holder: string | undefined };
  /** The id of the site's post with this slug. */
  slugHolder(siteId: string, slug: string): string | undefined;
  /** The last N given to `<base>-N` on the site (slug_counters), if recorded. */
  slugCounter(siteId: string, base: string): number | undefined;
  /** The highest N among the site's slugs `<base>-N`; 1 when none. */
  highestSuffix(siteId: string, base: string): number;
  saveSlugCounter(siteId: string, base: string, last: number): void;
  /** The site's slugs starting with `prefix`, with their posts' ids. */
  slugsStartingWith(siteId: string, prefix: string): { slug: string; id: string }[];
  find(siteId: string, postId: string): PostRow | undefined;
  /** The post whose share-preview link has this token (any site: the token alone names it). */
  findByPreviewToken(token: string): PostRow | undefined;
  /** The post as the API shows it (`postResource`), as JSON text. */
  findJson(siteId: string, postId: string): string | undefined;
  /** Inserts a post; throws SlugTakenMeanwhile when a writer outside the store took its slug. */
  insert(row: PostRow): void;
  /** Changes a post's columns; throws SlugTakenMeanwhile as insert does. */
  update(postId: string, changes: Partial<PostRow>): void;
  remove(postId: string): void;
  /** The published post's old slug redirects to it; any redirect from `newSlug` goes. */
  keepRedirect(post: PostRow, newSlug: string, now: Date): void;
  /**
   * A post write's mark on its site, in one question: moves the site's content version and
   * answers the new one (a site unknown is NOT_FOUND), and adds `counted`, when the change moved
   * a post between counted states, to the site's post counts (atomically: other instances write too).
   * `postId` is the post changed, for the databases that tell other instances (PostgreSQL).
   */
  recordChange(siteId: string, at: Date, counted: PostCountChange | null, postId: string): number;
  /** The site's content version (0 for a site unknown). */
  contentVersion(siteId: string): number;
  /** The site's post counts, kept by every write; undefined before its first post. */
  counts(siteId: string): PostCountValues | undefined;
  /** How many of the site's posts the query's status and filters match. */
  countMatching(siteId: string, query: ListQuery): number;
  /** A page of the query's posts in list order (newest first), each as JSON text. */
  listPage(siteId: string, query: ListQuery, offset: number, limit: number): string[];
  /**
   * Deep pages of a list by status alone (see list-anchors.ts): creation times in list order,
   * `count` at most, from the entry `skip` entries after the first created at or before `from`.
   */
  creationTimes(siteId: string, status: PostListStatus | undefined, from: number, skip: number, count: number): number[];
  /** The page of a list by status alone that starts `skip` entries after the first created at or before `from`. */
  pageFrom(siteId: string, status: PostListStatus | undefined, from: number, skip: number, limit: number): string[];
}

declare module '../db/steps.js' {
  interface Ports {
    posts: PostPort;
  }
}

/** A writer that bypasses the store (an import, a script) took the slug a write picked: it picks again. */
export class SlugTakenMeanwhile extends Error {
  constructor(options?: ErrorOptions) {
    super('The slug was taken by another writer meanwhile', options);
  }
}

export type { PostChange };
