import { driverRow, placeholderRow, prepared, type Executor } from '../db/sqlite.js';
import { idempotencyKeys } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { CLAIM_STATUS, replacedByAnswer, ROW_FROM_INSERT, type IdempotencyPort } from './port.js';
import { and, eq, sql } from '../db/orm.js';

const p = (name: string) => sql.placeholder(name);
// Raw placeholders: timestamps are passed as stored (epoch milliseconds).
const stored = (name: string) => sql`${p(name)}`;

// Requests with a key look theirs up and write it: prepared once per connection.
const selectKey = (db: Executor) =>
  db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.siteId, p('siteId')), eq(idempotencyKeys.key, p('key'))))
    .prepare();

const insertClaim = (db: Executor) =>
  db
    .insert(idempotencyKeys)
    .values(placeholderRow(idempotencyKeys))
    .onConflictDoUpdate({ target: [idempotencyKeys.siteId, idempotencyKeys.key], set: ROW_FROM_INSERT, setWhere: sql`${idempotencyKeys.expiresAt} <= ${p('now')}` })
    .returning({ siteId: idempotencyKeys.siteId })
    .prepare();

const upsertAnswer = (db: Executor) =>
  db
    .insert(idempotencyKeys)
    .values(placeholderRow(idempotencyKeys))
    .onConflictDoUpdate({ target: [idempotencyKeys.siteId, idempotencyKeys.key], set: ROW_FROM_INSERT, setWhere: replacedByAnswer(idempotencyKeys, p('expiredBy')) })
    .prepare();

const deleteClaim = (db: Executor) =>
  db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.siteId, p('siteId')),
        eq(idempotencyKeys.key, p('key')),
        eq(idempotencyKeys.responseStatus, CLAIM_STATUS),
        sql`${idempotencyKeys.createdAt} = ${stored('claimedAt')}`,
      ),
    )
    .prepare();

const deleteExpired = (db: Executor) => db.delete(idempotencyKeys).where(sql`${idempotencyKeys.expiresAt} <= ${stored('now')}`).prepare();

/** The idempotency port on SQLite. */
export const sqliteIdempotency: SyncAdapter<IdempotencyPort, Executor> = {
  find: (tx, siteId, key) => prepared(tx, selectKey).get({ siteId, key }),
  claim: (tx, claim, now) => prepared(tx, insertClaim).get({ ...driverRow(idempotencyKeys, claim), now: now.getTime() }) !== undefined,
  keep: (tx, answer, expiredBy) => void prepared(tx, upsertAnswer).run({ ...driverRow(idempotencyKeys, answer), expiredBy: expiredBy?.getTime() ?? null }),
  unclaim: (tx, siteId, key, claimedAt) => void prepared(tx, deleteClaim).run({ siteId, key, claimedAt: claimedAt.getTime() }),
  purge: (tx, now) => prepared(tx, deleteExpired).run({ now: now.getTime() }).changes,
};
