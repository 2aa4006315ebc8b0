import type { PgExecutor, PostgresHandle } from '../db/postgres.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import type { AsyncAdapters } from '../db/steps.js';
import { postgresAfterCommit, postgresJobs } from '../jobs/postgres.js';
import { JobQueue } from '../jobs/store.js';
import { postgresWebhooks } from '../webhooks/postgres.js';
import { WebhookStore } from '../webhooks/store.js';
import { postgresGlue } from './glue.js';
import type { Stores } from './index.js';

/** PostgreSQL's answer to every port (a concern's statements as PostgreSQL spells them). */
export const postgresAdapters: AsyncAdapters<PgExecutor> = {
  // ---- jobs and webhooks
  jobs: postgresJobs,
  webhooks: postgresWebhooks,
  glue: postgresGlue, // glue until posts and knowledge land
};

/** Every store, on PostgreSQL. */
export function postgresStores(handle: PostgresHandle): Stores {
  const db = postgresStepDatabase(handle.db, postgresAdapters);
  // ---- jobs and webhooks: other instances may share the database; their running jobs are alive.
  const jobs = new JobQueue(db, { soleWorker: false });
  const afterCommit = postgresAfterCommit(handle.db);
  return {
    db,
    // ---- jobs and webhooks
    jobs,
    webhooks: (options) => new WebhookStore(db, options, afterCommit),
    glue: { runIn: (tx, steps) => db.runIn(tx as PgExecutor, steps) }, // glue until posts and knowledge land
  };
}
