import type { Executor } from '../db/sqlite.js';
import { spamGuardChallenges, spamGuardKeys, spamGuardWindows } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { SpamGuardPort } from './port.js';
import { eq, lte, sql } from '../db/orm.js';

/** The spam guard's port on SQLite (timestamps are stored as epoch milliseconds). */
export const sqliteSpamGuard: SyncAdapter<SpamGuardPort, Executor> = {
  key: (tx, name, candidate, now) => {
    tx.insert(spamGuardKeys).values({ name, secret: candidate, createdAt: now }).onConflictDoNothing().run();
    return tx.select({ secret: spamGuardKeys.secret }).from(spamGuardKeys).where(eq(spamGuardKeys.name, name)).get()!.secret;
  },
  useChallenge: (tx, id, expiresAt) => tx.insert(spamGuardChallenges).values({ id, expiresAt }).onConflictDoNothing().returning({ id: spamGuardChallenges.id }).get() !== undefined,
  countSubmission: (tx, key, now, staleBefore) => {
    const stale = sql`${spamGuardWindows.windowStart} <= ${staleBefore.getTime()}`;
    return tx
      .insert(spamGuardWindows)
      .values({ key, windowStart: now, count: 1 })
      .onConflictDoUpdate({
        target: spamGuardWindows.key,
        set: {
          count: sql`case when ${stale} then 1 else ${spamGuardWindows.count} + 1 end`,
          windowStart: sql`case when ${stale} then ${now.getTime()} else ${spamGuardWindows.windowStart} end`,
        },
      })
      .returning({ count: spamGuardWindows.count, windowStart: spamGuardWindows.windowStart })
      .get()!;
  },
  purge: (tx, now, staleBefore) =>
    tx.delete(spamGuardChallenges).where(lte(spamGuardChallenges.expiresAt, now)).run().changes +
    tx.delete(spamGuardWindows).where(lte(spamGuardWindows.windowStart, staleBefore)).run().changes,
};
