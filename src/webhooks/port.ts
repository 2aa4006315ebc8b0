import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from '../db/schema.js';
import type { JobStatus, WebhookDeliveryStatus } from '../limits.js';
import type { DeliveryAfterAttempt, NewAttemptRow, NewDeliveryRow } from './rules.js';

/** A delivery with the state of its latest attempt job (null: the job is gone). */
export interface DeliveryWithJob {
  delivery: WebhookDeliveryRow;
  jobStatus: JobStatus | null;
  jobError: string | null;
}

/**
 * What the webhook store asks its database. Times are epoch milliseconds. Where several
 * instances share the database (PostgreSQL), `lock` takes the row's lock until the transaction
 * ends: deliveries `FOR UPDATE`; endpoints `FOR NO KEY UPDATE`, which does not wait on the
 * key-share locks an outbox insert (a delivery referencing the endpoint) holds until its
 * transaction ends. Locks go the delivery first, then its endpoint. SQLite's single writer
 * needs none.
 */
export interface WebhookPort {
  // ---- endpoints
  /** How many endpoints the site has; where writers run at once, creates on one site queue up here (a lock on the site). */
  countLockingSite(siteId: string): number;
  insertWebhook(row: WebhookRow): void;
  findWebhook(siteId: string, webhookId: string, lock: boolean): WebhookRow | undefined;
  /** A page of the site's endpoints, newest first, and how many it has. */
  webhookPage(siteId: string, offset: number, limit: number): { total: number; rows: WebhookRow[] };
  updateWebhook(webhookId: string, changes: Partial<WebhookRow>): void;
  /** Deletes the endpoint (its deliveries and their attempts with it); false when the site has none of that id. */
  deleteWebhook(siteId: string, webhookId: string): boolean;

  // ---- the outbox
  /** The site's enabled endpoints (run on every post change). */
  subscribed(siteId: string): WebhookRow[];
  siteName(siteId: string): { id: string; name: string } | undefined;
  insertDeliveries(rows: readonly NewDeliveryRow[]): void;

  // ---- attempts
  delivery(deliveryId: string, lock: boolean): WebhookDeliveryRow | undefined;
  webhook(webhookId: string, lock: boolean): WebhookRow | undefined;
  markHealthy(webhookId: string, now: number): void;
  markFailing(webhookId: string, since: number): void;
  insertAttempt(row: NewAttemptRow): void;
  recordAttempt(deliveryId: string, changes: DeliveryAfterAttempt): void;
  updateDelivery(deliveryId: string, changes: Partial<WebhookDeliveryRow>): void;

  // ---- deliveries as the API shows them
  /** A page of the endpoint's deliveries, newest first, and how many it has (of `status`, when given). */
  deliveryPage(webhookId: string, status: WebhookDeliveryStatus | undefined, offset: number, limit: number): { total: number; rows: DeliveryWithJob[] };
  deliveryWithJob(siteId: string, webhookId: string, deliveryId: string, lock: boolean): DeliveryWithJob | undefined;
  /** Attempts of these deliveries, newest first; at most `limit` in all when given. */
  attemptsOf(deliveryIds: readonly string[], limit: number | null): WebhookAttemptRow[];
  /** Deletes finished deliveries created before `before`; answers how many. */
  purgeDeliveries(before: number): number;
}

declare module '../db/steps.js' {
  interface Ports {
    webhooks: WebhookPort;
  }
}
