import type { PgExecutor, PostgresHandle } from '../db/postgres.js';
import type { PgContentVersions } from '../db/pg-content-versions.js';
import { postgresStepDatabase } from '../db/postgres-steps.js';
import type { AsyncAdapters } from '../db/steps.js';
import { postgresPosts } from '../posts/postgres.js';
import { POSTGRES_TEXT } from '../posts/rules.js';
import { PostStore } from '../posts/store.js';
import { postgresRevisions } from '../revisions/postgres.js';
import { RevisionStore } from '../revisions/store.js';
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
import { postgresNewsletters } from '../newsletters/postgres.js';
import { NewsletterStore } from '../newsletters/store.js';
import { AnalyticsStore } from '../analytics/store.js';
import { knowledgePostgresAdapters } from '../knowledge/postgres.js';
import { knowledgeStores } from '../knowledge/store.js';
import { postgresSpamGuard } from '../spam-guard/postgres.js';
import { SpamGuard } from '../spam-guard/guard.js';
import { postgresComments } from '../comments/postgres.js';
import { CommentStore } from '../comments/store.js';

/** PostgreSQL's answer to every port (a concern's statements as PostgreSQL spells them). */
export const postgresAdapters: AsyncAdapters<PgExecutor> = {
  revisions: postgresRevisions,
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
  spamGuard: postgresSpamGuard,
  newsletters: postgresNewsletters,
  comments: postgresComments,
};

/**
 * The adapters with sites' content versions answered from what the database notified
 * (PgContentVersions) where they can be: a read outside any transaction of a version this
 * instance can vouch for costs a share of a fence instead of a query. Writes that move a version say so before they
 * commit, so this instance reads its own writes; reads inside a transaction always ask.
 */
export function withContentVersions(adapters: AsyncAdapters<PgExecutor>, root: PgExecutor, versions: PgContentVersions): AsyncAdapters<PgExecutor> {
  const { posts, sites } = adapters;
  return {
    ...adapters,
    posts: {
      ...posts,
      contentVersion: async (db, siteId) => {
        if (db !== root) return posts.contentVersion(db, siteId);
        // Known, and still so once every notification committed before this read has arrived.
        if (versions.current(siteId) !== undefined && (await versions.fence())) {
          const known = versions.current(siteId);
          if (known !== undefined) return known;
        }
        const token = versions.beforeRead();
        const version = await posts.contentVersion(db, siteId);
        versions.learn(siteId, version, token);
        return version;
      },
      recordChange: async (tx, siteId, at, counted, postId) => {
        const version = await posts.recordChange(tx, siteId, at, counted, postId);
        versions.moving(siteId, version);
        return version;
      },
    },
    sites: {
      ...sites,
      touchContent: async (tx, siteId, at) => {
        const version = await sites.touchContent(tx, siteId, at);
        versions.moving(siteId, version);
        return version;
      },
      update: (tx, siteId, changes) => {
        if (changes.contentVersion !== undefined) versions.moving(siteId, changes.contentVersion);
        return sites.update(tx, siteId, changes);
      },
    },
  };
}

/** Every store, on PostgreSQL. */
export function postgresStores(handle: PostgresHandle): Stores {
  void handle.contentVersions.start();
  const db = postgresStepDatabase(handle, withContentVersions(postgresAdapters, handle.db, handle.contentVersions));
  const afterCommit = postgresAfterCommit(handle.db);
  const posts = new PostStore(db, POSTGRES_TEXT);
  const revisions = new RevisionStore(db, posts, POSTGRES_TEXT);
  // Every save of a post's text keeps a revision, in the save's own transaction.
  posts.onChange(revisions.onPostChange);
  // Other instances' post writes, as they commit: the posts kept here that they did not change stay good.
  handle.contentVersions.onPostChange((siteId, version, postId) => posts.changeCommitted(siteId, version, postId));
  return {
    db,

    posts,
    revisions,
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
    spamGuard: (options) => new SpamGuard(db, options),
    newsletters: (options) => new NewsletterStore(db, options, { soleWorker: false }),
    comments: new CommentStore(db),
  };
}
