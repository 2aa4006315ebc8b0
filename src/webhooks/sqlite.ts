import { driverRow, placeholderRow, prepared, type Executor } from '../db/sqlite.js';
import { jobs, sites, webhookAttempts, webhookDeliveries, webhooks } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import type { WebhookPort } from './port.js';
import { and, count, desc, eq, inArray, lt, ne, sql } from '../db/orm.js';

/*
 * The webhook store's statements as SQLite spells them: one writer at a time, so no locks.
 * What runs on every post change and every attempt is prepared once per connection; times are
 * bound as epoch milliseconds.
 */

const p = (name: string) => sql`${sql.placeholder(name)}`;
const byId = (column: typeof webhooks.id | typeof webhookDeliveries.id) => eq(column, sql.placeholder('id'));

const subscribedStatement = (db: Executor) =>
  db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.siteId, sql.placeholder('siteId')), eq(webhooks.enabled, true)))
    .prepare();
const siteNameStatement = (db: Executor) =>
  db
    .select({ id: sites.id, name: sites.name })
    .from(sites)
    .where(eq(sites.id, sql.placeholder('siteId')))
    .prepare();
const insertDeliveryStatement = (db: Executor) => db.insert(webhookDeliveries).values(placeholderRow(webhookDeliveries)).prepare();
const deliveryStatement = (db: Executor) => db.select().from(webhookDeliveries).where(byId(webhookDeliveries.id)).prepare();
const webhookStatement = (db: Executor) => db.select().from(webhooks).where(byId(webhooks.id)).prepare();
const insertAttemptStatement = (db: Executor) => db.insert(webhookAttempts).values(placeholderRow(webhookAttempts)).prepare();
const markHealthyStatement = (db: Executor) => db.update(webhooks).set({ failingSince: null, lastSuccessAt: p('now') }).where(byId(webhooks.id)).prepare();
const markFailingStatement = (db: Executor) => db.update(webhooks).set({ failingSince: p('since') }).where(byId(webhooks.id)).prepare();
const recordAttemptStatement = (db: Executor) =>
  db
    .update(webhookDeliveries)
    .set({
      status: p('status'),
      attempts: p('attempts'),
      jobId: p('jobId'),
      nextAttemptAt: p('nextAttemptAt'),
      lastAttemptAt: p('lastAttemptAt'),
      lastResponseStatus: p('lastResponseStatus'),
      lastError: p('lastError'),
      lastDurationMs: p('lastDurationMs'),
      deliveredAt: p('deliveredAt'),
      updatedAt: p('updatedAt'),
    })
    .where(byId(webhookDeliveries.id))
    .prepare();

const ms = (date: Date | null) => date?.getTime() ?? null;

const withJob = { delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError };

export const sqliteWebhooks: SyncAdapter<WebhookPort, Executor> = {
  countLockingSite: (tx, siteId) => tx.select({ n: count() }).from(webhooks).where(eq(webhooks.siteId, siteId)).get()!.n,
  insertWebhook(tx, row) {
    tx.insert(webhooks).values(row).run();
  },
  findWebhook: (tx, siteId, webhookId) =>
    tx
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .get(),
  webhookPage(tx, siteId, offset, limit) {
    const where = eq(webhooks.siteId, siteId);
    const total = tx.select({ n: count() }).from(webhooks).where(where).get()!.n;
    const rows = tx.select().from(webhooks).where(where).orderBy(desc(webhooks.createdAt), desc(sql`rowid`)).limit(limit).offset(offset).all();
    return { total, rows };
  },
  updateWebhook(tx, webhookId, changes) {
    tx.update(webhooks).set(changes).where(eq(webhooks.id, webhookId)).run();
  },
  deleteWebhook: (tx, siteId, webhookId) =>
    tx
      .delete(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .run().changes > 0,

  subscribed: (tx, siteId) => prepared(tx, subscribedStatement).all({ siteId }),
  siteName: (tx, siteId) => prepared(tx, siteNameStatement).get({ siteId }),
  insertDeliveries(tx, rows) {
    const insert = prepared(tx, insertDeliveryStatement);
    for (const row of rows) insert.run(driverRow(webhookDeliveries, row));
  },

  delivery: (tx, deliveryId) => prepared(tx, deliveryStatement).get({ id: deliveryId }),
  webhook: (tx, webhookId) => prepared(tx, webhookStatement).get({ id: webhookId }),
  markHealthy(tx, webhookId, now) {
    prepared(tx, markHealthyStatement).run({ id: webhookId, now });
  },
  markFailing(tx, webhookId, since) {
    prepared(tx, markFailingStatement).run({ id: webhookId, since });
  },
  insertAttempt(tx, row) {
    prepared(tx, insertAttemptStatement).run(driverRow(webhookAttempts, row));
  },
  recordAttempt(tx, deliveryId, changes) {
    prepared(tx, recordAttemptStatement).run({
      ...changes,
      id: deliveryId,
      nextAttemptAt: ms(changes.nextAttemptAt),
      lastAttemptAt: ms(changes.lastAttemptAt),
      deliveredAt: ms(changes.deliveredAt),
      updatedAt: ms(changes.updatedAt),
    });
  },
  updateDelivery(tx, deliveryId, changes) {
    tx.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, deliveryId)).run();
  },

  deliveryPage(tx, webhookId, status, offset, limit) {
    const where = and(eq(webhookDeliveries.webhookId, webhookId), status ? eq(webhookDeliveries.status, status) : undefined);
    const total = tx.select({ n: count() }).from(webhookDeliveries).where(where).get()!.n;
    const rows = tx
      .select(withJob)
      .from(webhookDeliveries)
      .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(sql`${webhookDeliveries}.rowid`))
      .limit(limit)
      .offset(offset)
      .all();
    return { total, rows };
  },
  deliveryWithJob: (tx, siteId, webhookId, deliveryId) =>
    tx
      .select(withJob)
      .from(webhookDeliveries)
      .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.siteId, siteId)))
      .get(),
  attemptsOf(tx, deliveryIds, limit) {
    const query = tx
      .select()
      .from(webhookAttempts)
      .where(inArray(webhookAttempts.deliveryId, [...deliveryIds]))
      .orderBy(desc(webhookAttempts.attempt));
    return limit === null ? query.all() : query.limit(limit).all();
  },
  purgeDeliveries: (tx, before) =>
    tx
      .delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.createdAt, new Date(before)), ne(webhookDeliveries.status, 'pending')))
      .run().changes,
};
