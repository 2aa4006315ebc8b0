import { idempotencyKeys } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { CLAIM_STATUS, replacedByAnswer, ROW_FROM_INSERT, type IdempotencyPort } from './port.js';
import { and, eq, lte } from '../db/orm.js';

const ofKey = (siteId: string, key: string) => and(eq(idempotencyKeys.siteId, siteId), eq(idempotencyKeys.key, key));
const target = [idempotencyKeys.siteId, idempotencyKeys.key];

/** The idempotency port on PostgreSQL. */
export const postgresIdempotency: AsyncAdapter<IdempotencyPort, PgExecutor> = {
  find: async (tx, siteId, key) => (await tx.select().from(idempotencyKeys).where(ofKey(siteId, key)))[0],
  claim: async (tx, claim, now) => {
    const claimed = await tx
      .insert(idempotencyKeys)
      .values(claim)
      .onConflictDoUpdate({ target, set: ROW_FROM_INSERT, setWhere: lte(idempotencyKeys.expiresAt, now) })
      .returning({ siteId: idempotencyKeys.siteId });
    return claimed.length > 0;
  },
  keep: async (tx, answer, expiredBy) => {
    await tx.insert(idempotencyKeys).values(answer).onConflictDoUpdate({ target, set: ROW_FROM_INSERT, setWhere: replacedByAnswer(idempotencyKeys, expiredBy) });
  },
  unclaim: async (tx, siteId, key, claimedAt) => {
    await tx.delete(idempotencyKeys).where(and(ofKey(siteId, key), eq(idempotencyKeys.responseStatus, CLAIM_STATUS), eq(idempotencyKeys.createdAt, claimedAt)));
  },
  purge: async (tx, now) => (await tx.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, now))).rowCount ?? 0,
};
