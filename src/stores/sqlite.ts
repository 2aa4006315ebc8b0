import type { DbHandle, Executor } from '../db/client.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import { sqliteAfterCommit, sqliteJobs } from '../jobs/sqlite.js';
import { JobQueue } from '../jobs/store.js';
import { sqliteWebhooks } from '../webhooks/sqlite.js';
import { WebhookStore } from '../webhooks/store.js';
import { sqliteGlue } from './glue.js';
import type { Stores } from './index.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  // ---- jobs and webhooks
  jobs: sqliteJobs,
  webhooks: sqliteWebhooks,
  glue: sqliteGlue, // glue until posts and knowledge land
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  // ---- jobs and webhooks: one server per DATA_DIR (its lock), so it alone runs the jobs.
  const jobs = new JobQueue(db, { soleWorker: true });
  return {
    db,
    // ---- jobs and webhooks
    jobs,
    webhooks: (options) => new WebhookStore(db, options, sqliteAfterCommit),
    glue: { runIn: (tx, steps) => db.runIn(tx as Executor, steps) }, // glue until posts and knowledge land
  };
}
