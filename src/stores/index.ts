import type { StepDatabase } from '../db/steps.js';
import type { KnowledgeStores } from '../knowledge/store.js';

/**
 * Every store of the service, built once per database (sqliteStores, postgresStores). Each is
 * written once over the steps bridge (src/db/steps.ts); plugins decorate the app with these.
 */
export interface Stores {
  /** Runs stores' steps; for code that composes several stores' steps in one transaction. */
  db: StepDatabase;

  /** Knowledge files, search over them, their storage usage and chunk vectors. */
  knowledge: KnowledgeStores;
}
