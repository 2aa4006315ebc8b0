import type { DbHandle, Executor } from '../db/sqlite.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import { sqlitePosts } from '../posts/sqlite.js';
import { SQLITE_TEXT } from '../posts/rules.js';
import { PostStore } from '../posts/store.js';
import { sqliteRevisions } from '../revisions/sqlite.js';
import { RevisionStore } from '../revisions/store.js';
import { sqliteIdempotency } from '../idempotency/sqlite.js';
import { IdempotencyStore, InProcessRequests } from '../idempotency/store.js';
import { sqlitePublicSite } from '../public-site/sqlite.js';
import { PublicSite } from '../public-site/store.js';
import { dataVersionSignal, sqliteSites } from '../sites/sqlite.js';
import { SiteStore } from '../sites/store.js';
import type { Stores } from './index.js';
import { sqliteMedia } from '../media/sqlite.js';
import { MediaStore } from '../media/store.js';
import { sqliteAccounts } from '../accounts/sqlite.js';
import { AccountStore } from '../accounts/store.js';
import { sqliteAfterCommit, sqliteJobs } from '../jobs/sqlite.js';
import { JobQueue } from '../jobs/store.js';
import { sqliteWebhooks } from '../webhooks/sqlite.js';
import { WebhookStore } from '../webhooks/store.js';
import { sqliteAnalytics } from '../analytics/sqlite.js';
import { sqliteNewsletters } from '../newsletters/sqlite.js';
import { NewsletterStore } from '../newsletters/store.js';
import { AnalyticsStore } from '../analytics/store.js';
import { knowledgeSqliteAdapters, sqliteKnowledgeOptions } from '../knowledge/sqlite.js';
import { knowledgeStores } from '../knowledge/store.js';
import { sqliteSpamGuard } from '../spam-guard/sqlite.js';
import { SpamGuard } from '../spam-guard/guard.js';
import { sqliteComments } from '../comments/sqlite.js';
import { CommentStore } from '../comments/store.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  revisions: sqliteRevisions,
  posts: sqlitePosts,
  publicSite: sqlitePublicSite,
  idempotency: sqliteIdempotency,
  accounts: sqliteAccounts,
  sites: sqliteSites,
  ...knowledgeSqliteAdapters,
  jobs: sqliteJobs,
  webhooks: sqliteWebhooks,
  media: sqliteMedia,
  analytics: sqliteAnalytics,
  spamGuard: sqliteSpamGuard,
  newsletters: sqliteNewsletters,
  comments: sqliteComments,
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  const posts = new PostStore(db, SQLITE_TEXT);
  const revisions = new RevisionStore(db, posts, SQLITE_TEXT);
  // Every save of a post's text keeps a revision, in the save's own transaction.
  posts.onChange(revisions.onPostChange);
  return {
    db,

    posts,
    revisions,
    publicSite: new PublicSite(db),
    // One server per data folder: its running requests are known to it alone.
    idempotency: new IdempotencyStore(db, new InProcessRequests()),
    // Keys are looked up at once (every request authenticates); another connection's commit drops the key cache.
    sites: new SiteStore(db, { keyChanges: dataVersionSignal(handle.dataVersion), readAtOnce: (steps) => db.runIn(handle.db, steps()) }),
    knowledge: knowledgeStores(db, sqliteKnowledgeOptions),
    // One server per data folder (its lock), so it alone runs the jobs.
    jobs: new JobQueue(db, { soleWorker: true }),
    accounts: (options) => new AccountStore(db, options),
    analytics: new AnalyticsStore(db),
    webhooks: (options) => new WebhookStore(db, options, sqliteAfterCommit),
    media: new MediaStore(db),
    spamGuard: (options) => new SpamGuard(db, options),
    newsletters: (options) => new NewsletterStore(db, options, { soleWorker: true }),
    comments: new CommentStore(db),
  };
}
