import type { DbHandle, Executor } from '../db/sqlite.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import { sqlitePosts } from '../posts/sqlite.js';
import { SQLITE_TEXT } from '../posts/rules.js';
import { PostStore } from '../posts/store.js';
import { sqliteIdempotency } from '../idempotency/sqlite.js';
import { IdempotencyStore, InProcessRequests } from '../idempotency/store.js';
import { sqlitePublicSite } from '../public-site/sqlite.js';
import { PublicSite } from '../public-site/store.js';
import { dataVersionSignal, sqliteSites } from '../sites/sqlite.js';
import { SiteStore } from '../sites/store.js';
import type { Stores } from './index.js';
// accounts
import { sqliteAccounts } from '../accounts/sqlite.js';
import { AccountStore } from '../accounts/store.js';
// jobs and webhooks
import { sqliteAfterCommit, sqliteJobs } from '../jobs/sqlite.js';
import { JobQueue } from '../jobs/store.js';
import { sqliteWebhooks } from '../webhooks/sqlite.js';
import { WebhookStore } from '../webhooks/store.js';
// knowledge
import { knowledgeSqliteAdapters, sqliteKnowledgeOptions } from '../knowledge/sqlite.js';
import { knowledgeStores } from '../knowledge/store.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  posts: sqlitePosts,
  // public site and idempotency keys
  publicSite: sqlitePublicSite,
  idempotency: sqliteIdempotency,
  // accounts
  accounts: sqliteAccounts,
  // sites
  sites: sqliteSites,
  // knowledge
  ...knowledgeSqliteAdapters,
  // jobs and webhooks
  jobs: sqliteJobs,
  webhooks: sqliteWebhooks,
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  return {
    db,

    posts: new PostStore(db, SQLITE_TEXT),
    // public site and idempotency keys
    publicSite: new PublicSite(db),
    // One server per data folder: its running requests are known to it alone.
    idempotency: new IdempotencyStore(db, new InProcessRequests()),
    // sites: keys are looked up at once (every request authenticates); another connection's commit drops the key cache.
    sites: new SiteStore(db, { keyChanges: dataVersionSignal(handle.dataVersion), readAtOnce: (steps) => db.runIn(handle.db, steps()) }),
    // knowledge
    knowledge: knowledgeStores(db, sqliteKnowledgeOptions),
    // jobs and webhooks: one server per data folder (its lock), so it alone runs the jobs.
    jobs: new JobQueue(db, { soleWorker: true }),
    accounts: (options) => new AccountStore(db, options),
    webhooks: (options) => new WebhookStore(db, options, sqliteAfterCommit),
  };
}
