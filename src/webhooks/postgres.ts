import { jobs, sites, webhookAttempts, webhookDeliveries, webhooks } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import type { WebhookPort } from './port.js';
import { and, count, desc, eq, inArray, lt, ne, sql } from '../db/orm.js';

/*
 * The webhook store's statements as PostgreSQL spells them. Several instances may share the
 * database, so where SQLite relies on its single writer these take row locks (see WebhookPort):
 * creating an endpoint locks its site's row, so that the per-site limit holds under concurrent
 * creates.
 */

// Newest first, as on SQLite: ties broken by the `rowid` column both databases have.
const WEBHOOK_ORDER = [desc(webhooks.createdAt), desc(sql`${webhooks}.rowid`)];
const DELIVERY_ORDER = [desc(webhookDeliveries.createdAt), desc(sql`${webhookDeliveries}.rowid`)];

const withJob = { delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError };

export const postgresWebhooks: AsyncAdapter<WebhookPort, PgExecutor> = {
  async countLockingSite(tx, siteId) {
    // Creates on one site wait for each other here, so that the count stays true until they commit.
    await tx.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).for('no key update');
    const [counted] = await tx.select({ n: count() }).from(webhooks).where(eq(webhooks.siteId, siteId));
    return counted!.n;
  },
  async insertWebhook(tx, row) {
    await tx.insert(webhooks).values(row);
  },
  async findWebhook(tx, siteId, webhookId, lock) {
    const query = tx
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)));
    const [row] = lock ? await query.for('no key update') : await query;
    return row;
  },
  async webhookPage(tx, siteId, offset, limit) {
    const where = eq(webhooks.siteId, siteId);
    const [[counted], rows] = await Promise.all([
      tx.select({ n: count() }).from(webhooks).where(where),
      tx
        .select()
        .from(webhooks)
        .where(where)
        .orderBy(...WEBHOOK_ORDER)
        .limit(limit)
        .offset(offset),
    ]);
    return { total: counted!.n, rows };
  },
  async updateWebhook(tx, webhookId, changes) {
    await tx.update(webhooks).set(changes).where(eq(webhooks.id, webhookId));
  },
  async deleteWebhook(tx, siteId, webhookId) {
    const deleted = await tx
      .delete(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .returning({ id: webhooks.id });
    return deleted.length > 0;
  },

  subscribed: (tx, siteId) =>
    tx
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.siteId, siteId), eq(webhooks.enabled, true))),
  async siteName(tx, siteId) {
    const [site] = await tx.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.id, siteId));
    return site;
  },
  async insertDeliveries(tx, rows) {
    if (rows.length > 0) await tx.insert(webhookDeliveries).values([...rows]);
  },

  async delivery(tx, deliveryId, lock) {
    const query = tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    const [row] = lock ? await query.for('update') : await query;
    return row;
  },
  async webhook(tx, webhookId, lock) {
    const query = tx.select().from(webhooks).where(eq(webhooks.id, webhookId));
    const [row] = lock ? await query.for('no key update') : await query;
    return row;
  },
  async markHealthy(tx, webhookId, now) {
    await tx
      .update(webhooks)
      .set({ failingSince: null, lastSuccessAt: new Date(now) })
      .where(eq(webhooks.id, webhookId));
  },
  async markFailing(tx, webhookId, since) {
    await tx
      .update(webhooks)
      .set({ failingSince: new Date(since) })
      .where(eq(webhooks.id, webhookId));
  },
  async insertAttempt(tx, row) {
    await tx.insert(webhookAttempts).values(row);
  },
  async recordAttempt(tx, deliveryId, changes) {
    await tx.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, deliveryId));
  },
  async updateDelivery(tx, deliveryId, changes) {
    await tx.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, deliveryId));
  },

  async deliveryPage(tx, webhookId, status, offset, limit) {
    const where = and(eq(webhookDeliveries.webhookId, webhookId), status ? eq(webhookDeliveries.status, status) : undefined);
    const [[counted], rows] = await Promise.all([
      tx.select({ n: count() }).from(webhookDeliveries).where(where),
      tx
        .select(withJob)
        .from(webhookDeliveries)
        .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
        .where(where)
        .orderBy(...DELIVERY_ORDER)
        .limit(limit)
        .offset(offset),
    ]);
    return { total: counted!.n, rows };
  },
  async deliveryWithJob(tx, siteId, webhookId, deliveryId, lock) {
    const query = tx
      .select(withJob)
      .from(webhookDeliveries)
      .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.siteId, siteId)));
    const [row] = lock ? await query.for('update', { of: webhookDeliveries }) : await query;
    return row;
  },
  attemptsOf(tx, deliveryIds, limit) {
    const query = tx
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, [...deliveryIds]))
      .orderBy(desc(webhookAttempts.attempt));
    return limit === null ? query : query.limit(limit);
  },
  async purgeDeliveries(tx, before) {
    const removed = await tx
      .delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.createdAt, new Date(before)), ne(webhookDeliveries.status, 'pending')))
      .returning({ id: webhookDeliveries.id });
    return removed.length;
  },
};
