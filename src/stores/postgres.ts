import type { PgExecutor, PostgresHandle } from '../db/postgres.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import type { AsyncAdapters } from '../db/steps.js';
import type { Stores } from './index.js';
// knowledge
import { knowledgePostgresAdapters } from '../knowledge/postgres.js';
import { knowledgeStores } from '../knowledge/store.js';

/** PostgreSQL's answer to every port (a concern's statements as PostgreSQL spells them). */
export const postgresAdapters: AsyncAdapters<PgExecutor> = {
  // knowledge
  ...knowledgePostgresAdapters,
};

/** Every store, on PostgreSQL. */
export function postgresStores(handle: PostgresHandle): Stores {
  const db = postgresStepDatabase(handle.db, postgresAdapters);
  return {
    db,
    // knowledge
    knowledge: knowledgeStores(db),
  };
}
