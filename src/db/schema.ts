import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { JOB_STATUSES, KNOWLEDGE_STATUSES, VISIBILITIES } from '../limits.js';

// Times are stored as epoch milliseconds so they sort and compare as integers and keep ms.
const timestamp = (name: string) => integer(name, { mode: 'timestamp_ms' });

export const sites = sqliteTable(
  'sites',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    // Public address: pages at /sites/<handle>/, and at / on the host of `url` when set.
    handle: text('handle').notNull(),
    url: text('url'),
    description: text('description'),
    language: text('language').notNull().default('en'),
    postsPerPage: integer('posts_per_page').notNull().default(10),
    // Moves with every write that can change what readers see: public pages and feeds are
    // cached per version, so a write invalidates them at once, on every instance.
    contentVersion: integer('content_version').notNull().default(0),
    contentUpdatedAt: timestamp('content_updated_at'),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [uniqueIndex('sites_handle_unique').on(t.handle)],
);

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    // First characters of the key, enough to recognise it in a list; never the whole key.
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    createdAt: timestamp('created_at').notNull(),
    revokedAt: timestamp('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.hash), index('api_keys_site_idx').on(t.siteId)],
);

export const posts = sqliteTable(
  'posts',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    title: text('title').notNull(),
    description: text('description'),
    content: text('content'),
    category: text('category'),
    tags: text('tags', { mode: 'json' }).$type<string[]>().notNull().default(sql`'[]'`),
    authorId: text('author_id'),
    isDraft: integer('is_draft', { mode: 'boolean' }).notNull(),
    visibility: text('visibility', { enum: VISIBILITIES }).notNull().default('public'),
    publishedAt: timestamp('published_at'),
    // Which generator wrote the post (null for posts written by a client).
    generatorProvider: text('generator_provider'),
    generatorModel: text('generator_model'),
    // The batch task that generated this post: unique, so a task can never make two posts.
    sourceTaskId: text('source_task_id'),
    // The content rendered to HTML for readers, once per version of the post (null until first needed).
    html: text('html'),
    readingTime: integer('reading_time'),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('posts_site_slug_unique').on(t.siteId, t.slug),
    uniqueIndex('posts_source_task_unique').on(t.sourceTaskId),
    // Lists count and page through this index alone (it holds the status filters), newest
    // first, with its hidden rowid breaking ties in insertion order.
    index('posts_site_list_idx').on(t.siteId, t.createdAt, t.isDraft, t.visibility),
    // The public site lists published public posts newest first by publication.
    index('posts_site_public_idx').on(t.siteId, t.isDraft, t.visibility, t.publishedAt),
  ],
);

/**
 * The highest `-N` suffix given to a slug base on a site, so the next colliding title finds its
 * slug in one indexed lookup however many posts share the base (a blog in Chinese, where every
 * title slugs to `post`).
 */
export const slugCounters = sqliteTable(
  'slug_counters',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    base: text('base').notNull(),
    last: integer('last').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.base] })],
);

/** A site's posts by state, kept by every post write: an unfiltered list page counts nothing. */
export const postCounts = sqliteTable('post_counts', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  drafts: integer('drafts').notNull().default(0),
  public: integer('public').notNull().default(0),
  unlisted: integer('unlisted').notNull().default(0),
});

/** Slugs a published post had before: their URLs redirect (301) to the post's current slug. */
export const postSlugRedirects = sqliteTable(
  'post_slug_redirects',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    postId: text('post_id')
      .notNull()
      .references(() => posts.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.siteId, t.slug] }), index('post_slug_redirects_post_idx').on(t.postId)],
);

export const knowledgeFiles = sqliteTable(
  'knowledge_files',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    extension: text('extension').notNull(),
    mediaType: text('media_type').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    status: text('status', { enum: KNOWLEDGE_STATUSES }).notNull(),
    error: text('error'),
    chunkCount: integer('chunk_count').notNull().default(0),
    storageKey: text('storage_key').notNull(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('knowledge_site_created_idx').on(t.siteId, t.createdAt), index('knowledge_status_idx').on(t.status)],
);

export const knowledgeChunks = sqliteTable(
  'knowledge_chunks',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    fileId: text('file_id')
      .notNull()
      .references(() => knowledgeFiles.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    ordinal: integer('ordinal').notNull(),
    text: text('text').notNull(),
  },
  (t) => [index('knowledge_chunks_file_idx').on(t.fileId), index('knowledge_chunks_site_idx').on(t.siteId)],
);

/**
 * The job queue: a job has a `kind`, naming the handler that runs it, and a JSON payload. The
 * queue's mechanics (claim, lease, heartbeat, backoff, attempts, cancel) know nothing else;
 * `group_id` and `position` keep jobs submitted together (a batch) together and in order.
 */
export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    groupId: text('group_id'),
    position: integer('position').notNull().default(0),
    payload: text('payload', { mode: 'json' }).$type<unknown>().notNull(),
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
    result: text('result', { mode: 'json' }).$type<unknown>(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    index('jobs_claim_idx').on(t.status, t.runAfter),
    index('jobs_site_kind_group_idx').on(t.siteId, t.kind, t.groupId),
    index('jobs_site_kind_created_idx').on(t.siteId, t.kind, t.createdAt),
  ],
);

export type Site = typeof sites.$inferSelect;
export type PostRow = typeof posts.$inferSelect;
export type KnowledgeFileRow = typeof knowledgeFiles.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
