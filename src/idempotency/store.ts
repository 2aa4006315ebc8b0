import type { IdempotencyKeyRow } from '../db/schema.js';
import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { IDEMPOTENCY_RUNNING_LEASE_MS, IDEMPOTENCY_TTL_MS } from '../limits.js';
import { decideAnswered, decideRunning, type Begin, type StoredResponse } from './decisions.js';
import { CLAIM_STATUS } from './port.js';

export type { Begin, StoredResponse };

/** fingerprint of a claim whose request is an upload not hashed yet: a SHA-256 digest is never empty. */
const NOT_HASHED = '';
/** Looks at a key again when another instance claimed it between the look and the claim. */
const BEGIN_ATTEMPTS = 3;

const slotOf = (siteId: string, key: string) => `${siteId}\n${key}`;

/**
 * Where the requests still running under a key are known: the one thing the two databases'
 * deployments do differently (the wiring picks, see InProcessRequests and LeasedClaims).
 */
export interface RunningRequests {
  /**
   * Starts a request beginning at `now` under a key that no live row holds: `run`, or what to
   * tell it when another request runs under the key; null when another instance claimed the
   * key meanwhile (its row, read again, tells).
   */
  start(siteId: string, key: string, fingerprint: string | null, now: number): Steps<Begin | null>;
  /** Forgets the key's request (it answered, or left nothing to keep); answers when it began, when it began here. */
  end(siteId: string, key: string): number | undefined;
  /** Frees the key of a request begun at `startedAt` that left nothing to keep. */
  free(siteId: string, key: string, startedAt: number): Steps<void>;
}

/**
 * Running requests known to this process alone, as SQLite runs: one server per data folder,
 * so a key whose request died with its process is free again at once, and nothing is written
 * before the answer.
 */
export class InProcessRequests implements RunningRequests {
  /** By `site\nkey`: their fingerprint (null: an upload not hashed yet) and start. */
  private readonly running = new Map<string, { fingerprint: string | null; startedAt: number }>();

  *start(siteId: string, key: string, fingerprint: string | null, now: number): Steps<Begin> {
    const slot = slotOf(siteId, key);
    const running = this.running.get(slot);
    if (running) return decideRunning(running.fingerprint, fingerprint);
    this.running.set(slot, { fingerprint, startedAt: now });
    return { action: 'run' };
  }

  end(siteId: string, key: string): number | undefined {
    const slot = slotOf(siteId, key);
    const startedAt = this.running.get(slot)?.startedAt;
    this.running.delete(slot);
    return startedAt;
  }

  *free(): Steps<void> {}
}

/**
 * Running requests claimed with a row of their own (see CLAIM_STATUS), as several instances
 * sharing PostgreSQL need: of requests arriving at once on different instances, exactly one
 * claim succeeds (one statement, made atomic by the (site, key) primary key) and its request
 * runs; the others find its row. A claim lasts `leaseMs`: an instance that dies mid-request
 * leaves its claim behind, and the key is free again once the lease ends.
 */
export class LeasedClaims implements RunningRequests {
  /** Claims this instance holds, by `site\nkey`: when their request began (their row's created_at). */
  private readonly claims = new Map<string, number>();

  constructor(private readonly leaseMs = IDEMPOTENCY_RUNNING_LEASE_MS) {}

  *start(siteId: string, key: string, fingerprint: string | null, now: number): Steps<Begin | null> {
    const claim: IdempotencyKeyRow = {
      siteId,
      key,
      fingerprint: fingerprint ?? NOT_HASHED,
      responseStatus: CLAIM_STATUS,
      responseType: null,
      responseBody: '',
      createdAt: new Date(now),
      expiresAt: new Date(now + this.leaseMs),
    };
    if (!(yield* ask('idempotency', 'claim', claim, new Date(now)))) return null;
    this.claims.set(slotOf(siteId, key), now);
    return { action: 'run' };
  }

  end(siteId: string, key: string): number | undefined {
    const slot = slotOf(siteId, key);
    const startedAt = this.claims.get(slot);
    this.claims.delete(slot);
    return startedAt;
  }

  *free(siteId: string, key: string, startedAt: number): Steps<void> {
    yield* ask('idempotency', 'unclaim', siteId, key, new Date(startedAt));
  }
}

/**
 * Idempotency keys per site: the first request's answer, kept for a day after it began (one
 * row, written when it answers), with the same clock on both databases (`now` given, never the
 * database's) and the same rules (decisions.ts). Where running requests are known is the
 * `running` strategy's. Each call is one statement or two, outside a transaction (a claim is
 * atomic on its own).
 */
export class IdempotencyStore {
  constructor(
    private readonly db: StepDatabase,
    private readonly running: RunningRequests,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  /** `fingerprint` null: not known before the body is read (an upload). */
  begin(siteId: string, key: string, fingerprint: string | null, now: number): Promise<Begin> {
    return this.db.read(() => this.beginSteps(siteId, key, fingerprint, now));
  }

  private *beginSteps(siteId: string, key: string, fingerprint: string | null, now: number): Steps<Begin> {
    for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
      const row = yield* ask('idempotency', 'find', siteId, key);
      if (row && row.expiresAt.getTime() > now) {
        if (row.responseStatus !== CLAIM_STATUS) return decideAnswered(row, fingerprint);
        return decideRunning(row.fingerprint === NOT_HASHED ? null : row.fingerprint, fingerprint);
      }
      const started = yield* this.running.start(siteId, key, fingerprint, now);
      if (started) return started;
    }
    return { action: 'in-use' };
  }

  /**
   * Keeps the answer of a request begun here, for its retries until a day after it began: over
   * its claim, or the answer that had expired when it began. A claim another instance took over
   * meanwhile (this one outlived its lease) is left to it; a claim purged meanwhile is written anew.
   */
  complete(siteId: string, key: string, fingerprint: string, response: StoredResponse): Promise<void> {
    const began = this.running.end(siteId, key);
    const startedAt = began ?? Date.now();
    const answer: IdempotencyKeyRow = {
      siteId,
      key,
      fingerprint,
      responseStatus: response.status,
      responseType: response.contentType,
      responseBody: response.body,
      createdAt: new Date(startedAt),
      expiresAt: new Date(startedAt + this.ttlMs),
    };
    return this.db.read(() => ask('idempotency', 'keep', answer, began === undefined ? null : answer.createdAt));
  }

  /** Forgets a request that left nothing worth replaying (it never ran, or failed on the server's side): a retry runs anew. */
  async release(siteId: string, key: string): Promise<void> {
    const startedAt = this.running.end(siteId, key);
    if (startedAt !== undefined) await this.db.read(() => this.running.free(siteId, key, startedAt));
  }

  /** Deletes expired answers, and claims whose lease ended (left by an instance that stopped). */
  purge(now: number): Promise<number> {
    return this.db.read(() => ask('idempotency', 'purge', new Date(now)));
  }
}
