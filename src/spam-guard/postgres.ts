import { spamGuardChallenges, spamGuardKeys, spamGuardWindows } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { SpamGuardPort } from './port.js';
import { eq, lte, sql } from '../db/orm.js';

/** The spam guard's port on PostgreSQL. */
export const postgresSpamGuard: AsyncAdapter<SpamGuardPort, PgExecutor> = {
  key: async (tx, name, candidate, now) => {
    await tx.insert(spamGuardKeys).values({ name, secret: candidate, createdAt: now }).onConflictDoNothing();
    return (await tx.select({ secret: spamGuardKeys.secret }).from(spamGuardKeys).where(eq(spamGuardKeys.name, name)))[0]!.secret;
  },
  // Of two instances inserting the same id at once, one inserts it; the other waits for its commit and inserts nothing.
  useChallenge: async (tx, id, expiresAt) =>
    (await tx.insert(spamGuardChallenges).values({ id, expiresAt }).onConflictDoNothing().returning({ id: spamGuardChallenges.id })).length > 0,
  countSubmission: async (tx, key, now, staleBefore) => {
    const stale = sql`${spamGuardWindows.windowStart} <= ${staleBefore.toISOString()}::timestamptz`;
    const [row] = await tx
      .insert(spamGuardWindows)
      .values({ key, windowStart: now, count: 1 })
      .onConflictDoUpdate({
        target: spamGuardWindows.key,
        set: {
          count: sql`case when ${stale} then 1 else ${spamGuardWindows.count} + 1 end`,
          windowStart: sql`case when ${stale} then ${now.toISOString()}::timestamptz else ${spamGuardWindows.windowStart} end`,
        },
      })
      .returning({ count: spamGuardWindows.count, windowStart: spamGuardWindows.windowStart });
    return row!;
  },
  purge: async (tx, now, staleBefore) =>
    ((await tx.delete(spamGuardChallenges).where(lte(spamGuardChallenges.expiresAt, now))).rowCount ?? 0) +
    ((await tx.delete(spamGuardWindows).where(lte(spamGuardWindows.windowStart, staleBefore))).rowCount ?? 0),
};
