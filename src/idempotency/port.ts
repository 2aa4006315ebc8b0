import type { AnyColumn, SQL } from 'drizzle-orm';
import type { IdempotencyKeyRow } from '../db/schema.js';
import { sql } from '../db/orm.js';

/*
 * What the idempotency store (store.ts) asks its database. A key's row is either a kept answer
 * or a claim: a request still running that tells the instances sharing the database so
 * (response_status CLAIM_STATUS; see LeasedClaims in store.ts).
 */

/** response_status of a claim: no HTTP answer has status 0. */
export const CLAIM_STATUS = 0;

export interface IdempotencyPort {
  /** The key's row, live or expired. */
  find(siteId: string, key: string): IdempotencyKeyRow | undefined;
  /** Inserts `claim` unless a row live at `now` holds its key (an expired one is replaced); answers whether it did. */
  claim(claim: IdempotencyKeyRow, now: Date): boolean;
  /**
   * Writes the answer of a request that began at `answer.createdAt` where the key has no row,
   * over its own claim, or over a row expired at `expiredBy` (null: none); any other row stays.
   */
  keep(answer: IdempotencyKeyRow, expiredBy: Date | null): void;
  /** Deletes the claim made at `claimedAt`, if it still holds the key. */
  unclaim(siteId: string, key: string, claimedAt: Date): void;
  /** Deletes the rows expired at `now`; answers how many. */
  purge(now: Date): number;
}

declare module '../db/steps.js' {
  interface Ports {
    idempotency: IdempotencyPort;
  }
}

/*
 * The statements' conditions, written once: both dialects spell them alike (`excluded` is the
 * row an upsert tried to insert).
 */

interface KeyColumns {
  responseStatus: AnyColumn;
  createdAt: AnyColumn;
  expiresAt: AnyColumn;
}

const excluded = (column: string) => sql.raw(`excluded.${column}`);

/** An upsert's update: the whole row it tried to insert. */
export const ROW_FROM_INSERT = {
  fingerprint: excluded('fingerprint'),
  responseStatus: excluded('response_status'),
  responseType: excluded('response_type'),
  responseBody: excluded('response_body'),
  createdAt: excluded('created_at'),
  expiresAt: excluded('expires_at'),
};

/** The rows an answer may replace (see IdempotencyPort.keep), `expiredBy` a parameter (null matches nothing). */
export const replacedByAnswer = (t: KeyColumns, expiredBy: unknown): SQL =>
  sql`(${t.responseStatus} = ${CLAIM_STATUS} and ${t.createdAt} = ${excluded('created_at')}) or ${t.expiresAt} <= ${expiredBy}`;
