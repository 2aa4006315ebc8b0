import { sql } from 'drizzle-orm';
import type { PgExecutor } from '../db/postgres.js';
import { KeyLookupCache, type ChangeSignal } from './key-cache.js';
import { findActiveKey, revokeKey } from './pg-keys.js';
import { hashKey, type AuthenticatedKey } from './rules.js';

/** How often an instance reads the database's key change counter. */
export const KEY_CHANGE_POLL_MS = 250;
/**
 * The longest a cached answer is trusted after the read of the counter it was checked
 * against began: the bound on how long a key revoked by another instance may still work
 * here. With polls answering in time it works at most one poll interval and a round trip
 * longer; when they do not (a slow or unreachable database), the cache turns itself off.
 */
export const KEY_CHANGE_STALE_MS = 1000;

export interface PgKeyChangeOptions {
  pollMs?: number;
  staleMs?: number;
  /** Failed reads of the counter (the cache is off until one succeeds again). */
  onError?(error: unknown): void;
}

/**
 * PostgreSQL's change signal for key caches: the `key_changes` counter (migration 0004), which
 * triggers move in the same transaction as every change to keys and to sites' names, read in
 * the background every `pollMs`. SQLite's data_version has no equivalent shared by instances on
 * other machines; a counter read is one index lookup, and unlike LISTEN/NOTIFY it needs no
 * connection of its own nor a way to learn what was missed while one was down.
 */
export class PgKeyChangeSignal implements ChangeSignal {
  private version: string | null = null;
  /** When the read that answered `version` began (performance.now()). */
  private readBeganAt = -Infinity;
  private polling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly staleMs: number;

  private constructor(
    private readonly db: PgExecutor,
    private readonly options: PgKeyChangeOptions,
  ) {
    this.staleMs = options.staleMs ?? KEY_CHANGE_STALE_MS;
  }

  /** Reads the counter once (it rejects when the database cannot answer), then every `pollMs` until closed. */
  static async start(db: PgExecutor, options: PgKeyChangeOptions = {}): Promise<PgKeyChangeSignal> {
    const signal = new PgKeyChangeSignal(db, options);
    await signal.read();
    signal.timer = setInterval(() => void signal.poll(), options.pollMs ?? KEY_CHANGE_POLL_MS);
    // Polling alone never keeps the process alive.
    signal.timer.unref();
    return signal;
  }

  current(): unknown {
    // Too old to vouch for the cache: a new value at every call keeps it empty.
    if (this.version === null || performance.now() - this.readBeganAt > this.staleMs) return Symbol('unknown');
    return this.version;
  }

  /** Stops polling and waits for a read in flight (call before closing the pool). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }

  private poll(): Promise<void> {
    // One read at a time: a slow database gets no queue of them, staleness covers the wait.
    this.polling ??= this.read()
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.polling = null;
      });
    return this.polling;
  }

  private async read(): Promise<void> {
    const began = performance.now();
    const result = await this.db.execute<{ version: string }>(sql`select version::text as version from key_changes`);
    this.version = result.rows[0]!.version;
    this.readBeganAt = began;
  }
}

/**
 * KeyAuthenticator (key-cache.ts) on PostgreSQL: the same cache in front of asynchronous
 * lookups. A key revoked through this instance stops working here at once, and on the other
 * instances sharing the database within KEY_CHANGE_STALE_MS (see PgKeyChangeSignal).
 */
export class PgKeyAuthenticator {
  private readonly cache: KeyLookupCache;

  constructor(
    private readonly db: PgExecutor,
    signal: ChangeSignal,
    maxEntries = 1000,
  ) {
    this.cache = new KeyLookupCache(signal, maxEntries);
  }

  async authenticate(key: string): Promise<AuthenticatedKey | undefined> {
    const generation = this.cache.checkSignal();
    const hash = hashKey(key);
    const hit = this.cache.get(hash);
    if (hit !== undefined) return hit ?? undefined;
    const found = (await findActiveKey(this.db, hash)) ?? null;
    // Dropped while the lookup ran (the signal moved meanwhile): the answer may predate the change.
    this.cache.checkSignal();
    this.cache.set(hash, found, generation);
    return found ?? undefined;
  }

  /** Revokes through this instance, dropping its cache so the key stops working here immediately. */
  async revoke(keyId: string): Promise<boolean> {
    const changed = await revokeKey(this.db, keyId);
    this.cache.clear();
    return changed;
  }
}
