import { prepared, type Executor } from '../db/sqlite.js';
import { apiKeys, sites } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { notFound } from '../errors.js';
import type { KeyChanges } from './key-cache.js';
import { HandleTakenMeanwhile, type SitePort } from './port.js';
import { urlsOfHost } from './rules.js';
import { and, asc, eq, inArray, isNull, like, sql } from '../db/orm.js';

// Every public request looks its site up, every post write moves its version, every key not
// cached is looked up: prepared once per connection.
const selectById = (db: Executor) =>
  db
    .select()
    .from(sites)
    .where(eq(sites.id, sql.placeholder('siteId')))
    .prepare();
const selectByHandle = (db: Executor) =>
  db
    .select()
    .from(sites)
    .where(eq(sites.handle, sql.placeholder('handle')))
    .prepare();
const selectByUrl = (db: Executor) =>
  db
    .select()
    .from(sites)
    // Only a proven domain serves its site.
    .where(and(inArray(sites.url, [sql.placeholder('http'), sql.placeholder('https')]), isNull(sites.domainToken)))
    .prepare();
const moveContentVersion = (db: Executor) =>
  db
    .update(sites)
    // `now` is passed as stored: epoch milliseconds.
    .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: sql`${sql.placeholder('now')}` })
    .where(eq(sites.id, sql.placeholder('siteId')))
    .returning({ version: sites.contentVersion })
    .prepare();
const selectActiveKey = (db: Executor) =>
  db
    .select({ keyId: apiKeys.id, siteId: sites.id, siteName: sites.name })
    .from(apiKeys)
    .innerJoin(sites, eq(sites.id, apiKeys.siteId))
    .where(and(eq(apiKeys.hash, sql.placeholder('hash')), isNull(apiKeys.revokedAt)))
    .prepare();

/** A write refused by the unique index on handles (only a writer outside the store gets there). */
function guardHandle(write: () => void): void {
  try {
    write();
  } catch (error) {
    for (let e: unknown = error; e instanceof Error; e = e.cause) {
      const { code } = e as { code?: unknown };
      if (code === 'SQLITE_CONSTRAINT_UNIQUE' && e.message.includes('sites.handle')) throw new HandleTakenMeanwhile({ cause: error });
    }
    throw error;
  }
}

/** The sites port as SQLite answers it, at once, inside the store's transaction. */
export const sqliteSites: SyncAdapter<SitePort, Executor> = {
  find: (tx, siteId) => prepared(tx, selectById).get({ siteId }),
  // The write transaction (BEGIN IMMEDIATE) already holds the whole database.
  lock: (tx, siteId) => prepared(tx, selectById).get({ siteId }),
  list: (tx) => tx.select().from(sites).orderBy(asc(sites.createdAt)).all(),
  any: (tx) => tx.select({ id: sites.id }).from(sites).limit(1).get() !== undefined,
  handlesStartingWith: (tx, base) =>
    tx
      .select({ handle: sites.handle })
      .from(sites)
      .where(like(sites.handle, `${base}%`))
      .all()
      .map((row) => row.handle),
  insert: (tx, site) => guardHandle(() => tx.insert(sites).values(site).run()),
  update: (tx, siteId, changes) => guardHandle(() => tx.update(sites).set(changes).where(eq(sites.id, siteId)).run()),
  byHandle: (tx, handle) => prepared(tx, selectByHandle).get({ handle }),
  byHost: (tx, host) => {
    const [http, https] = urlsOfHost(host);
    return prepared(tx, selectByUrl).get({ http, https });
  },
  touchContent: (tx, siteId, at) => {
    const moved = prepared(tx, moveContentVersion).get({ siteId, now: at.getTime() });
    if (!moved) throw notFound('site');
    return moved.version;
  },
  // SQLite's write transaction is exclusive: nothing to add.
  lockBootstrap: () => {},
  lockHost: () => {},
  insertKey: (tx, row) => void tx.insert(apiKeys).values(row).run(),
  keyExists: (tx, keyId) => tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, keyId)).get() !== undefined,
  keysOf: (tx, siteId) =>
    tx
      .select({ id: apiKeys.id, siteId: apiKeys.siteId, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(eq(apiKeys.siteId, siteId))
      .orderBy(asc(apiKeys.createdAt))
      .all(),
  revokeKey: (tx, keyId, at) =>
    tx
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
      .run().changes > 0,
  activeKey: (tx, hash) => {
    const row = prepared(tx, selectActiveKey).get({ hash });
    return row && { keyId: row.keyId, site: { id: row.siteId, name: row.siteName } };
  },
};

/**
 * SQLite's key changes: `PRAGMA data_version` changes exactly when another connection (the
 * admin CLI, say) has committed, and reading it touches no table; nothing to watch. It is read
 * once per turn of the event loop: the requests parsed in one turn arrived together, and a
 * busy server would otherwise spend a statement per request on it.
 */
export function dataVersionSignal(readDataVersion: () => number): KeyChanges {
  let version = readDataVersion();
  let readThisTurn = false;
  const nextTurn = () => {
    readThisTurn = false;
  };
  return {
    current() {
      if (!readThisTurn) {
        readThisTurn = true;
        setImmediate(nextTurn);
        version = readDataVersion();
      }
      return version;
    },
    watch: async () => {},
    close: async () => {},
  };
}
