import type { PgExecutor, PostgresHandle } from '../db/postgres.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import type { AsyncAdapters } from '../db/steps.js';
import { PgKeyChangeSignal, postgresSites } from '../sites/postgres.js';
import { SiteStore } from '../sites/store.js';
import type { Stores } from './index.js';

/** PostgreSQL's answer to every port (a concern's statements as PostgreSQL spells them). */
export const postgresAdapters: AsyncAdapters<PgExecutor> = {
  // sites
  sites: postgresSites,
};

/** Every store, on PostgreSQL. */
export function postgresStores(handle: PostgresHandle): Stores {
  const db = postgresStepDatabase(handle.db, postgresAdapters);
  return {
    db,
    // sites: the key cache follows the key change counter every instance moves.
    sites: new SiteStore(db, { keyChanges: new PgKeyChangeSignal(handle.db), readAtOnce: (steps) => db.runIn(handle.db, steps()) }),
  };
}
