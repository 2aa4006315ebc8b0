import type { AuthenticatedKey } from './rules.js';

/**
 * Tells a key cache whether the database may have changed under it: `current()` answers a
 * value that differs from the one before whenever it may have (a fresh value each call
 * when the source cannot tell, which turns the cache off). Synchronous, so that checking it
 * costs a request nothing; a source that must ask the database keeps its answer ready.
 */
export interface ChangeSignal {
  current(): unknown;
}

/**
 * How an instance learns that keys changed in the database, by whatever wrote them: SQLite's
 * data_version (sites/sqlite.ts), PostgreSQL's key change counter (sites/postgres.ts).
 */
export interface KeyChanges extends ChangeSignal {
  /** Starts watching (rejects when the database cannot answer); `onError` hears of later failed looks. */
  watch(onError: (error: unknown) => void): Promise<void>;
  /** Stops watching (before the database closes). */
  close(): Promise<void>;
}

/** A key's hash → what it authenticates as (null: no active key, never kept), for the cache below. */
export type CachedKey = AuthenticatedKey | null;

/** A small LRU of key lookups (SiteStore.authenticate), dropped whenever its change signal moves. */
export class KeyLookupCache {
  private readonly entries = new Map<string, CachedKey>();
  private version: unknown;
  /** Moves at every drop: an answer read from the database before a drop must not be kept. */
  private generation = 0;

  constructor(
    private readonly signal: ChangeSignal,
    private readonly maxEntries = 1000,
  ) {
    this.version = signal.current();
  }

  /** Drops everything when the signal moved since the last look; answers the generation to store under. */
  checkSignal(): number {
    const version = this.signal.current();
    if (version !== this.version) {
      this.version = version;
      this.clear();
    }
    return this.generation;
  }

  /** How many keys are kept (tests). */
  get size(): number {
    return this.entries.size;
  }

  /** The cached answer for a hash, or undefined when it is not cached. */
  get(hash: string): CachedKey | undefined {
    if (!this.entries.has(hash)) return undefined;
    const hit = this.entries.get(hash)!;
    // Refresh recency: Map keeps insertion order, the oldest entry is evicted first.
    this.entries.delete(hash);
    this.entries.set(hash, hit);
    return hit;
  }

  /** Keeps an answer read in `generation` (from checkSignal), unless the cache was dropped since. */
  set(hash: string, found: CachedKey, generation: number): void {
    // Unknown keys are not kept: anyone can send endless new ones, which would push out the
    // valid keys every request needs (failed authentications are rate-limited instead).
    if (found === null || generation !== this.generation) return;
    this.entries.set(hash, found);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }
}
