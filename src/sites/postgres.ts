import { apiKeys, sites } from '../db/pg-schema.js';
import { refusedByUnique, type PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { notFound } from '../errors.js';
import type { KeyChanges } from './key-cache.js';
import { HandleTakenMeanwhile, type SitePort } from './port.js';
import { urlsOfHost } from './rules.js';
import { and, asc, eq, inArray, isNull, like, sql } from '../db/orm.js';

/*
 * Several instances may share the database: what SQLite's single writer guarantees by its write
 * transaction is guaranteed here by row locks, advisory locks and the unique index on handles.
 */

/** A write refused by the unique index on handles: another instance took the handle after the look. */
const guardHandle = refusedByUnique('sites_handle_unique', (cause) => new HandleTakenMeanwhile({ cause }));

/** Held while an instance looks for a first site and creates it: instances starting together make one. */
const BOOTSTRAP_LOCK_KEY = sql`hashtextextended('blog-service:bootstrap-first-site', 0)`;

/** The sites port as PostgreSQL answers it, with promises, inside the store's transaction. */
export const postgresSites: AsyncAdapter<SitePort, PgExecutor> = {
  find: async (tx, siteId) => (await tx.select().from(sites).where(eq(sites.id, siteId)))[0],
  lock: async (tx, siteId) => (await tx.select().from(sites).where(eq(sites.id, siteId)).for('update'))[0],
  list: (tx) => tx.select().from(sites).orderBy(asc(sites.createdAt)),
  any: async (tx) => (await tx.select({ id: sites.id }).from(sites).limit(1)).length > 0,
  handlesStartingWith: async (tx, base) => (await tx.select({ handle: sites.handle }).from(sites).where(like(sites.handle, `${base}%`))).map((row) => row.handle),
  insert: (tx, site) => guardHandle(tx.insert(sites).values(site)),
  update: (tx, siteId, changes) => guardHandle(tx.update(sites).set(changes).where(eq(sites.id, siteId))),
  byHandle: async (tx, handle) => (await tx.select().from(sites).where(eq(sites.handle, handle)))[0],
  // Only a proven domain serves its site.
  byHost: async (tx, host) => (await tx.select().from(sites).where(and(inArray(sites.url, urlsOfHost(host)), isNull(sites.domainToken))).limit(1))[0],
  // An atomic increment: several instances may write one site at once.
  touchContent: async (tx, siteId, at) => {
    const [moved] = await tx
      .update(sites)
      .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: at })
      .where(eq(sites.id, siteId))
      .returning({ version: sites.contentVersion });
    if (!moved) throw notFound('site');
    return moved.version;
  },
  lockBootstrap: async (tx) => void (await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`)),
  // The proven holder's row is not the one locked, so proofs of one host serialise on a lock of their own.
  lockHost: async (tx, host) => void (await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`site-domain:${host.toLowerCase()}`}))`)),
  insertKey: async (tx, row) => void (await tx.insert(apiKeys).values(row)),
  keyExists: async (tx, keyId) => (await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, keyId))).length > 0,
  keysOf: (tx, siteId) =>
    tx
      .select({ id: apiKeys.id, siteId: apiKeys.siteId, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(eq(apiKeys.siteId, siteId))
      .orderBy(asc(apiKeys.createdAt)),
  revokeKey: async (tx, keyId, at) => {
    const revoked = await tx
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    return revoked.length > 0;
  },
  activeKey: async (tx, hash) => {
    const [row] = await tx
      .select({ keyId: apiKeys.id, siteId: sites.id, siteName: sites.name })
      .from(apiKeys)
      .innerJoin(sites, eq(sites.id, apiKeys.siteId))
      .where(and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt)));
    return row && { keyId: row.keyId, site: { id: row.siteId, name: row.siteName } };
  },
};

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
}

/**
 * PostgreSQL's key changes: the `key_changes` counter (migration 0004), which triggers move in
 * the same transaction as every change to keys and to sites' names, read in the background
 * every `pollMs` once watched. SQLite's data_version has no equivalent shared by instances on
 * other machines; a counter read is one index lookup, and unlike LISTEN/NOTIFY it needs no
 * connection of its own nor a way to learn what was missed while one was down. Until watched,
 * and whenever its last read is too old, it vouches for nothing (the key cache stays empty).
 */
export class PgKeyChangeSignal implements KeyChanges {
  private version: string | null = null;
  /** When the read that answered `version` began (performance.now()). */
  private readBeganAt = -Infinity;
  private polling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: PgExecutor,
    private readonly options: PgKeyChangeOptions = {},
  ) {}

  current(): unknown {
    // Too old to vouch for the cache: a new value at every call keeps it empty.
    if (this.version === null || performance.now() - this.readBeganAt > (this.options.staleMs ?? KEY_CHANGE_STALE_MS)) return Symbol('unknown');
    return this.version;
  }

  /** Reads the counter once (it rejects when the database cannot answer), then every `pollMs` until closed. */
  async watch(onError: (error: unknown) => void): Promise<void> {
    await this.read();
    this.timer ??= setInterval(() => void this.poll(onError), this.options.pollMs ?? KEY_CHANGE_POLL_MS);
    // Polling alone never keeps the process alive.
    this.timer.unref();
  }

  /** Stops polling and waits for a read in flight (call before closing the pool). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }

  private poll(onError: (error: unknown) => void): Promise<void> {
    // One read at a time: a slow database gets no queue of them, staleness covers the wait.
    this.polling ??= this.read()
      .catch(onError)
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
