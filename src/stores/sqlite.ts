import type { DbHandle, Executor } from '../db/client.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import { dataVersionSignal, sqliteSites } from '../sites/sqlite.js';
import { SiteStore } from '../sites/store.js';
import type { Stores } from './index.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  // sites
  sites: sqliteSites,
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  return {
    db,
    // sites: keys are looked up at once (every request authenticates); another connection's commit drops the key cache.
    sites: new SiteStore(db, { keyChanges: dataVersionSignal(handle.dataVersion), readAtOnce: (steps) => db.runIn(handle.db, steps()) }),
  };
}
