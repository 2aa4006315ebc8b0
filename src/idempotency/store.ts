import { and, eq, lte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { idempotencyKeys } from '../db/schema.js';
import { IDEMPOTENCY_TTL_MS } from '../limits.js';
import { decideAnswered, decideRunning, type Begin, type StoredResponse } from './decisions.js';

export type { Begin, StoredResponse };

const p = (name: string) => sql.placeholder(name);
const value = (name: string) => sql`${p(name)}`;

/**
 * Idempotency keys per site: the first request's answer, kept for a day (one row, written
 * once, when it answers). Requests still running are known to this process alone: one server
 * runs per data folder, so a key whose request died with its process is simply free again.
 */
export class IdempotencyStore {
  /** Requests running now, by `site\nkey`: their fingerprint (null: an upload not hashed yet) and start. */
  private readonly running = new Map<string, { fingerprint: string | null; startedAt: number }>();
  private readonly select;
  private readonly save;
  private readonly purgeExpired;

  constructor(
    db: Executor,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {
    this.select = db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.siteId, p('siteId')), eq(idempotencyKeys.key, p('key'))))
      .prepare();
    // An expired row with the same key is replaced.
    this.save = db
      .insert(idempotencyKeys)
      .values({
        siteId: value('siteId'),
        key: value('key'),
        fingerprint: value('fingerprint'),
        responseStatus: value('status'),
        responseType: value('type'),
        responseBody: value('body'),
        createdAt: value('createdAt'),
        expiresAt: value('expiresAt'),
      })
      .onConflictDoUpdate({
        target: [idempotencyKeys.siteId, idempotencyKeys.key],
        set: {
          fingerprint: value('fingerprint'),
          responseStatus: value('status'),
          responseType: value('type'),
          responseBody: value('body'),
          createdAt: value('createdAt'),
          expiresAt: value('expiresAt'),
        },
      })
      .prepare();
    this.purgeExpired = db.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, value('now'))).prepare();
  }

  /** `fingerprint` null: not known before the body is read (an upload). */
  begin(siteId: string, key: string, fingerprint: string | null, now: number): Begin {
    const row = this.select.get({ siteId, key });
    if (row && row.expiresAt.getTime() > now) return decideAnswered(row, fingerprint);
    const slot = `${siteId}\n${key}`;
    const running = this.running.get(slot);
    if (running) return decideRunning(running.fingerprint, fingerprint);
    this.running.set(slot, { fingerprint, startedAt: now });
    return { action: 'run' };
  }

  /** Keeps the answer of a request this process ran, for its retries until a day after it began. */
  complete(siteId: string, key: string, fingerprint: string, response: StoredResponse): void {
    const slot = `${siteId}\n${key}`;
    const startedAt = this.running.get(slot)?.startedAt ?? Date.now();
    this.running.delete(slot);
    this.save.run({
      siteId,
      key,
      fingerprint,
      status: response.status,
      type: response.contentType,
      body: response.body,
      createdAt: startedAt,
      expiresAt: startedAt + this.ttlMs,
    });
  }

  /** Forgets a request that left nothing worth replaying (it never ran, or failed on the server's side): a retry runs anew. */
  release(siteId: string, key: string): void {
    this.running.delete(`${siteId}\n${key}`);
  }

  purge(now: number): number {
    return this.purgeExpired.run({ now }).changes;
  }
}
