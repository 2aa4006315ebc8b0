import type { PgExecutor, PostgresHandle } from '../db/postgres.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import type { AsyncAdapters } from '../db/steps.js';
import { postgresPosts } from '../posts/postgres.js';
import { POSTGRES_TEXT } from '../posts/rules.js';
import { PostStore } from '../posts/store.js';
import { postgresIdempotency } from '../idempotency/postgres.js';
import { IdempotencyStore, LeasedClaims } from '../idempotency/store.js';
import { postgresPublicSite } from '../public-site/postgres.js';
import { PublicSite } from '../public-site/store.js';
import { PgKeyChangeSignal, postgresSites } from '../sites/postgres.js';
import { SiteStore } from '../sites/store.js';
import type { Stores } from './index.js';
import { postgresMedia } from '../media/postgres.js';
import { MediaStore } from '../media/store.js';
import { postgresAccounts } from '../accounts/postgres.js';
import { AccountStore } from '../accounts/store.js';
import { postgresAfterCommit, postgresJobs } from '../jobs/postgres.js';
import { JobQueue } from '../jobs/store.js';
import { postgresWebhooks } from '../webhooks/postgres.js';
import { WebhookStore } from '../webhooks/store.js';
import { postgresAnalytics } from '../analytics/postgres.js';
import { AnalyticsStore } from '../analytics/store.js';
import { knowledgePostgresAdapters } from '../knowledge/postgres.js';
import { knowledgeStores } from '../knowledge/store.js';

/** PostgreSQL's answer to every port (a concern's statements as PostgreSQL spells them). */
export const postgresAdapters: AsyncAdapters<PgExecutor> = {
  posts: postgresPosts,
  publicSite: postgresPublicSite,
  idempotency: postgresIdempotency,
  accounts: postgresAccounts,
  sites: postgresSites,
  ...knowledgePostgresAdapters,
  jobs: postgresJobs,
  webhooks: postgresWebhooks,
  media: postgresMedia,
  analytics: postgresAnalytics,
};

/** Every store, on PostgreSQL. */
export function postgresStores(handle: PostgresHandle): Stores {
  const db = postgresStepDatabase(handle.db, postgresAdapters);
  const afterCommit = postgresAfterCommit(handle.db);
  return {
    db,

    posts: new PostStore(db, POSTGRES_TEXT),
    publicSite: new PublicSite(db),
    // Several instances share the database: a running request claims its key with a row.
    idempotency: new IdempotencyStore(db, new LeasedClaims()),
    // The key cache follows the key change counter every instance moves.
    sites: new SiteStore(db, { keyChanges: new PgKeyChangeSignal(handle.db), readAtOnce: (steps) => db.runIn(handle.db, steps()) }),
    knowledge: knowledgeStores(db),
    // Other instances may share the database; their running jobs are alive.
    jobs: new JobQueue(db, { soleWorker: false }),
    accounts: (options) => new AccountStore(db, options),
    analytics: new AnalyticsStore(db),
    webhooks: (options) => new WebhookStore(db, options, afterCommit),
    media: new MediaStore(db),
  };
}
