import type { SQL } from 'drizzle-orm';
import { pgTableOf } from './pg-kit.js';
import * as tables from './tables.js';
import { sql } from './orm.js';
import { pgCore } from './pg-orm.js';

const { customType, index } = pgCore;

/*
 * The PostgreSQL tables: every one is defined in tables.ts, for SQLite too (pg-kit.ts says how
 * its columns map to PostgreSQL's types, so that rows have the same TypeScript types on both).
 * Only PostgreSQL's own columns are here: knowledge search's `tsvector`, which replaces SQLite's
 * FTS5 table (migration 0000 in drizzle/postgres defines the text search configuration and
 * functions), and the sign bits of the embeddings.
 *
 * Not in this file, on purpose (custom SQL in drizzle/postgres): the SQL functions slugify(),
 * fold() and search_text(), and a `rowid` identity column on the tables whose lists break ties
 * by SQLite's hidden rowid (posts, webhooks, webhook_deliveries). That column is no part of
 * the row types, as in SQLite, yet `rowid` in SQL means the same thing on both databases.
 * Nor the `key_changes` counter and its triggers (0004), which only PostgreSQL needs: it tells
 * instances sharing the database that their cache of API keys may be stale.
 */

/** A text search document (read as PostgreSQL prints it; written by the database only). */
const tsvector = customType<{ data: string }>({
  dataType: () => 'tsvector',
});

/** A bit string (read as PostgreSQL prints it; written by the database only). */
const varbit = customType<{ data: string }>({
  dataType: () => 'varbit',
});

/**
 * The text search configuration and preparation every knowledge search uses: documents and
 * queries both go through search_text() (case and accents folded, every character that is not
 * a letter or digit a word break, whatever the database's locale) and are stemmed as English
 * with no stopword list, like FTS5's porter tokenizer did. Queries must use the same pair:
 * `phraseto_tsquery('knowledge', search_text($1))`.
 */
export const KNOWLEDGE_SEARCH_CONFIG = 'knowledge';

export const sites = pgTableOf(tables.sites);
export const apiKeys = pgTableOf(tables.apiKeys);
export const posts = pgTableOf(tables.posts);
export const slugCounters = pgTableOf(tables.slugCounters);
export const postCounts = pgTableOf(tables.postCounts);
export const postSlugRedirects = pgTableOf(tables.postSlugRedirects);
export const postRevisions = pgTableOf(tables.postRevisions);
export const postPendingChanges = pgTableOf(tables.postPendingChanges);
export const knowledgeFiles = pgTableOf(tables.knowledgeFiles);

export const knowledgeChunks = pgTableOf(tables.knowledgeChunks, {
  columns: {
    /** The chunk's words for full-text search, kept by the database. */
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`to_tsvector(${sql.raw(`'${KNOWLEDGE_SEARCH_CONFIG}'`)}::regconfig, search_text("text"))`),
  },
  constraints: (t) => [index('knowledge_chunks_search_idx').using('gin', t.searchVector)],
});

export const knowledgeEmbeddings = pgTableOf(tables.knowledgeEmbeddings, {
  columns: {
    /** The signs of the vector, which search ranks all vectors by first (sign_bits, migration 0007). */
    signBits: varbit('sign_bits')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`sign_bits("vector")`),
  },
});

export const jobs = pgTableOf(tables.jobs);
export const webhooks = pgTableOf(tables.webhooks);
export const webhookDeliveries = pgTableOf(tables.webhookDeliveries);
export const webhookAttempts = pgTableOf(tables.webhookAttempts);
export const idempotencyKeys = pgTableOf(tables.idempotencyKeys);
export const users = pgTableOf(tables.users);
export const memberships = pgTableOf(tables.memberships);
export const sessions = pgTableOf(tables.sessions);
export const accountTokens = pgTableOf(tables.accountTokens);
export const invitations = pgTableOf(tables.invitations);
export const media = pgTableOf(tables.media);
export const analyticsDays = pgTableOf(tables.analyticsDays);
export const analyticsPages = pgTableOf(tables.analyticsPages);
export const analyticsReferrers = pgTableOf(tables.analyticsReferrers);
export const analyticsSalts = pgTableOf(tables.analyticsSalts);
export const analyticsVisitors = pgTableOf(tables.analyticsVisitors);
export const spamGuardKeys = pgTableOf(tables.spamGuardKeys);
export const spamGuardChallenges = pgTableOf(tables.spamGuardChallenges);
export const spamGuardWindows = pgTableOf(tables.spamGuardWindows);
export const subscribers = pgTableOf(tables.subscribers);
export const newsletterSends = pgTableOf(tables.newsletterSends);
export const newsletterRecipients = pgTableOf(tables.newsletterRecipients);
export const comments = pgTableOf(tables.comments);
export const commentNotices = pgTableOf(tables.commentNotices);
export const commentMailChoices = pgTableOf(tables.commentMailChoices);
