import type { StepDatabase } from '../db/steps.js';
import type { PostStore } from '../posts/store.js';
import type { RevisionStore } from '../revisions/store.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { PublicSite } from '../public-site/store.js';
import type { SiteStore } from '../sites/store.js';
import type { KnowledgeStores } from '../knowledge/store.js';
import type { JobQueue } from '../jobs/store.js';
import type { AccountStore, AccountStoreOptions } from '../accounts/store.js';
import type { MediaStore } from '../media/store.js';
import type { WebhookStore, WebhookStoreOptions } from '../webhooks/store.js';
import type { AnalyticsStore } from '../analytics/store.js';
import type { SpamGuard, SpamGuardOptions } from '../spam-guard/guard.js';
import type { NewsletterStore, NewsletterStoreOptions } from '../newsletters/store.js';
import type { CommentStore } from '../comments/store.js';

/**
 * Every store of the service, built once per database (sqliteStores, postgresStores). Each is
 * written once over the steps bridge (src/db/steps.ts); plugins decorate the app with these.
 */
export interface Stores {
  /** Runs stores' steps; for code that composes several stores' steps in one transaction. */
  db: StepDatabase;

  posts: PostStore;
  /** Posts' revisions and the pending changes of published posts. */
  revisions: RevisionStore;
  /** What readers may see of each site (its pages are built from it). */
  publicSite: PublicSite;
  idempotency: IdempotencyStore;
  /** Sites, their settings and API keys. */
  sites: SiteStore;
  /** Knowledge files, search over them, their storage usage and chunk vectors. */
  knowledge: KnowledgeStores;
  /** The job queue, every kind (loops take `jobs.scoped(...)`). */
  jobs: JobQueue;
  /** Staff users, memberships, sessions and one-time links, with the session lifetimes of the configuration. */
  accounts(options: AccountStoreOptions): AccountStore;
  /** Daily views, visitors and referrers of each site's public pages. */
  analytics: AnalyticsStore;
  /** The webhook store, with the plugin's options (clock, retries, the delivery loop's wake). */
  webhooks(options: WebhookStoreOptions): WebhookStore;
  /** The rows of each site's media library. */
  media: MediaStore;
  /** The spam guard of public forms, with the configuration's difficulty and limits. */
  spamGuard(options: SpamGuardOptions): SpamGuard;
  /** Subscribers of each site and the newsletters of its posts, with the plugin's options (clock). */
  newsletters(options: NewsletterStoreOptions): NewsletterStore;
  /** Readers' comments and their moderation. */
  comments: CommentStore;
}
