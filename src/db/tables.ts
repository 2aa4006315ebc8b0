import {
  NEWSLETTER_RECIPIENT_STATUSES,
  NEWSLETTER_SEND_STATUSES,
  SUBSCRIBER_STATUSES,
  SUBSCRIBER_SOURCES,
} from '../newsletters/statuses.js';
import { COMMENT_MODES, COMMENT_STATUSES, IMAGE_FORMATS, JOB_STATUSES, type ImageVariant, KNOWLEDGE_STATUSES, VISIBILITIES, WEBHOOK_DELIVERY_STATUSES, type WebhookEvent } from '../limits.js';
import {
  type AnyColumnSpec,
  bigInteger,
  boolean,
  defineTable,
  identity,
  index,
  integer,
  json,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  vector,
} from './columns.js';

/*
 * Every table, defined once for both databases: schema.ts builds them for SQLite, pg-schema.ts
 * for PostgreSQL (columns.ts says how). Names here are those of the database and of TypeScript,
 * with the keys, indexes, foreign keys and defaults of both.
 */

export const sites = defineTable(
  'sites',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    // Public address: pages at /sites/<handle>/, and at / on the host of `url` when set.
    handle: text('handle').notNull(),
    url: text('url'),
    // Set while the host of `url` is not proven yet: its DNS TXT record _blog-verify.<host> must
    // hold this token (or an operator verifies it). Null with a url: proven, the host serves the site.
    domainToken: text('domain_token'),
    description: text('description'),
    language: text('language').notNull().default('en'),
    postsPerPage: integer('posts_per_page').notNull().default(10),
    // IANA name: the days of the site's analytics.
    timeZone: text('time_zone').notNull().default('UTC'),
    // Readers' comments: `off`, `moderated` (each waits for approval) or `open` (published at once
    // when its author's earlier comment on the site was approved); and words that mark one as spam.
    commentsMode: text('comments_mode', { enum: COMMENT_MODES }).notNull().default('moderated'),
    blockedWords: json('blocked_words').$type<string[]>().notNull().default([]),
    // Moves with every write that can change what readers see: public pages and feeds are
    // cached per version, so a write invalidates them at once, on every instance.
    contentVersion: integer('content_version').notNull().default(0),
    contentUpdatedAt: timestamp('content_updated_at'),
    // Newsletters (src/newsletters): off until the owner turns them on; the sender's name (the
    // site's name when null), a Reply-To address and a footer line every newsletter mail carries.
    newsletterEnabled: boolean('newsletter_enabled').notNull().default(false),
    newsletterSenderName: text('newsletter_sender_name'),
    newsletterReplyTo: text('newsletter_reply_to'),
    newsletterFooter: text('newsletter_footer'),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [uniqueIndex('sites_handle_unique').on(t.handle)],
);

export const apiKeys = defineTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    // First characters of the key, enough to recognise it in a list; never the whole key.
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    createdAt: timestamp('created_at').notNull(),
    revokedAt: timestamp('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.hash), index('api_keys_site_idx').on(t.siteId)],
);

export const posts = defineTable(
  'posts',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    content: text('content'),
    category: text('category'),
    tags: json('tags').$type<string[]>().notNull().default([]),
    authorId: text('author_id'),
    isDraft: boolean('is_draft').notNull(),
    visibility: text('visibility', { enum: VISIBILITIES }).notNull().default('public'),
    publishedAt: timestamp('published_at'),
    // A draft scheduled to be published at this time (a `publish-post` job of the queue does it).
    publishAt: timestamp('publish_at'),
    // An image of the site's media library shown with the post (no foreign key: deleting the
    // image clears it in the same transaction, see src/media), and its alt text for this post.
    featureImage: text('feature_image'),
    featureImageAlt: text('feature_image_alt'),
    // Readers may comment (when the site's comments are on); false closes them, keeping those there are.
    commentsEnabled: boolean('comments_enabled').notNull().default(true),
    // Which generator wrote the post (null for posts written by a client).
    generatorProvider: text('generator_provider'),
    generatorModel: text('generator_model'),
    // The batch task that generated this post: unique, so a task can never make two posts.
    sourceTaskId: text('source_task_id'),
    // A contributor's draft marked for an editor to review ("Submit for review"); null: not asked.
    reviewRequestedAt: timestamp('review_requested_at'),
    // The draft's share-preview link (random, unguessable): it reads this one draft signed out
    // until the post is published or the link revoked (null). Shown to the post's editors, like
    // the link itself, so it is kept as it is: it opens nothing but this draft.
    previewToken: text('preview_token'),
    // The content rendered to HTML for readers, once per version of the post (null until first needed).
    html: text('html'),
    readingTime: integer('reading_time'),
    // Whether the post's first publication mails it to the site's subscribers (when its newsletters are on).
    sendNewsletter: boolean('send_newsletter').notNull().default(true),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('posts_site_slug_unique').on(t.siteId, t.slug),
    uniqueIndex('posts_source_task_unique').on(t.sourceTaskId),
    // Lists page through this index alone (it holds the status filters), newest first:
    // creation times are unique per site, so its order is the list's without a sort.
    index('posts_site_list_idx').on(t.siteId, t.createdAt, t.isDraft, t.visibility),
    // The public site lists published public posts newest first by publication.
    index('posts_site_public_idx').on(t.siteId, t.isDraft, t.visibility, t.publishedAt),
    uniqueIndex('posts_preview_token_unique').on(t.previewToken),
  ],
);

/**
 * What a post's title, description and content were at each save (the last 50 per post kept,
 * see src/revisions), with who saved them (a user id; null for an API key).
 */
export const postRevisions = defineTable(
  'post_revisions',
  {
    id: text('id').primaryKey(),
    postId: text('post_id')
      .notNull()
      .references(() => posts.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    content: text('content'),
    authorId: text('author_id'),
    // What made it: a save of the post, of its pending change, or a restore.
    kind: text('kind', { enum: ['save', 'pending', 'restore'] }).notNull(),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [index('post_revisions_post_idx').on(t.postId, t.createdAt)],
);

/**
 * The edits of a published post waiting for "Update" (one per post): readers keep the live
 * text until the edits are applied by a PATCH of the post, which clears this row.
 */
export const postPendingChanges = defineTable('post_pending_changes', {
  postId: text('post_id')
    .primaryKey()
    .references(() => posts.columns.id, { onDelete: 'cascade' }),
  siteId: text('site_id').notNull(),
  title: text('title').notNull(),
  description: text('description'),
  content: text('content'),
  authorId: text('author_id'),
  updatedAt: timestamp('updated_at').notNull(),
});

/**
 * The highest `-N` suffix given to a slug base on a site, so the next colliding title finds its
 * slug in one indexed lookup however many posts share the base (a blog in Chinese, where every
 * title slugs to `post`).
 */
export const slugCounters = defineTable(
  'slug_counters',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    base: text('base').notNull(),
    last: integer('last').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.base] })],
);

/** A site's posts by state, kept by every post write: an unfiltered list page counts nothing. */
export const postCounts = defineTable('post_counts', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.columns.id, { onDelete: 'cascade' }),
  drafts: integer('drafts').notNull().default(0),
  public: integer('public').notNull().default(0),
  unlisted: integer('unlisted').notNull().default(0),
});

/** Slugs a published post had before: their URLs redirect (301) to the post's current slug. */
export const postSlugRedirects = defineTable(
  'post_slug_redirects',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    postId: text('post_id')
      .notNull()
      .references(() => posts.columns.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.slug] }), index('post_slug_redirects_post_idx').on(t.postId)],
);

export const knowledgeFiles = defineTable(
  'knowledge_files',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    extension: text('extension').notNull(),
    mediaType: text('media_type').notNull(),
    sizeBytes: bigInteger('size_bytes').notNull(),
    status: text('status', { enum: KNOWLEDGE_STATUSES }).notNull(),
    error: text('error'),
    chunkCount: integer('chunk_count').notNull().default(0),
    storageKey: text('storage_key').notNull(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('knowledge_site_created_idx').on(t.siteId, t.createdAt), index('knowledge_status_idx').on(t.status)],
);

export const knowledgeChunks = defineTable(
  'knowledge_chunks',
  {
    id: identity('id'),
    fileId: text('file_id')
      .notNull()
      .references(() => knowledgeFiles.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    ordinal: integer('ordinal').notNull(),
    text: text('text').notNull(),
  },
  (t) => [index('knowledge_chunks_file_idx').on(t.fileId), index('knowledge_chunks_site_idx').on(t.siteId)],
);

/**
 * A chunk's embedding (OLLAMA_EMBED_MODEL; SQLite keeps its direction in int8); `model` says
 * which model made it, so a changed model re-embeds the chunks whose vector is another's. Goes
 * with its chunk.
 */
export const knowledgeEmbeddings = defineTable(
  'knowledge_embeddings',
  {
    chunkId: bigInteger('chunk_id')
      .notNull()
      .references(() => knowledgeChunks.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    model: text('model').notNull(),
    vector: vector('vector').notNull(),
    createdAt: timestamp('created_at').notNull(),
  },
  // A table-level key: SQLite's integer column key would be optional on insert, PostgreSQL's not.
  (t) => [primaryKey({ columns: [t.chunkId] }), index('knowledge_embeddings_site_model_idx').on(t.siteId, t.model)],
);

/**
 * The job queue: a job has a `kind`, naming the handler that runs it, and a JSON payload. The
 * queue's mechanics (claim, lease, heartbeat, backoff, attempts, cancel) know nothing else;
 * `group_id` and `position` keep jobs submitted together (a batch) together and in order.
 */
export const jobs = defineTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    groupId: text('group_id'),
    position: integer('position').notNull().default(0),
    payload: json('payload').$type<unknown>().notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull(),
    scheduledFor: timestamp('scheduled_for').notNull(),
    // When the job may next be claimed: scheduledFor at first, later pushed out by backoff.
    runAfter: timestamp('run_after').notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    // Times the job was put off because what it needs (a generator) was unavailable.
    waits: integer('waits').notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until'),
    startedAt: timestamp('started_at'),
    finishedAt: timestamp('finished_at'),
    lastError: text('last_error'),
    // What the kind's handler recorded on success (for post generation: the post's id).
    result: json('result').$type<unknown>(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    index('jobs_claim_idx').on(t.status, t.runAfter),
    index('jobs_site_kind_group_idx').on(t.siteId, t.kind, t.groupId),
    index('jobs_site_kind_created_idx').on(t.siteId, t.kind, t.createdAt),
    // A loop that runs only some kinds (webhook deliveries, beside generation) claims through this.
    index('jobs_kind_claim_idx').on(t.kind, t.status, t.runAfter),
  ],
);

/**
 * Webhook endpoints of a site. The signing secret is kept in clear (it signs every delivery);
 * after a rotation the previous one also signs until `previous_secret_expires_at`.
 * `failing_since` is the first failed attempt since the last success: an endpoint failing for
 * a day in a row is disabled, with `disabled_at` and `disabled_reason` saying so.
 */
export const webhooks = defineTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description'),
    events: json('events').$type<WebhookEvent[]>().notNull(),
    enabled: boolean('enabled').notNull(),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at'),
    failingSince: timestamp('failing_since'),
    disabledAt: timestamp('disabled_at'),
    disabledReason: text('disabled_reason'),
    lastSuccessAt: timestamp('last_success_at'),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('webhooks_site_created_idx').on(t.siteId, t.createdAt)],
);

/**
 * One event for one endpoint (the outbox): written in the transaction of the change that
 * causes it, with the exact body every attempt sends. Its id is the `webhook-id` header, the
 * same on every attempt. Each attempt is a job of kind `webhook-delivery` (`job_id`: the
 * latest); `retry_until` ends the retries (a day after it was queued or retried by hand).
 */
export const webhookDeliveries = defineTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.columns.id, { onDelete: 'cascade' }),
    event: text('event').$type<WebhookEvent>().notNull(),
    // The exact body every attempt sends, byte for byte: text, never re-serialised JSON.
    payload: text('payload').notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    jobId: text('job_id'),
    retryUntil: timestamp('retry_until').notNull(),
    nextAttemptAt: timestamp('next_attempt_at'),
    lastAttemptAt: timestamp('last_attempt_at'),
    lastResponseStatus: integer('last_response_status'),
    lastError: text('last_error'),
    lastDurationMs: integer('last_duration_ms'),
    deliveredAt: timestamp('delivered_at'),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('webhook_deliveries_webhook_created_idx').on(t.webhookId, t.createdAt), index('webhook_deliveries_created_idx').on(t.createdAt)],
);

/** Every attempt of a delivery: when, how long, the receiver's status and answer, or the error. */
export const webhookAttempts = defineTable(
  'webhook_attempts',
  {
    id: identity('id'),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.columns.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    error: text('error'),
    outcome: text('outcome', { enum: ['succeeded', 'retry', 'failed'] }).notNull(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attempt)],
);

/**
 * Answers kept for Idempotency-Key retries, per site and key, until `expires_at` (a day after
 * the first request). `fingerprint` is a hash of that request (route and body) that a retry
 * must match. Requests still running are known to the process alone (one server per data
 * folder), so a crash frees their keys.
 */
export const idempotencyKeys = defineTable(
  'idempotency_keys',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    responseStatus: integer('response_status').notNull(),
    responseType: text('response_type'),
    responseBody: text('response_body').notNull(),
    createdAt: timestamp('created_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
);

/*
 * Staff accounts (people sign in; programs keep API keys). Emails are stored folded to lower
 * case; a user without a password (null hash) has a setup link pending.
 */
export const users = defineTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    // argon2id (PHC string); null until the user sets one through a setup link.
    passwordHash: text('password_hash'),
    // The name readers see on the posts the user wrote (null: none shown).
    displayName: text('display_name'),
    createdAt: timestamp('created_at').notNull(),
    passwordChangedAt: timestamp('password_changed_at'),
  },
  (t) => [uniqueIndex('users_email_unique').on(t.email)],
);

/** Which sites a user belongs to, and as what: `owner`, `editor`, `author` or `contributor`. */
export const memberships = defineTable(
  'memberships',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['owner', 'editor', 'author', 'contributor'] }).notNull(),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.siteId] }), index('memberships_site_idx').on(t.siteId)],
);

/** Signed-in sessions: only the SHA-256 hash of the cookie's token is stored. */
export const sessions = defineTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.columns.id, { onDelete: 'cascade' }),
    // The site the user works on now (switched with PUT /api/v1/auth/session/site).
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at').notNull(),
    lastSeenAt: timestamp('last_seen_at').notNull(),
    // The absolute end (SESSION_MAX_DAYS after sign-in); the idle end is last_seen_at + SESSION_IDLE_HOURS.
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [uniqueIndex('sessions_token_hash_unique').on(t.tokenHash), index('sessions_user_idx').on(t.userId)],
);

/** One-time links: set a first password (`setup`) or a new one (`reset`); only the hash is stored. */
export const accountTokens = defineTable(
  'account_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.columns.id, { onDelete: 'cascade' }),
    purpose: text('purpose', { enum: ['setup', 'reset'] }).notNull(),
    createdAt: timestamp('created_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
    usedAt: timestamp('used_at'),
  },
  (t) => [index('account_tokens_user_idx').on(t.userId)],
);

/**
 * Invitations to a site: a membership is made only when the invited person accepts with the
 * token (only its hash is stored). One per site and email; sending again replaces its token and
 * expiry. Accepted or revoked, the row goes.
 */
export const invitations = defineTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    // Folded to lower case, as users' emails.
    email: text('email').notNull(),
    role: text('role').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at').notNull(),
    // When it was last sent (re-sending moves it, and the expiry with it).
    sentAt: timestamp('sent_at').notNull(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [uniqueIndex('invitations_token_hash_unique').on(t.tokenHash), uniqueIndex('invitations_site_email_unique').on(t.siteId, t.email)],
);

/**
 * Images of a site's media library. Each is stored as its original (rotated upright, metadata
 * removed, at most 2,000 px wide) and variants at narrower widths, under
 * `<site_id>/media/<id>/<file>`, file names carrying a hash of the content (served immutable).
 */
export const media = defineTable(
  'media',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    // The stored original's file name: `<name>-<hash>.<ext>`.
    file: text('file').notNull(),
    // What the uploader called it, made safe (shown in the library).
    name: text('name').notNull(),
    format: text('format', { enum: IMAGE_FORMATS }).notNull(),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    alt: text('alt').notNull().default(''),
    // Every stored file of the image together (original and variants): what it takes of the quota.
    sizeBytes: bigInteger('size_bytes').notNull(),
    variants: json('variants').$type<ImageVariant[]>().notNull(),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [index('media_site_created_idx').on(t.siteId, t.createdAt)],
);

/*
 * Analytics (src/analytics): daily aggregates per site and day (YYYY-MM-DD in the site's time
 * zone), written in batches by every instance as increments, so instances' counts add up. No
 * address or user agent is stored: a visitor is a hash of the day's random salt with site, address
 * and agent, kept only while its day may still be counted.
 */

/** A site's views and (daily unique) visitors per day. */
export const analyticsDays = defineTable(
  'analytics_days',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    views: integer('views').notNull().default(0),
    visitors: integer('visitors').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.day] }), index('analytics_days_day_idx').on(t.day)],
);

/** Views and visitors per day of each page: `page` is a post's id, or the path of an index, tag or category page ('/...'). */
export const analyticsPages = defineTable(
  'analytics_pages',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    page: text('page').notNull(),
    views: integer('views').notNull().default(0),
    visitors: integer('visitors').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.day, t.page] }), index('analytics_pages_day_idx').on(t.day)],
);

/** Views per day by where readers came from: a referrer's host, `utm_source`, or '' (direct / internal). */
export const analyticsReferrers = defineTable(
  'analytics_referrers',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    referrer: text('referrer').notNull(),
    views: integer('views').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.day, t.referrer] }), index('analytics_referrers_day_idx').on(t.day)],
);

/** The random salt of each day's visitor hashes, shared by every instance; deleted once no time zone is in that day any more. */
export const analyticsSalts = defineTable('analytics_salts', {
  day: text('day').primaryKey(),
  salt: text('salt').notNull(),
  createdAt: timestamp('created_at').notNull(),
});

/**
 * The visitors seen on a day, as keyed hashes: per site (`page` '') and per page. A hash is
 * inserted once (the first instance to insert it counts the visitor); deleted with its day's salt.
 */
export const analyticsVisitors = defineTable(
  'analytics_visitors',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    day: text('day').notNull(),
    page: text('page').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.day, t.page, t.hash] }), index('analytics_visitors_day_idx').on(t.day)],
);

/*
 * Spam guard (src/spam-guard): the key that signs its proof-of-work challenges, shared by every
 * instance; the challenges already used (each is good once), kept until they expire; and the
 * submission windows per client, keyed by a keyed hash (the address itself is never stored).
 */

/** Named secrets of the spam guard, made by the first instance that needs one. */
export const spamGuardKeys = defineTable('spam_guard_keys', {
  name: text('name').primaryKey(),
  secret: text('secret').notNull(),
  createdAt: timestamp('created_at').notNull(),
});

/** Challenges already answered: a second answer to one is a replay. */
export const spamGuardChallenges = defineTable(
  'spam_guard_challenges',
  {
    id: text('id').primaryKey(),
    expiresAt: timestamp('expires_at').notNull(),
  },
  (t) => [index('spam_guard_challenges_expires_idx').on(t.expiresAt)],
);

/** Submissions counted per client and form in a fixed window. */
export const spamGuardWindows = defineTable(
  'spam_guard_windows',
  {
    key: text('key').primaryKey(),
    windowStart: timestamp('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [index('spam_guard_windows_start_idx').on(t.windowStart)],
);

/*
 * Newsletters (src/newsletters): a site's subscribers, and one send per published post with a
 * row per recipient, so that a send stopped anywhere resumes where it was.
 */

/**
 * A reader's address on a site (folded to lower case). `pending` until the confirmation link is
 * followed (its token kept only as a hash, until `confirm_expires_at`); `bouncing` after
 * BOUNCES_TO_STOP permanent refusals. The unsubscribe token is in every mail's links.
 */
export const subscribers = defineTable(
  'subscribers',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    status: text('status', { enum: SUBSCRIBER_STATUSES }).notNull(),
    // How consent was given (the form, the JSON API, an import by staff) and when.
    consentSource: text('consent_source', { enum: SUBSCRIBER_SOURCES }).notNull(),
    consentedAt: timestamp('consented_at'),
    unsubscribeToken: text('unsubscribe_token').notNull(),
    confirmTokenHash: text('confirm_token_hash'),
    confirmExpiresAt: timestamp('confirm_expires_at'),
    // The last confirmation mail: at most one an hour per address.
    confirmSentAt: timestamp('confirm_sent_at'),
    bounces: integer('bounces').notNull().default(0),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('subscribers_site_email_unique').on(t.siteId, t.email),
    uniqueIndex('subscribers_unsubscribe_token_unique').on(t.unsubscribeToken),
    uniqueIndex('subscribers_confirm_token_unique').on(t.confirmTokenHash),
    index('subscribers_site_status_idx').on(t.siteId, t.status, t.createdAt),
  ],
);

/** A post's newsletter: at most one per post, ever (its key), with its counts. */
export const newsletterSends = defineTable(
  'newsletter_sends',
  {
    postId: text('post_id')
      .primaryKey()
      .references(() => posts.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    status: text('status', { enum: NEWSLETTER_SEND_STATUSES }).notNull(),
    recipients: integer('recipients').notNull(),
    createdAt: timestamp('created_at').notNull(),
    finishedAt: timestamp('finished_at'),
  },
  (t) => [index('newsletter_sends_site_idx').on(t.siteId, t.createdAt)],
);

/**
 * One recipient of a send: `pending` (due at `next_attempt_at`), `sending` while a worker holds
 * it (`claimed_by` until `claimed_until`), then `sent`, `failed` or `bounced`. The address is
 * copied, so a subscriber erased meanwhile is never mailed (their row goes with them).
 */
export const newsletterRecipients = defineTable(
  'newsletter_recipients',
  {
    postId: text('post_id')
      .notNull()
      .references(() => newsletterSends.columns.postId, { onDelete: 'cascade' }),
    subscriberId: text('subscriber_id')
      .notNull()
      .references(() => subscribers.columns.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    unsubscribeToken: text('unsubscribe_token').notNull(),
    status: text('status', { enum: NEWSLETTER_RECIPIENT_STATUSES }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at').notNull(),
    claimedBy: text('claimed_by'),
    claimedUntil: timestamp('claimed_until'),
    lastError: text('last_error'),
    sentAt: timestamp('sent_at'),
  },
  (t) => [primaryKey({ columns: [t.postId, t.subscriberId] }), index('newsletter_recipients_claim_idx').on(t.postId, t.status, t.nextAttemptAt), index('newsletter_recipients_subscriber_idx').on(t.subscriberId)],
);

/**
 * Readers' comments (src/comments): per site and post, replies one level deep (a reply's parent
 * is a comment without one; deleting a comment deletes its replies). The email is kept only to
 * recognise a returning commenter, never shown, and erasable. `heldFor` says why the spam guard
 * or a rule held it (or marked it spam); `byStaff` marks a reply written as the site.
 */
export const comments = defineTable(
  'comments',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    postId: text('post_id')
      .notNull()
      .references(() => posts.columns.id, { onDelete: 'cascade' }),
    parentId: text('parent_id').references((): AnyColumnSpec => comments.columns.id, { onDelete: 'cascade' }),
    authorName: text('author_name').notNull(),
    authorEmail: text('author_email'),
    body: text('body').notNull(),
    status: text('status', { enum: COMMENT_STATUSES }).notNull(),
    heldFor: text('held_for'),
    byStaff: boolean('by_staff').notNull().default(false),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [
    index('comments_post_idx').on(t.postId, t.status, t.createdAt),
    index('comments_site_status_idx').on(t.siteId, t.status, t.createdAt),
    index('comments_site_email_idx').on(t.siteId, t.authorEmail),
    index('comments_parent_idx').on(t.parentId),
  ],
);

/**
 * The last mail staff were sent about a post's pending comments: at most one an hour per post,
 * on every instance (the slot is claimed in the transaction that keeps the comment).
 */
export const commentNotices = defineTable('comment_notices', {
  postId: text('post_id')
    .primaryKey()
    .references(() => posts.columns.id, { onDelete: 'cascade' }),
  siteId: text('site_id')
    .notNull()
    .references(() => sites.columns.id, { onDelete: 'cascade' }),
  sentAt: timestamp('sent_at').notNull(),
});

/** A person's choice of mail about pending comments on a site (none kept: on for owners, off for editors). */
export const commentMailChoices = defineTable(
  'comment_mail_choices',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.columns.id, { onDelete: 'cascade' }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.columns.id, { onDelete: 'cascade' }),
    enabled: boolean('enabled').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.siteId] })],
);
