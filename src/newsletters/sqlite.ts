import { placeholderRow, prepared, type Executor } from '../db/sqlite.js';
import { newsletterRecipients, newsletterSends, subscribers } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { NewsletterPort } from './port.js';
import { and, asc, count, desc, eq, gt, gte, inArray, like, lt, min, or, sql } from '../db/orm.js';

/*
 * The newsletter store's statements as SQLite spells them: one writer at a time, so no locks;
 * a claim is one UPDATE ... RETURNING. The settle run once per message sent is prepared once
 * per connection, its times bound as epoch milliseconds.
 */

// SQLite binds at most 32,766 parameters; a subscriber row has 13 columns.
const ROWS_PER_INSERT = 500;

const settleStatement = (db: Executor) => {
  const r = newsletterRecipients;
  const { status, lastError, sentAt, nextAttemptAt } = placeholderRow(r);
  return db
    .update(r)
    .set({ status, lastError, sentAt, nextAttemptAt, claimedBy: null, claimedUntil: null })
    .where(and(eq(r.postId, sql.placeholder('postId')), eq(r.subscriberId, sql.placeholder('subscriberId')), eq(r.claimedBy, sql.placeholder('owner')), eq(r.status, 'sending')))
    .prepare();
};

/** `%`, `_` and `\` of the searched text match themselves. */
export const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export const sqliteNewsletters: SyncAdapter<NewsletterPort, Executor> = {
  subscriberByEmail: (tx, siteId, email) =>
    tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), eq(subscribers.email, email)))
      .get(),
  subscriberById: (tx, siteId, subscriberId) =>
    tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), eq(subscribers.id, subscriberId)))
      .get(),
  subscriberByConfirmHash: (tx, hash) => tx.select().from(subscribers).where(eq(subscribers.confirmTokenHash, hash)).get(),
  subscriberByUnsubscribeToken: (tx, token) => tx.select().from(subscribers).where(eq(subscribers.unsubscribeToken, token)).get(),
  insertSubscribers(tx, rows) {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) tx.insert(subscribers).values(rows.slice(i, i + ROWS_PER_INSERT)).run();
  },
  updateSubscriber(tx, subscriberId, changes) {
    tx.update(subscribers).set(changes).where(eq(subscribers.id, subscriberId)).run();
  },
  deleteSubscriber: (tx, siteId, subscriberId) =>
    tx
      .delete(subscribers)
      .where(and(eq(subscribers.siteId, siteId), eq(subscribers.id, subscriberId)))
      .run().changes > 0,
  subscriberPage(tx, siteId, status, q, offset, limit) {
    const where = and(eq(subscribers.siteId, siteId), status ? eq(subscribers.status, status) : undefined, q ? like(subscribers.email, sql`${likePattern(q)} escape '\\'`) : undefined);
    const total = tx.select({ n: count() }).from(subscribers).where(where).get()!.n;
    const rows = tx.select().from(subscribers).where(where).orderBy(desc(subscribers.createdAt), asc(subscribers.id)).limit(limit).offset(offset).all();
    return { total, rows };
  },
  subscribersByStatus: (tx, siteId) => tx.select({ status: subscribers.status, n: count() }).from(subscribers).where(eq(subscribers.siteId, siteId)).groupBy(subscribers.status).all(),
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
      )
      .all(),
  subscribersAfter: (tx, siteId, afterId, limit) =>
    tx
      .select()
      .from(subscribers)
      .where(and(eq(subscribers.siteId, siteId), gt(subscribers.id, afterId)))
      .orderBy(asc(subscribers.id))
      .limit(limit)
      .all(),
  existingEmails(tx, siteId, emails) {
    const found: string[] = [];
    for (let i = 0; i < emails.length; i += ROWS_PER_INSERT) {
      const rows = tx
        .select({ email: subscribers.email })
        .from(subscribers)
        .where(and(eq(subscribers.siteId, siteId), inArray(subscribers.email, emails.slice(i, i + ROWS_PER_INSERT))))
        .all();
      found.push(...rows.map((row) => row.email));
    }
    return found;
  },
  purgeExpired: (tx, before) =>
    tx
      .delete(subscribers)
      .where(and(eq(subscribers.status, 'pending'), lt(subscribers.confirmExpiresAt, new Date(before))))
      .run().changes,
  countBounce(tx, subscriberId, threshold, now) {
    tx.update(subscribers)
      .set({
        bounces: sql`${subscribers.bounces} + 1`,
        status: sql`case when ${subscribers.bounces} + 1 >= ${threshold} and ${subscribers.status} = 'active' then 'bouncing' else ${subscribers.status} end`,
        updatedAt: new Date(now),
      })
      .where(eq(subscribers.id, subscriberId))
      .run();
  },

  insertSend: (tx, row) => tx.insert(newsletterSends).values(row).onConflictDoNothing().run().changes > 0,
  insertRecipients: (tx, siteId, postId, now) =>
    tx.run(sql`insert into newsletter_recipients (post_id, subscriber_id, email, unsubscribe_token, status, attempts, next_attempt_at)
      select ${postId}, id, email, unsubscribe_token, 'pending', 0, ${now} from subscribers where site_id = ${siteId} and status = 'active'`).changes,
  setRecipients(tx, postId, recipients) {
    tx.update(newsletterSends).set({ recipients }).where(eq(newsletterSends.postId, postId)).run();
  },
  send: (tx, siteId, postId) =>
    tx
      .select()
      .from(newsletterSends)
      .where(and(eq(newsletterSends.siteId, siteId), eq(newsletterSends.postId, postId)))
      .get(),
  sendCounts(tx, postId) {
    const counts = { pending: 0, sending: 0, sent: 0, failed: 0, bounced: 0 };
    const rows = tx.select({ status: newsletterRecipients.status, n: count() }).from(newsletterRecipients).where(eq(newsletterRecipients.postId, postId)).groupBy(newsletterRecipients.status).all();
    for (const { status, n } of rows) counts[status] = n;
    return counts;
  },
  claimRecipients(tx, postId, owner, limit, now, until, takeAll) {
    const r = newsletterRecipients;
    // The due pending recipients, read in the claim index's order, and the claims that ran out
    // (or, taking all, every other owner's), each part limited: neither reads more rows than it
    // takes, where one query over both had to read and sort every due recipient of the send per
    // batch.
    const lapsed = takeAll ? sql`claimed_by <> ${owner}` : sql`claimed_until < ${now}`;
    const due = sql`select subscriber_id from (
        select * from (select subscriber_id, next_attempt_at from newsletter_recipients
          where post_id = ${postId} and status = 'pending' and next_attempt_at <= ${now} order by next_attempt_at limit ${limit})
        union all
        select * from (select subscriber_id, next_attempt_at from newsletter_recipients
          where post_id = ${postId} and status = 'sending' and ${lapsed} limit ${limit})
      ) order by next_attempt_at limit ${limit}`;
    return tx
      .update(r)
      .set({ status: 'sending', claimedBy: owner, claimedUntil: new Date(until), attempts: sql`${r.attempts} + 1` })
      .where(and(eq(r.postId, postId), sql`${r.subscriberId} in (${due})`))
      .returning()
      .all();
  },
  extendClaims(tx, postId, owner, until) {
    const r = newsletterRecipients;
    tx.update(r)
      .set({ claimedUntil: new Date(until) })
      .where(and(eq(r.postId, postId), eq(r.claimedBy, owner), eq(r.status, 'sending')))
      .run();
  },
  settleRecipient: (tx, postId, subscriberId, owner, { status, lastError, sentAt, nextAttemptAt }) =>
    prepared(tx, settleStatement).run({ postId, subscriberId, owner, status, lastError, sentAt: sentAt?.getTime() ?? null, nextAttemptAt: nextAttemptAt.getTime() }).changes > 0,
  nextDue(tx, postId) {
    const r = newsletterRecipients;
    const pending = tx.select({ at: min(r.nextAttemptAt) }).from(r).where(and(eq(r.postId, postId), eq(r.status, 'pending'))).get()?.at ?? null;
    const claimed = tx.select({ at: min(r.claimedUntil) }).from(r).where(and(eq(r.postId, postId), eq(r.status, 'sending'))).get()?.at ?? null;
    const times = [pending, claimed].filter((at): at is Date => at !== null).map((at) => at.getTime());
    return times.length ? Math.min(...times) : null;
  },
  finishSend: (tx, postId, now) =>
    tx
      .update(newsletterSends)
      .set({ status: 'sent', finishedAt: new Date(now) })
      .where(and(eq(newsletterSends.postId, postId), eq(newsletterSends.status, 'sending')))
      .run().changes > 0,
};
