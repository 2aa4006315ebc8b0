import { sqliteTableOf } from './sqlite-kit.js';
import * as tables from './tables.js';

// The SQLite tables: every one is defined in tables.ts, for PostgreSQL too. SQLite's full-text
// index of knowledge chunks is an FTS5 virtual table, which drizzle cannot define: it lives in
// the migrations (drizzle/0001, 0005).

export const sites = sqliteTableOf(tables.sites);
export const apiKeys = sqliteTableOf(tables.apiKeys);
export const posts = sqliteTableOf(tables.posts);
export const slugCounters = sqliteTableOf(tables.slugCounters);
export const postCounts = sqliteTableOf(tables.postCounts);
export const postSlugRedirects = sqliteTableOf(tables.postSlugRedirects);
export const postRevisions = sqliteTableOf(tables.postRevisions);
export const postPendingChanges = sqliteTableOf(tables.postPendingChanges);
export const knowledgeFiles = sqliteTableOf(tables.knowledgeFiles);
export const knowledgeChunks = sqliteTableOf(tables.knowledgeChunks);
export const knowledgeEmbeddings = sqliteTableOf(tables.knowledgeEmbeddings);
export const jobs = sqliteTableOf(tables.jobs);
export const webhooks = sqliteTableOf(tables.webhooks);
export const webhookDeliveries = sqliteTableOf(tables.webhookDeliveries);
export const webhookAttempts = sqliteTableOf(tables.webhookAttempts);
export const idempotencyKeys = sqliteTableOf(tables.idempotencyKeys);
export const users = sqliteTableOf(tables.users);
export const memberships = sqliteTableOf(tables.memberships);
export const sessions = sqliteTableOf(tables.sessions);
export const accountTokens = sqliteTableOf(tables.accountTokens);
export const invitations = sqliteTableOf(tables.invitations);
export const media = sqliteTableOf(tables.media);
export const analyticsDays = sqliteTableOf(tables.analyticsDays);
export const analyticsPages = sqliteTableOf(tables.analyticsPages);
export const analyticsReferrers = sqliteTableOf(tables.analyticsReferrers);
export const analyticsSalts = sqliteTableOf(tables.analyticsSalts);
export const analyticsVisitors = sqliteTableOf(tables.analyticsVisitors);
export const spamGuardKeys = sqliteTableOf(tables.spamGuardKeys);
export const spamGuardChallenges = sqliteTableOf(tables.spamGuardChallenges);
export const spamGuardWindows = sqliteTableOf(tables.spamGuardWindows);
export const comments = sqliteTableOf(tables.comments);
export const commentNotices = sqliteTableOf(tables.commentNotices);
export const commentMailChoices = sqliteTableOf(tables.commentMailChoices);

export type Site = typeof sites.$inferSelect;
export type PostRow = typeof posts.$inferSelect;
export type KnowledgeFileRow = typeof knowledgeFiles.$inferSelect;
export type JobRow = typeof jobs.$inferSelect;
export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type AccountTokenRow = typeof accountTokens.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;
export type MediaRow = typeof media.$inferSelect;
export type PostRevisionRow = typeof postRevisions.$inferSelect;
export type PendingChangeRow = typeof postPendingChanges.$inferSelect;

export const subscribers = sqliteTableOf(tables.subscribers);
export const newsletterSends = sqliteTableOf(tables.newsletterSends);
export const newsletterRecipients = sqliteTableOf(tables.newsletterRecipients);
export type SubscriberRow = typeof subscribers.$inferSelect;
export type NewsletterSendRow = typeof newsletterSends.$inferSelect;
export type NewsletterRecipientRow = typeof newsletterRecipients.$inferSelect;
export type CommentRow = typeof comments.$inferSelect;
