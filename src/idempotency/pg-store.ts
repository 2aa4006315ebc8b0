import { and, eq, lte, sql } from 'drizzle-orm';
import { idempotencyKeys } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import { IDEMPOTENCY_RUNNING_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../limits.js';
import { decideAnswered, decideRunning, type Begin, type StoredResponse } from './decisions.js';

export type { Begin, StoredResponse };

/** response_status of a claim: no HTTP answer has status 0, so such a row is a request still running. */
const RUNNING = 0;
/** fingerprint of a claim whose request is an upload not hashed yet: a SHA-256 digest is never empty. */
const NOT_HASHED = '';
/** Looks at a key again when its row went away between claiming and reading it (released meanwhile). */
const BEGIN_ATTEMPTS = 3;

const excluded = (column: string) => sql.raw(`excluded.${column}`);
const ANSWER_FROM_INSERT = {
  fingerprint: excluded('fingerprint'),
  responseStatus: excluded('response_status'),
  responseType: excluded('response_type'),
  responseBody: excluded('response_body'),
  createdAt: excluded('created_at'),
  expiresAt: excluded('expires_at'),
};

/**
 * The PostgreSQL twin of IdempotencyStore (store.ts): the same decisions, with the same
 * clock (`now` given, never the database's), from the same rules (decisions.ts).
 *
 * Several instances share the database, so a running request cannot be known to one process
 * alone as on SQLite: `begin` claims the key with a row of its own (status 0, see RUNNING), in
 * one statement that the (site, key) primary key makes atomic. Of requests arriving at once on
 * different instances, exactly one inserts it and runs; the others find its row and are told
 * `in-use` (or `mismatch`). An expired row, answered or claimed, is taken over by the same
 * statement. `complete` turns the claim into the kept answer, `release` deletes it.
 *
 * A claim lasts `runningLeaseMs`: an instance that dies mid-request leaves its claim behind,
 * and the key is free again once the lease ends (on SQLite, at once with the process).
 */
export class PgIdempotencyStore {
  /** Claims this instance holds, by `site\nkey`: when their request began (their row's created_at). */
  private readonly claims = new Map<string, number>();

  constructor(
    private readonly db: PgExecutor,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
    private readonly runningLeaseMs = IDEMPOTENCY_RUNNING_LEASE_MS,
  ) {}

  private ofKey(siteId: string, key: string) {
    return and(eq(idempotencyKeys.siteId, siteId), eq(idempotencyKeys.key, key));
  }

  /** `fingerprint` null: not known before the body is read (an upload). */
  async begin(siteId: string, key: string, fingerprint: string | null, now: number): Promise<Begin> {
    for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
      const claimed = await this.db
        .insert(idempotencyKeys)
        .values({
          siteId,
          key,
          fingerprint: fingerprint ?? NOT_HASHED,
          responseStatus: RUNNING,
          responseType: null,
          responseBody: '',
          createdAt: new Date(now),
          expiresAt: new Date(now + this.runningLeaseMs),
        })
        .onConflictDoUpdate({
          target: [idempotencyKeys.siteId, idempotencyKeys.key],
          set: ANSWER_FROM_INSERT,
          setWhere: lte(idempotencyKeys.expiresAt, new Date(now)),
        })
        .returning({ siteId: idempotencyKeys.siteId });
      if (claimed.length > 0) {
        this.claims.set(`${siteId}\n${key}`, now);
        return { action: 'run' };
      }
      // The row that stopped the claim is live (committed before it, or the claim would have waited for it).
      const [row] = await this.db.select().from(idempotencyKeys).where(this.ofKey(siteId, key));
      if (!row) continue; // released or purged in between: claim again
      if (row.responseStatus === RUNNING) return decideRunning(row.fingerprint === NOT_HASHED ? null : row.fingerprint, fingerprint);
      return decideAnswered(row, fingerprint);
    }
    return { action: 'in-use' };
  }

  /**
   * Keeps the answer of a request this instance ran, for its retries until a day after it
   * began. A claim another instance took over meanwhile (this one outlived its lease) is left
   * to it; a claim purged meanwhile is written anew.
   */
  async complete(siteId: string, key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    const slot = `${siteId}\n${key}`;
    const startedAt = this.claims.get(slot) ?? Date.now();
    this.claims.delete(slot);
    await this.db
      .insert(idempotencyKeys)
      .values({
        siteId,
        key,
        fingerprint,
        responseStatus: response.status,
        responseType: response.contentType,
        responseBody: response.body,
        createdAt: new Date(startedAt),
        expiresAt: new Date(startedAt + this.ttlMs),
      })
      .onConflictDoUpdate({
        target: [idempotencyKeys.siteId, idempotencyKeys.key],
        set: ANSWER_FROM_INSERT,
        setWhere: and(eq(idempotencyKeys.responseStatus, RUNNING), eq(idempotencyKeys.createdAt, new Date(startedAt))),
      });
  }

  /** Forgets a request that left nothing worth replaying: its claim goes, and a retry runs anew. */
  async release(siteId: string, key: string): Promise<void> {
    const slot = `${siteId}\n${key}`;
    const startedAt = this.claims.get(slot);
    this.claims.delete(slot);
    if (startedAt === undefined) return;
    await this.db
      .delete(idempotencyKeys)
      .where(and(this.ofKey(siteId, key), eq(idempotencyKeys.responseStatus, RUNNING), eq(idempotencyKeys.createdAt, new Date(startedAt))));
  }

  /** Deletes expired answers, and claims whose lease ended (left by an instance that stopped). */
  async purge(now: number): Promise<number> {
    const { rowCount } = await this.db.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, new Date(now)));
    return rowCount ?? 0;
  }
}
