import type { Executor } from '../db/client.js';
import { findActiveKey, hashKey, revokeKey, type AuthenticatedKey } from './keys.js';

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
 * SQLite's signal: `PRAGMA data_version` changes exactly when another connection has
 * committed, and reading it touches no table. It is read once per turn of the event loop:
 * the requests parsed in one turn arrived together, and a busy server would otherwise spend
 * a statement per request on it.
 */
export function dataVersionSignal(readDataVersion: () => number): ChangeSignal {
  let version = readDataVersion();
  let readThisTurn = false;
  const nextTurn = () => {
    readThisTurn = false;
  };
  return {
    current() {
      if (!readThisTurn) {
        readThisTurn = true;
        setImmediate(nextTurn);
        version = readDataVersion();
      }
      return version;
    },
  };
}

/** A key's hash → what it authenticates as (null: no active key, never kept), for the cache below. */
export type CachedKey = AuthenticatedKey | null;

/**
 * A small LRU of key lookups, dropped whenever its change signal moves. Shared by the SQLite
 * authenticator (below) and PostgreSQL's (pg-key-cache.ts), whose lookups are asynchronous.
 */
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

/**
 * Resolves API keys to sites with a small LRU cache in front of the database.
 *
 * Revocation must take effect at once, also when the admin CLI revokes a key from another
 * process: the cache is dropped whenever the change signal moves (on SQLite,
 * dataVersionSignal above).
 */
export class KeyAuthenticator {
  private readonly cache: KeyLookupCache;

  constructor(
    private readonly db: Executor,
    signal: ChangeSignal,
    maxEntries = 1000,
  ) {
    this.cache = new KeyLookupCache(signal, maxEntries);
  }

  authenticate(key: string): AuthenticatedKey | undefined {
    const generation = this.cache.checkSignal();
    const hash = hashKey(key);
    const hit = this.cache.get(hash);
    if (hit !== undefined) return hit ?? undefined;
    const found = findActiveKey(this.db, hash) ?? null;
    this.cache.set(hash, found, generation);
    return found ?? undefined;
  }

  /** Revokes through this process, dropping the cache so the key stops working immediately. */
  revoke(keyId: string): boolean {
    const changed = revokeKey(this.db, keyId);
    this.cache.clear();
    return changed;
  }
}
