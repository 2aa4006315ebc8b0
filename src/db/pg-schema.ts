import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp as pgTimestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { JOB_STATUSES, KNOWLEDGE_STATUSES, VISIBILITIES, WEBHOOK_DELIVERY_STATUSES, type WebhookEvent } from '../limits.js';

/*
 * The PostgreSQL twin of schema.ts: the same tables, columns (names in the database and in
 * TypeScript), keys, indexes, foreign keys and defaults, chosen so that every row comes out
 * with the same TypeScript type as from SQLite, and service code can be shared:
 *
 * - times: SQLite keeps epoch milliseconds and drizzle hands out Dates; here `timestamptz(3)`,
 *   also handed out as Dates, to the millisecond (JSON `toISOString()` is byte for byte the same);
 * - JSON: `jsonb`, with the same TypeScript types (key order inside objects is not kept: nothing
 *   reads a stored object's key order);
 * - booleans: `boolean`, read as booleans as SQLite's 0/1 are;
 * - integers: `integer`, or `bigint` read as numbers where SQLite's 64 bits could matter (byte
 *   sizes, row ids that only grow);
 * - knowledge search: a generated `tsvector` column with a GIN index replaces the FTS5 table
 *   (migration 0000 in drizzle/postgres defines the text search configuration and functions).
 *
 * Not in this file, on purpose (custom SQL in drizzle/postgres): the SQL functions slugify(),
 * fold() and search_text(), and a `rowid` identity column on the tables whose lists break ties
 * by SQLite's hidden rowid (posts, webhooks, webhook_deliveries). That column is no part of
 * the row types, as in SQLite, yet `rowid` in SQL means the same thing on both databases.
 * Nor the `key_changes` counter and its triggers (0004), which only PostgreSQL needs: it tells
 * instances sharing the database that their cache of API keys may be stale.
 */

/** Dates to the millisecond, as JavaScript has them, with the time zone kept (an instant). */
const timestamp = (name: string) => pgTimestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

/** A text search document (read as PostgreSQL prints it; written by the database only). */
const tsvector = customType<{ data: string }>({
  dataType: () => 'tsvector',
});

export const sites = pgTable(
  'sites',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    handle: text('handle').notNull(),
    url: text('url'),
    domainToken: text('domain_token'),
    description: text('description'),
    language: text('language').notNull().default('en'),
    postsPerPage: integer('posts_per_page').notNull().default(10),
    contentVersion: integer('content_version').notNull().default(0),
    contentUpdatedAt: timestamp('content_updated_at'),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [uniqueIndex('sites_handle_unique').on(t.handle)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    createdAt: timestamp('created_at').notNull(),
    revokedAt: timestamp('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.hash), index('api_keys_site_idx').on(t.siteId)],
);

export const posts = pgTable(
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
    tags: jsonb('tags').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    authorId: text('author_id'),
    isDraft: boolean('is_draft').notNull(),
    visibility: text('visibility', { enum: VISIBILITIES }).notNull().default('public'),
    publishedAt: timestamp('published_at'),
    generatorProvider: text('generator_provider'),
    generatorModel: text('generator_model'),
    sourceTaskId: text('source_task_id'),
    html: text('html'),
    readingTime: integer('reading_time'),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('posts_site_slug_unique').on(t.siteId, t.slug),
    uniqueIndex('posts_source_task_unique').on(t.sourceTaskId),
    index('posts_site_list_idx').on(t.siteId, t.createdAt, t.isDraft, t.visibility),
    index('posts_site_public_idx').on(t.siteId, t.isDraft, t.visibility, t.publishedAt),
  ],
);

export const slugCounters = pgTable(
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

export const postCounts = pgTable('post_counts', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  drafts: integer('drafts').notNull().default(0),
  public: integer('public').notNull().default(0),
  unlisted: integer('unlisted').notNull().default(0),
});

export const postSlugRedirects = pgTable(
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

export const knowledgeFiles = pgTable(
  'knowledge_files',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    extension: text('extension').notNull(),
    mediaType: text('media_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    status: text('status', { enum: KNOWLEDGE_STATUSES }).notNull(),
    error: text('error'),
    chunkCount: integer('chunk_count').notNull().default(0),
    storageKey: text('storage_key').notNull(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [index('knowledge_site_created_idx').on(t.siteId, t.createdAt), index('knowledge_status_idx').on(t.status)],
);

/**
 * The text search configuration and preparation every knowledge search uses: documents and
 * queries both go through search_text() (case and accents folded, every character that is not
 * a letter or digit a word break, whatever the database's locale) and are stemmed as English
 * with no stopword list, like FTS5's porter tokenizer did. Queries must use the same pair:
 * `phraseto_tsquery('knowledge', search_text($1))`.
 */
export const KNOWLEDGE_SEARCH_CONFIG = 'knowledge';

export const knowledgeChunks = pgTable(
  'knowledge_chunks',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    fileId: text('file_id')
      .notNull()
      .references(() => knowledgeFiles.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    ordinal: integer('ordinal').notNull(),
    text: text('text').notNull(),
    /** PostgreSQL only: the chunk's words for full-text search, kept by the database. */
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`to_tsvector(${sql.raw(`'${KNOWLEDGE_SEARCH_CONFIG}'`)}::regconfig, search_text("text"))`),
  },
  (t) => [
    index('knowledge_chunks_file_idx').on(t.fileId),
    index('knowledge_chunks_site_idx').on(t.siteId),
    index('knowledge_chunks_search_idx').using('gin', t.searchVector),
  ],
);

/** A bit string (read as PostgreSQL prints it; written by the database only). */
const varbit = customType<{ data: string }>({
  dataType: () => 'varbit',
});

/** A vector of 32-bit floats: `real[]` (pgvector is not assumed; cosine is computed in SQL). */
const float32Vector = customType<{ data: Float32Array; driverData: number[] }>({
  dataType: () => 'real[]',
  toDriver: (value) => Array.from(value),
  fromDriver: (value) => Float32Array.from(value),
});

/** The twin of schema.ts' knowledge_embeddings. */
export const knowledgeEmbeddings = pgTable(
  'knowledge_embeddings',
  {
    chunkId: bigint('chunk_id', { mode: 'number' })
      .notNull()
      .references(() => knowledgeChunks.id, { onDelete: 'cascade' }),
    siteId: text('site_id').notNull(),
    model: text('model').notNull(),
    vector: float32Vector('vector').notNull(),
    createdAt: timestamp('created_at').notNull(),
    /** PostgreSQL only: the signs of the vector, which search ranks all vectors by first (sign_bits, migration 0007). */
    signBits: varbit('sign_bits')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`sign_bits("vector")`),
  },
  // A table-level key: SQLite's integer column key would be optional on insert, PostgreSQL's not.
  (t) => [primaryKey({ columns: [t.chunkId] }), index('knowledge_embeddings_site_model_idx').on(t.siteId, t.model)],
);

export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    groupId: text('group_id'),
    position: integer('position').notNull().default(0),
    payload: jsonb('payload').$type<unknown>().notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull(),
    scheduledFor: timestamp('scheduled_for').notNull(),
    runAfter: timestamp('run_after').notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    waits: integer('waits').notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until'),
    startedAt: timestamp('started_at'),
    finishedAt: timestamp('finished_at'),
    lastError: text('last_error'),
    result: jsonb('result').$type<unknown>(),
    createdAt: timestamp('created_at').notNull(),
    updatedAt: timestamp('updated_at').notNull(),
  },
  (t) => [
    index('jobs_claim_idx').on(t.status, t.runAfter),
    index('jobs_site_kind_group_idx').on(t.siteId, t.kind, t.groupId),
    index('jobs_site_kind_created_idx').on(t.siteId, t.kind, t.createdAt),
    index('jobs_kind_claim_idx').on(t.kind, t.status, t.runAfter),
  ],
);

export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description'),
    events: jsonb('events').$type<WebhookEvent[]>().notNull(),
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

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
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

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
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

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
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
