import type { PostRow } from '../db/schema.js';
import type { ListKind } from './urls.js';

/** A tag or category, by its slug. */
export interface Topic {
  kind: ListKind;
  slug: string;
}

/**
 * What the public site (store.ts) asks its database. Readers see posts out of draft
 * ("published"): public ones in lists, feeds and the sitemap ("listed"), unlisted ones by URL only.
 */
export interface PublicSitePort {
  /**
   * Listed posts (with the topic, matched by slugify() of the names), newest first, ties in
   * insertion order (`rowid` on both databases): `limit` of them from `offset`, and how many in all.
   */
  listed(siteId: string, topic: Topic | undefined, limit: number, offset: number): { rows: PostRow[]; total: number };
  /** A published post (listed or unlisted) by its slug. */
  published(siteId: string, slug: string): PostRow | undefined;
  /** The current slug of the published post that had `oldSlug`. */
  movedTo(siteId: string, oldSlug: string): string | undefined;
  /** Every listed post, newest first: slug and last change. */
  sitemap(siteId: string): { slug: string; updatedAt: Date }[];
  /** Stores a post's rendered HTML and reading time, unless it changed since `row` was read or has them already. */
  keepRendered(row: PostRow, html: string, readingTime: number): void;
}

declare module '../db/steps.js' {
  interface Ports {
    publicSite: PublicSitePort;
  }
}
