import type { DbHandle, Executor } from '../db/client.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import type { Stores } from './index.js';
// knowledge
import { knowledgeSqliteAdapters, sqliteKnowledgeOptions } from '../knowledge/sqlite.js';
import { knowledgeStores } from '../knowledge/store.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  // knowledge
  ...knowledgeSqliteAdapters,
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  return {
    db,
    // knowledge
    knowledge: knowledgeStores(db, sqliteKnowledgeOptions),
  };
}
