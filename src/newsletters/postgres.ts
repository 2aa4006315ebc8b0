import { newsletterRecipients, newsletterSends, subscribers } from '../db/pg-schema.js';
import { namedChange, namedQuery, type PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { NewsletterPort } from './port.js';
import type { NewsletterRecipientRow } from './rules.js';
import { likePattern } from './sqlite.js';
import { and, asc, count, desc, eq, gt, gte, inArray, like, lt, min, or, sql } from '../db/orm.js';

/*
 * The newsletter store's statements as PostgreSQL spells them. Several instances may share the
 * database: a claim takes recipients with `FOR UPDATE SKIP LOCKED` in one statement, so two
 * instances never hold the same recipient, and every settle checks the claim is still its own.
 */

// Well under PostgreSQL's 65,535 parameters per statement (a subscriber row has 13 columns).
const ROWS_PER_INSERT = 2000;

/**
 * The settle run once per message: a named prepared statement, one round trip. Its transaction
 * (its own, or the caller's) commits without waiting for the log's flush: set_config(..., true)
 * lasts until that transaction ends.
 */
const SETTLE = `update newsletter_recipients
  set status = $1, last_error = $2, sent_at = $3::timestamptz, next_attempt_at = $4::timestamptz, claimed_by = null, claimed_until = null
  from (select set_config('synchronous_commit', 'off', true)) as relaxed
  where post_id = $5 and subscriber_id = $6 and claimed_by = $7 and status = 'sending'`;

/**
 * A claim, run once per batch of CLAIM_BATCH: one named statement. Its subquery locks the due
 * pending recipients, read in the claim index's order, and the claims that ran out (or, taking
 * all, every other owner's), skipping those another instance is claiming at this moment: each
 * part reads no more rows than it takes, where one query over both had to read and sort every
 * due recipient of the send per batch. `= any(array(...))` runs the subquery once and updates
 * by primary key. Built by the query builder per batch, with its rows mapped, a claim cost the
 * service about 0.08 ms of CPU per message (of 1.2) in a send.
 */
const claimOf = (lapsed: string) => `update newsletter_recipients
  set status = 'sending', claimed_by = $5, claimed_until = $6::timestamptz, attempts = attempts + 1
  where post_id = $1 and subscriber_id = any(array(
    with pending as (
      select subscriber_id, next_attempt_at from newsletter_recipients
      where post_id = $1 and status = 'pending' and next_attempt_at <= $2::timestamptz
      order by next_attempt_at limit $3 for update skip locked
    ), lapsed as (
      select subscriber_id, next_attempt_at from newsletter_recipients
      where post_id = $1 and status = 'sending' and ${lapsed}
      limit $3 for update skip locked
    )
    select subscriber_id from (select * from pending union all select * from lapsed) due order by next_attempt_at limit $3))
  returning post_id as "postId", subscriber_id as "subscriberId", email, unsubscribe_token as "unsubscribeToken", status, attempts,
    next_attempt_at as "nextAttemptAt", claimed_by as "claimedBy", claimed_until as "claimedUntil", last_error as "lastError", sent_at as "sentAt"`;
const CLAIM = claimOf('claimed_until < $4::timestamptz');
const CLAIM_ALL = claimOf('claimed_by <> $4');

export const postgresNewsletters: AsyncAdapter<NewsletterPort, PgExecutor> = {
  async subscriberByEmail(tx, siteId, email, lock) {
    const query = tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), eq(subscribers.email, email)));
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async subscriberById(tx, siteId, subscriberId) {
    const [row] = await tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), eq(subscribers.id, subscriberId)));
    return row;
  },
  async subscriberByConfirmHash(tx, hash, lock) {
    const query = tx.select().from(subscribers).where(eq(subscribers.confirmTokenHash, hash));
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async subscriberByUnsubscribeToken(tx, token, lock) {
    const query = tx.select().from(subscribers).where(eq(subscribers.unsubscribeToken, token));
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async insertSubscribers(tx, rows) {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await tx.insert(subscribers).values(rows.slice(i, i + ROWS_PER_INSERT));
  },
  async updateSubscriber(tx, subscriberId, changes) {
    await tx.update(subscribers).set(changes).where(eq(subscribers.id, subscriberId));
  },
  async deleteSubscriber(tx, siteId, subscriberId) {
    const deleted = await tx.delete(subscribers).where(and(eq(subscribers.siteId, siteId), eq(subscribers.id, subscriberId)));
    return (deleted.rowCount ?? 0) > 0;
  },
  async subscriberPage(tx, siteId, status, q, offset, limit) {
    const where = and(eq(subscribers.siteId, siteId), status ? eq(subscribers.status, status) : undefined, q ? like(subscribers.email, sql`${likePattern(q)} escape '\\'`) : undefined);
    const [[counted], rows] = await Promise.all([
      tx.select({ n: count() }).from(subscribers).where(where),
      tx.select().from(subscribers).where(where).orderBy(desc(subscribers.createdAt), asc(subscribers.id)).limit(limit).offset(offset),
    ]);
    return { total: counted!.n, rows };
  },
  subscribersByStatus: (tx, siteId) => tx.select({ status: subscribers.status, n: count() }).from(subscribers).where(eq(subscribers.siteId, siteId)).groupBy(subscribers.status),
  subscriberMoves: (tx, siteId, from, to) =>
    tx
      .select({ consentedAt: subscribers.consentedAt, status: subscribers.status, updatedAt: subscribers.updatedAt })
      .from(subscribers)
      .where(
        and(
          eq(subscribers.siteId, siteId),
          or(
            and(gte(subscribers.consentedAt, new Date(from)), lt(subscribers.consentedAt, new Date(to))),
            and(eq(subscribers.status, 'unsubscribed'), gte(subscribers.updatedAt, new Date(from)), lt(subscribers.updatedAt, new Date(to))),
          ),
        ),
      ),
  subscribersAfter: (tx, siteId, afterId, limit) =>
    tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), gt(subscribers.id, afterId)))
      .orderBy(asc(subscribers.id))
      .limit(limit),
  async existingEmails(tx, siteId, emails) {
    const found: string[] = [];
    for (let i = 0; i < emails.length; i += ROWS_PER_INSERT) {
      const rows = await tx
        .select({ email: subscribers.email })
        .from(subscribers)
        .where(and(eq(subscribers.siteId, siteId), inArray(subscribers.email, emails.slice(i, i + ROWS_PER_INSERT))));
      found.push(...rows.map((row) => row.email));
    }
    return found;
  },
  async purgeExpired(tx, before) {
    const deleted = await tx.delete(subscribers).where(and(eq(subscribers.status, 'pending'), lt(subscribers.confirmExpiresAt, new Date(before))));
    return deleted.rowCount ?? 0;
  },
  async countBounce(tx, subscriberId, threshold, now) {
    await tx
      .update(subscribers)
      .set({
        bounces: sql`${subscribers.bounces} + 1`,
        status: sql`case when ${subscribers.bounces} + 1 >= ${threshold} and ${subscribers.status} = 'active' then 'bouncing' else ${subscribers.status} end`,
        updatedAt: new Date(now),
      })
      .where(eq(subscribers.id, subscriberId));
  },

  async insertSend(tx, row) {
    const inserted = await tx.insert(newsletterSends).values(row).onConflictDoNothing();
    return (inserted.rowCount ?? 0) > 0;
  },
  async insertRecipients(tx, siteId, postId, now) {
    const inserted = await tx.execute(sql`insert into newsletter_recipients (post_id, subscriber_id, email, unsubscribe_token, status, attempts, next_attempt_at)
      select ${postId}, id, email, unsubscribe_token, 'pending', 0, ${new Date(now).toISOString()}::timestamptz from subscribers where site_id = ${siteId} and status = 'active'`);
    return inserted.rowCount ?? 0;
  },
  async setRecipients(tx, postId, recipients) {
    await tx.update(newsletterSends).set({ recipients }).where(eq(newsletterSends.postId, postId));
  },
  async send(tx, siteId, postId) {
    const [row] = await tx
      .select()
      .from(newsletterSends)
      .where(and(eq(newsletterSends.siteId, siteId), eq(newsletterSends.postId, postId)));
    return row;
  },
  async sendCounts(tx, postId) {
    const counts = { pending: 0, sending: 0, sent: 0, failed: 0, bounced: 0 };
    const rows = await tx.select({ status: newsletterRecipients.status, n: count() }).from(newsletterRecipients).where(eq(newsletterRecipients.postId, postId)).groupBy(newsletterRecipients.status);
    for (const { status, n } of rows) counts[status] = n;
    return counts;
  },
  async claimRecipients(tx, postId, owner, limit, now, until, takeAll) {
    const at = new Date(now).toISOString();
    const [name, text] = takeAll ? ['newsletter_claim_all', CLAIM_ALL] : ['newsletter_claim', CLAIM];
    return namedQuery<NewsletterRecipientRow>(tx, name, text, [postId, at, limit, takeAll ? owner : at, owner, new Date(until).toISOString()]);
  },
  async extendClaims(tx, postId, owner, until) {
    const r = newsletterRecipients;
    await tx
      .update(r)
      .set({ claimedUntil: new Date(until) })
      .where(and(eq(r.postId, postId), eq(r.claimedBy, owner), eq(r.status, 'sending')));
  },
  async settleRecipient(tx, postId, subscriberId, owner, { status, lastError, sentAt, nextAttemptAt }) {
    return (await namedChange(tx, 'newsletter_settle', SETTLE, [status, lastError, sentAt?.toISOString() ?? null, nextAttemptAt.toISOString(), postId, subscriberId, owner])) > 0;
  },
  async nextDue(tx, postId) {
    const r = newsletterRecipients;
    const [[pending], [claimed]] = await Promise.all([
      tx.select({ at: min(r.nextAttemptAt) }).from(r).where(and(eq(r.postId, postId), eq(r.status, 'pending'))),
      tx.select({ at: min(r.claimedUntil) }).from(r).where(and(eq(r.postId, postId), eq(r.status, 'sending'))),
    ]);
    const times = [pending?.at ?? null, claimed?.at ?? null].filter((at): at is Date => at !== null).map((at) => at.getTime());
    return times.length ? Math.min(...times) : null;
  },
  async finishSend(tx, postId, now) {
    const finished = await tx
      .update(newsletterSends)
      .set({ status: 'sent', finishedAt: new Date(now) })
      .where(and(eq(newsletterSends.postId, postId), eq(newsletterSends.status, 'sending')));
    return (finished.rowCount ?? 0) > 0;
  },
};
