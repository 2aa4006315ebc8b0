import type { StepDatabase } from '../db/steps.js';
import type { JobQueue } from '../jobs/store.js';
import type { WebhookStore, WebhookStoreOptions } from '../webhooks/store.js';
import type { StepsInTransaction } from './glue.js';

/**
 * Every store of the service, built once per database (sqliteStores, postgresStores). Each is
 * written once over the steps bridge (src/db/steps.ts); plugins decorate the app with these.
 */
export interface Stores {
  /** Runs stores' steps; for code that composes several stores' steps in one transaction. */
  db: StepDatabase;

  // ---- jobs and webhooks
  /** The job queue, every kind (loops take `jobs.scoped(...)`). */
  jobs: JobQueue;
  /** The webhook store, with the plugin's options (clock, retries, the delivery loop's wake). */
  webhooks(options: WebhookStoreOptions): WebhookStore;
  /** glue until posts and knowledge land: steps run inside a transaction an old store opened. */
  glue: StepsInTransaction;
}
