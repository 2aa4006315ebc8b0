import type { Site } from '../db/schema.js';

export interface SiteRef {
  id: string;
  name: string;
}

export interface ApiKeyInfo {
  id: string;
  siteId: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface AuthenticatedKey {
  keyId: string;
  site: SiteRef;
}

/**
 * What the sites store asks its database (see src/db/steps.ts). Each database answers it in its
 * adapter (sites/sqlite.ts, sites/postgres.ts) with its own SQL; other concerns ask it too (post
 * writes move a site's content version, public pages find their site).
 */
export interface SitePort {
  find(siteId: string): Site | undefined;
  /**
   * The site's row, locked for the rest of the transaction: post writes of the site (which move
   * its content version) wait for a settings change (SQLite's write transaction already holds the
   * database; PostgreSQL locks the row).
   */
  lock(siteId: string): Site | undefined;
  /** Every site, oldest first. */
  list(): Site[];
  /** Whether the database has a site at all. */
  any(): boolean;
  /** The handles starting with `base` (the ones a new handle from it must not repeat). */
  handlesStartingWith(base: string): string[];
  /** Inserts a site; throws HandleTakenMeanwhile when a writer outside the transaction took its handle. */
  insert(site: Site): void;
  /** Changes a site's columns; throws HandleTakenMeanwhile as insert does. */
  update(siteId: string, changes: Partial<Site>): void;
  /** The site readers reach at /sites/<handle>/. */
  byHandle(handle: string): Site | undefined;
  /** The site whose own, proven `url` has this host (`blog.example.com`, with `:port` when not the default). */
  byHost(host: string): Site | undefined;
  /** Moves the site's content version (public pages are cached per version); answers the new one. */
  touchContent(siteId: string, at: Date): number;
  /**
   * Held until the transaction ends while one instance looks for a first site and makes it, so
   * that instances starting together make one (SQLite's write transaction is that lock already).
   */
  lockBootstrap(): void;
  /**
   * Held until the transaction ends while a site proves `host`: two sites proving one host at
   * once take turns, though neither holds the other's row (SQLite: its write transaction).
   */
  lockHost(host: string): void;

  insertKey(row: ApiKeyInfo & { hash: string }): void;
  /** Whether a key with this id exists, active or revoked. */
  keyExists(keyId: string): boolean;
  /** The site's keys, oldest first. */
  keysOf(siteId: string): ApiKeyInfo[];
  /** Marks the key revoked at `at`; true when it was active. */
  revokeKey(keyId: string, at: Date): boolean;
  /** The site an active key with this hash belongs to; undefined for unknown and revoked keys. */
  activeKey(hash: string): AuthenticatedKey | undefined;
}

declare module '../db/steps.js' {
  interface Ports {
    sites: SitePort;
  }
}

/** Another writer (another instance, a script) took the handle a write picked, between the look and the write. */
export class HandleTakenMeanwhile extends Error {
  constructor(options?: ErrorOptions) {
    super('The handle was taken by another writer meanwhile', options);
  }
}
