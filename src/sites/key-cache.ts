import type { Executor } from '../db/client.js';
import { findActiveKey, hashKey, revokeKey, type AuthenticatedKey } from './keys.js';

/**
 * Resolves API keys to sites with a small LRU cache in front of the database.
 *
 * Revocation must take effect at once, also when the admin CLI revokes a key from another
 * process. SQLite's `PRAGMA data_version` changes exactly when another connection has
 * committed, and reading it touches no table, so the cache is dropped whenever it moves.
 * It is read once per turn of the event loop: the requests parsed in one turn arrived
 * together, and a busy server would otherwise spend a statement per request on it.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, AuthenticatedKey | null>();
  private dataVersion: number;
  private versionReadThisTurn = false;
  private readonly nextTurn = () => {
    this.versionReadThisTurn = false;
  };

  constructor(
    private readonly db: Executor,
    private readonly readDataVersion: () => number,
    private readonly maxEntries = 1000,
  ) {
    this.dataVersion = readDataVersion();
  }

  authenticate(key: string): AuthenticatedKey | undefined {
    if (!this.versionReadThisTurn) {
      this.versionReadThisTurn = true;
      setImmediate(this.nextTurn);
      const version = this.readDataVersion();
      if (version !== this.dataVersion) {
        this.cache.clear();
        this.dataVersion = version;
      }
    }
    const hash = hashKey(key);
    if (this.cache.has(hash)) {
      const hit = this.cache.get(hash)!;
      // Refresh recency: Map keeps insertion order, the oldest entry is evicted first.
      this.cache.delete(hash);
      this.cache.set(hash, hit);
      return hit ?? undefined;
    }
    const found = findActiveKey(this.db, hash) ?? null;
    this.cache.set(hash, found);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    return found ?? undefined;
  }

  /** Revokes through this process, dropping the cache so the key stops working immediately. */
  revoke(keyId: string): boolean {
    const changed = revokeKey(this.db, keyId);
    this.cache.clear();
    return changed;
  }
}
