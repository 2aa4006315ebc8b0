import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import { jobs, sites, webhookAttempts, webhookDeliveries, webhooks } from '../db/pg-schema.js';
import type { PgExecutor } from '../db/postgres.js';
import type { KnowledgeFileRow, WebhookDeliveryRow, WebhookRow } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import type { JobOutcome } from '../jobs/loop.js';
import type { JobRow, PgJobQueue } from '../jobs/pg-queue.js';
import { MAX_WEBHOOKS_PER_SITE, WEBHOOK_ATTEMPTS_SHOWN, WEBHOOK_DELIVERY_RETENTION_MS, type WebhookDeliveryStatus, type WebhookEvent } from '../limits.js';
import { paginateAsync, type Page } from '../pagination.js';
import type { PostChange } from '../posts/store.js';
import { GENERATE_POST } from '../tasks/generate-post.js';
import { toTask } from '../tasks/service.js';
import { knowledgeResource, postEvents, postResource, taskResource } from './payloads.js';
import {
  DELIVERY_JOB_ATTEMPTS,
  WEBHOOK_DELIVERY,
  attemptRow,
  attemptTargetOf,
  attemptView,
  attemptsByDelivery,
  cleanDescription,
  cleanEvents,
  cleanUrl,
  decideAttempt,
  deliveryAfterAttempt,
  deliveryJob,
  deliveryView,
  disabledChanges,
  eventBody,
  newDeliveryRow,
  newWebhookRow,
  redeliveryChanges,
  redeliveryRefusal,
  retryDelayMs,
  rotatedSecret,
  settledChanges,
  webhookChanges,
  type AttemptOutcome,
  type AttemptTarget,
  type DeliveryJobPayload,
  type DeliveryView,
  type WebhookInput,
  type WebhookPatch,
} from './rules.js';
import type { WebhookServiceOptions } from './service.js';

export type PgWebhookStoreOptions = WebhookServiceOptions;

// Newest first, as on SQLite: ties broken by the `rowid` column both databases have.
const WEBHOOK_ORDER = [desc(webhooks.createdAt), desc(sql`${webhooks}.rowid`)];
const DELIVERY_ORDER = [desc(webhookDeliveries.createdAt), desc(sql`${webhookDeliveries}.rowid`)];

/**
 * The PostgreSQL twin of WebhookService's database part (service.ts): endpoints, the outbox,
 * attempt bookkeeping, delivery listing and redelivery, with the same rules (rules.ts) and the
 * same clock (`now` given, never the database's); each method answers a promise. Sending and
 * signing (sender.ts, signing.ts, delivery.ts) are shared as they are.
 *
 * Several instances may share the database, so where SQLite relies on its single writer this
 * relies on row locks: creating an endpoint locks its site's row (the per-site limit holds
 * under concurrent creates); changing an endpoint locks its row; recording an attempt or
 * redelivering locks the delivery, then its endpoint (always in that order). Endpoint rows are
 * locked `FOR NO KEY UPDATE`, which does not wait on the key-share locks that an outbox insert
 * (a delivery referencing the endpoint) holds until the caller's transaction ends.
 */
export class PgWebhookStore {
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly db: PgExecutor,
    private readonly queue: PgJobQueue,
    private readonly options: PgWebhookStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  // ---- endpoints -------------------------------------------------------------------------

  /** A new endpoint with a new secret (the one answer that shows it, with rotate). */
  async create(siteId: string, input: WebhookInput): Promise<WebhookRow> {
    const url = await cleanUrl(input.url, this.options);
    const events = cleanEvents(input.events);
    const description = cleanDescription(input.description) ?? null;
    const row = newWebhookRow(siteId, { url, events, description, enabled: input.enabled }, new Date(this.now()));
    return this.db.transaction(async (tx) => {
      // Creates on one site wait for each other here, so that the count below stays true.
      await tx.select({ id: sites.id }).from(sites).where(eq(sites.id, siteId)).for('no key update');
      const [{ n }] = await tx.select({ n: count() }).from(webhooks).where(eq(webhooks.siteId, siteId));
      if (n >= MAX_WEBHOOKS_PER_SITE) throw conflict(`A site has at most ${MAX_WEBHOOKS_PER_SITE} webhooks: delete one first`);
      await tx.insert(webhooks).values(row);
      return row;
    });
  }

  private async find(db: PgExecutor, siteId: string, webhookId: string, lock = false): Promise<WebhookRow> {
    const query = db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)));
    const [row] = lock ? await query.for('no key update') : await query;
    if (!row) throw notFound('webhook');
    return row;
  }

  get(siteId: string, webhookId: string): Promise<WebhookRow> {
    return this.find(this.db, siteId, webhookId);
  }

  list(siteId: string, page: number, limit: number): Promise<Page<WebhookRow>> {
    const where = eq(webhooks.siteId, siteId);
    return paginateAsync(
      page,
      limit,
      async () => (await this.db.select({ n: count() }).from(webhooks).where(where))[0]!.n,
      (offset, size) =>
        this.db
          .select()
          .from(webhooks)
          .where(where)
          .orderBy(...WEBHOOK_ORDER)
          .limit(size)
          .offset(offset),
    );
  }

  /** As WebhookService.update. */
  async update(siteId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRow> {
    const url = patch.url === undefined ? undefined : await cleanUrl(patch.url, this.options);
    const events = patch.events === undefined ? undefined : cleanEvents(patch.events);
    const description = cleanDescription(patch.description);
    return this.db.transaction(async (tx) => {
      const row = await this.find(tx, siteId, webhookId, true);
      const changes = webhookChanges(row, { url, events, description, enabled: patch.enabled }, new Date(this.now()));
      await tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id));
      return { ...row, ...changes };
    });
  }

  /** Deletes the endpoint with its deliveries and their attempts; queued attempts find nothing to send. */
  async delete(siteId: string, webhookId: string): Promise<void> {
    const deleted = await this.db
      .delete(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .returning({ id: webhooks.id });
    if (deleted.length === 0) throw notFound('webhook');
  }

  /** As WebhookService.rotateSecret. */
  rotateSecret(siteId: string, webhookId: string): Promise<WebhookRow> {
    return this.db.transaction(async (tx) => {
      const row = await this.find(tx, siteId, webhookId, true);
      const changes = rotatedSecret(row, this.now());
      await tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id));
      return { ...row, ...changes };
    });
  }

  // ---- the outbox ------------------------------------------------------------------------

  /**
   * Queues one delivery per enabled endpoint of the site that subscribes to the event, with its
   * attempt job, in the caller's transaction: the event is delivered if and only if the change
   * commits. Reads the endpoints in that transaction too.
   */
  private async emit(tx: PgExecutor, hooks: readonly WebhookRow[], siteId: string, type: WebhookEvent, data: Record<string, unknown>, at: Date): Promise<number> {
    const targets = hooks.filter((hook) => hook.events.includes(type));
    if (targets.length === 0) return 0;
    const [site] = await tx.select({ id: sites.id, name: sites.name }).from(sites).where(eq(sites.id, siteId));
    if (!site) return 0;
    const body = eventBody(type, at, data, site);
    const now = this.now();
    const ids = targets.map(() => randomUUID());
    const queued = await this.queue.enqueue(
      siteId,
      targets.map((hook, i) => deliveryJob(ids[i]!, hook.id, now)),
      DELIVERY_JOB_ATTEMPTS,
      new Date(now),
      tx,
    );
    await tx.insert(webhookDeliveries).values(targets.map((hook, i) => newDeliveryRow(ids[i]!, hook, type, body, queued[i]!.id, now)));
    this.options.onQueued?.();
    return targets.length;
  }

  /** Enabled endpoints of a site, read in the caller's transaction. */
  private endpoints(tx: PgExecutor, siteId: string): Promise<WebhookRow[]> {
    return tx
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.siteId, siteId), eq(webhooks.enabled, true)));
  }

  /** A post was created, edited, published, unpublished or deleted (inside its transaction). */
  async postChanged(tx: PgExecutor, change: PostChange): Promise<void> {
    const hooks = await this.endpoints(tx, change.siteId);
    if (hooks.length === 0) return;
    for (const event of postEvents(change)) {
      await this.emit(tx, hooks, change.siteId, event.type, { post: postResource(event.post), ...(event.previous ? { previous: event.previous } : {}) }, change.at);
    }
  }

  /** A batch task succeeded or failed for good (inside the transaction that records it). */
  async taskSettled(tx: PgExecutor, job: JobRow, outcome: JobOutcome): Promise<void> {
    if (job.kind !== GENERATE_POST) return;
    const at = new Date(this.now());
    const settled: JobRow =
      outcome.status === 'succeeded'
        ? { ...job, status: 'succeeded', result: outcome.result, lastError: null, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null }
        : { ...job, status: 'failed', lastError: outcome.error, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null };
    const type = outcome.status === 'succeeded' ? 'task.succeeded' : 'task.failed';
    await this.emit(tx, await this.endpoints(tx, job.siteId), job.siteId, type, { task: taskResource(toTask(settled)) }, at);
  }

  /** A knowledge file was indexed or failed (inside the transaction that marks it). */
  async knowledgeSettled(tx: PgExecutor, file: KnowledgeFileRow): Promise<void> {
    if (file.status !== 'indexed' && file.status !== 'failed') return;
    const type = file.status === 'indexed' ? 'knowledge.indexed' : 'knowledge.failed';
    await this.emit(tx, await this.endpoints(tx, file.siteId), file.siteId, type, { knowledge: knowledgeResource(file) }, file.updatedAt);
  }

  // ---- attempts --------------------------------------------------------------------------

  /** What an attempt job sends, or why it sends nothing (deleted, retried by another job, disabled). */
  async attemptTarget(deliveryId: string, jobId: string): Promise<AttemptTarget | Extract<AttemptOutcome, { skip: string }>> {
    const [delivery] = await this.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
    const current = delivery && delivery.status === 'pending' && delivery.jobId === jobId;
    const [hook] = current ? await this.db.select().from(webhooks).where(eq(webhooks.id, delivery.webhookId)) : [];
    return attemptTargetOf(delivery, hook, jobId, this.now());
  }

  retryDelayMs(attempt: number): number {
    return retryDelayMs(attempt, this.options.retryBaseMs, this.random);
  }

  /** As WebhookService.recordAttempt, in the transaction that ends the attempt's job. */
  async recordAttempt(tx: PgExecutor, job: JobRow, outcome: AttemptOutcome): Promise<unknown> {
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const [delivery] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).for('update');
    if (!delivery || delivery.status !== 'pending' || delivery.jobId !== job.id) return { skipped: 'superseded' };
    const now = this.now();
    if ('skip' in outcome) {
      if (outcome.skip !== 'disabled') return { skipped: outcome.skip };
      await this.settleDelivery(tx, delivery, `Not sent: ${outcome.reason}`, now);
      return { skipped: 'disabled' };
    }
    const [hook] = await tx.select().from(webhooks).where(eq(webhooks.id, delivery.webhookId)).for('no key update');
    const decision = decideAttempt(delivery, hook, outcome, now, (attempt) => this.retryDelayMs(attempt));
    const { health } = decision;
    if (hook && health.kind === 'healthy') {
      await tx.update(webhooks).set({ failingSince: null, lastSuccessAt: new Date(now) }).where(eq(webhooks.id, hook.id));
    } else if (hook && health.kind === 'disabled') {
      await tx.update(webhooks).set(disabledChanges(health.failingSince, health.reason, now)).where(eq(webhooks.id, hook.id));
      this.options.log?.warn({ webhookId: hook.id, siteId: hook.siteId, failingSince: health.failingSince }, 'webhook disabled after a day of failed deliveries');
    } else if (hook && health.kind === 'failing') {
      await tx.update(webhooks).set({ failingSince: health.failingSince }).where(eq(webhooks.id, hook.id));
    }
    await tx.insert(webhookAttempts).values(attemptRow(deliveryId, decision, outcome));
    let jobId = delivery.jobId;
    if (decision.nextAt !== null) {
      [{ id: jobId }] = await this.queue.enqueue(delivery.siteId, [deliveryJob(deliveryId, delivery.webhookId, decision.nextAt)], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
    }
    await tx.update(webhookDeliveries).set(deliveryAfterAttempt(decision, outcome, jobId, now)).where(eq(webhookDeliveries.id, deliveryId));
    return { attempt: decision.attempt, outcome: decision.verdict, status: outcome.result.status };
  }

  private async settleDelivery(tx: PgExecutor, delivery: WebhookDeliveryRow, error: string, now: number): Promise<void> {
    await tx.update(webhookDeliveries).set(settledChanges(error, now)).where(eq(webhookDeliveries.id, delivery.id));
  }

  /** An attempt job failed for good by itself (internal errors, crashes): its delivery fails with it. */
  async attemptJobFailed(tx: PgExecutor, job: JobRow, outcome: JobOutcome): Promise<void> {
    if (job.kind !== WEBHOOK_DELIVERY || outcome.status !== 'failed') return;
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const [delivery] = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).for('update');
    if (delivery?.status === 'pending' && delivery.jobId === job.id) await this.settleDelivery(tx, delivery, `Delivery stopped: ${outcome.error}`, this.now());
  }

  // ---- deliveries as the API shows them ----------------------------------------------------

  async deliveries(siteId: string, webhookId: string, query: { page: number; limit: number; status?: WebhookDeliveryStatus }): Promise<Page<DeliveryView>> {
    await this.find(this.db, siteId, webhookId);
    const filters = [eq(webhookDeliveries.webhookId, webhookId)];
    if (query.status) filters.push(eq(webhookDeliveries.status, query.status));
    const where = and(...filters);
    const page = await paginateAsync(
      query.page,
      query.limit,
      async () => (await this.db.select({ n: count() }).from(webhookDeliveries).where(where))[0]!.n,
      (offset, size) =>
        this.db
          .select({ delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError })
          .from(webhookDeliveries)
          .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
          .where(where)
          .orderBy(...DELIVERY_ORDER)
          .limit(size)
          .offset(offset),
    );
    const ids = page.items.map((item) => item.delivery.id);
    const attempts = ids.length
      ? await this.db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, ids)).orderBy(desc(webhookAttempts.attempt))
      : [];
    const byDelivery = attemptsByDelivery(attempts);
    return { items: page.items.map(({ delivery, jobStatus, jobError }) => deliveryView(delivery, jobStatus, jobError, byDelivery.get(delivery.id) ?? [])), pagination: page.pagination };
  }

  private async viewOf(db: PgExecutor, siteId: string, webhookId: string, deliveryId: string, lock = false): Promise<DeliveryView> {
    const where = and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.siteId, siteId));
    const query = db
      .select({ delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError })
      .from(webhookDeliveries)
      .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
      .where(where);
    const [row] = lock ? await query.for('update', { of: webhookDeliveries }) : await query;
    if (!row) throw notFound('delivery');
    const attempts = await db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, deliveryId))
      .orderBy(desc(webhookAttempts.attempt))
      .limit(WEBHOOK_ATTEMPTS_SHOWN);
    return deliveryView(row.delivery, row.jobStatus, row.jobError, attempts.map(attemptView));
  }

  /** As WebhookService.retryDelivery; the delivery, then its endpoint, are locked while it is queued again. */
  async retryDelivery(siteId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    await this.db.transaction(async (tx) => {
      const current = await this.viewOf(tx, siteId, webhookId, deliveryId, true);
      const hook = await this.find(tx, siteId, webhookId, true);
      const refusal = redeliveryRefusal(hook, current);
      if (refusal) throw conflict(refusal);
      const now = this.now();
      const [job] = await this.queue.enqueue(siteId, [deliveryJob(deliveryId, webhookId, now)], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
      await tx.update(webhookDeliveries).set(redeliveryChanges(job!.id, now)).where(eq(webhookDeliveries.id, deliveryId));
      this.options.onQueued?.();
    });
    return this.viewOf(this.db, siteId, webhookId, deliveryId);
  }

  /** Forgets finished deliveries (and their attempts and attempt jobs) older than the retention. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.now() - WEBHOOK_DELIVERY_RETENTION_MS);
    const removed = await this.db
      .delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.status, 'pending')))
      .returning({ id: webhookDeliveries.id });
    await this.queue.purgeFinished(WEBHOOK_DELIVERY, cutoff);
    return removed.length;
  }
}
