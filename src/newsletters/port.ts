import type { NewsletterRecipientRow, NewsletterSendRow, SubscriberRow } from '../db/schema.js';
import type { SendCounts } from './rules.js';
import type { SubscriberStatus } from './statuses.js';

/**
 * What the newsletter store asks its database. Times are epoch milliseconds. Where several
 * instances share the database (PostgreSQL), claims take recipients with `FOR UPDATE SKIP
 * LOCKED`, and `lock` takes a subscriber's row until the transaction ends; SQLite's single
 * writer needs none.
 */
export interface NewsletterPort {
  // ---- subscribers
  subscriberByEmail(siteId: string, email: string, lock: boolean): SubscriberRow | undefined;
  subscriberById(siteId: string, subscriberId: string): SubscriberRow | undefined;
  subscriberByConfirmHash(hash: string, lock: boolean): SubscriberRow | undefined;
  subscriberByUnsubscribeToken(token: string, lock: boolean): SubscriberRow | undefined;
  insertSubscribers(rows: readonly SubscriberRow[]): void;
  updateSubscriber(subscriberId: string, changes: Partial<SubscriberRow>): void;
  /** Erases the row (its recipient rows with it); false when the site has none of that id. */
  deleteSubscriber(siteId: string, subscriberId: string): boolean;
  /** A page of the site's subscribers, newest first, with how many match. */
  subscriberPage(siteId: string, status: SubscriberStatus | undefined, q: string | undefined, offset: number, limit: number): { total: number; rows: SubscriberRow[] };
  /** How many of the site's subscribers have each status (statuses with none are left out). */
  subscribersByStatus(siteId: string): { status: SubscriberStatus; n: number }[];
  /** The site's subscribers confirmed (`consentedAt`) or, still unsubscribed, unsubscribed (`updatedAt`) in [from, to). */
  subscriberMoves(siteId: string, from: number, to: number): Pick<SubscriberRow, 'consentedAt' | 'status' | 'updatedAt'>[];
  /** Up to `limit` of the site's subscribers after `afterId` in id order (the export pages through them). */
  subscribersAfter(siteId: string, afterId: string, limit: number): SubscriberRow[];
  /** Which of these addresses the site has already. */
  existingEmails(siteId: string, emails: readonly string[]): string[];
  /** Deletes pending sign-ups whose confirmation expired before `before`; answers how many. */
  purgeExpired(before: number): number;
  /** Counts a permanent refusal; the subscriber becomes `bouncing` at `threshold`. */
  countBounce(subscriberId: string, threshold: number, now: number): void;

  // ---- sends
  /** Adds the send unless the post has one; false when it had. */
  insertSend(row: NewsletterSendRow): boolean;
  /** One recipient row per active subscriber of the site; answers how many. */
  insertRecipients(siteId: string, postId: string, now: number): number;
  setRecipients(postId: string, recipients: number): void;
  send(siteId: string, postId: string): NewsletterSendRow | undefined;
  sendCounts(postId: string): SendCounts;
  /**
   * Takes up to `limit` recipients of the send that are due (`pending` with `next_attempt_at`
   * reached, or `sending` whose claim ended before `now`, or any `sending` one not held by
   * `owner` when `takeAll`): `sending`, claimed by `owner` until `until`, the attempt counted.
   */
  claimRecipients(postId: string, owner: string, limit: number, now: number, until: number, takeAll: boolean): NewsletterRecipientRow[];
  /** Moves `owner`'s claims of the send to `until`. */
  extendClaims(postId: string, owner: string, until: number): void;
  /**
   * Settles a recipient `owner` holds: sent, failed or bounced for good, or pending again at
   * `nextAttemptAt`. False: not held. One statement, run once per message: its transaction's
   * commit need not wait for the log's flush to disk (PostgreSQL's `synchronous_commit = off`
   * for that transaction; SQLite's commits are already cheap). A crash of the database server
   * itself may lose such a commit; a crash of this service never.
   */
  settleRecipient(postId: string, subscriberId: string, owner: string, changes: Pick<NewsletterRecipientRow, 'status' | 'lastError' | 'sentAt' | 'nextAttemptAt'>): boolean;
  /** The earliest `next_attempt_at` of the send's pending recipients (or claim end of its sending ones), or null when none is left. */
  nextDue(postId: string): number | null;
  /** Marks the send sent; false when it was already. */
  finishSend(postId: string, now: number): boolean;
}

declare module '../db/steps.js' {
  interface Ports {
    newsletters: NewsletterPort;
  }
}
