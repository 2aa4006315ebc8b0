import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { jobs, sites, webhookAttempts, webhookDeliveries, webhooks, type KnowledgeFileRow, type WebhookDeliveryRow, type WebhookRow } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import type { JobOutcome } from '../jobs/loop.js';
import type { JobQueue, JobRow } from '../jobs/queue.js';
import { MAX_WEBHOOKS_PER_SITE, WEBHOOK_ATTEMPTS_SHOWN, WEBHOOK_DELIVERY_RETENTION_MS, WEBHOOK_RETRY_WINDOW_MS, type WebhookDeliveryStatus, type WebhookEvent } from '../limits.js';
import { paginate, type Page } from '../pagination.js';
import type { PostChange } from '../posts/store.js';
import { GENERATE_POST } from '../tasks/generate-post.js';
import { toTask } from '../tasks/service.js';
import type { checkDestination } from './address.js';
import { knowledgeResource, postEvents, postResource, taskResource } from './payloads.js';
import {
  DELIVERY_JOB_ATTEMPTS,
  WEBHOOK_DELIVERY,
  attemptTargetOf,
  attemptView,
  attemptsByDelivery,
  cleanDescription,
  cleanEvents,
  cleanUrl,
  decideAttempt,
  deliveryJob,
  deliveryView,
  disabledChanges,
  eventBody,
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

export type { WebhookRow };
export {
  DELIVERY_JOB_ATTEMPTS,
  WEBHOOK_DELIVERY,
  type AttemptOutcome,
  type AttemptTarget,
  type DeliveryAttemptView,
  type DeliveryJobPayload,
  type DeliveryView,
  type WebhookInput,
  type WebhookPatch,
} from './rules.js';

export interface WebhookServiceOptions {
  allowPrivate: boolean;
  /** First retry delay; each later one doubles, capped at WEBHOOK_RETRY_MAX_DELAY_MS, with jitter. */
  retryBaseMs: number;
  now?: () => number;
  random?: () => number;
  /** Told (inside the transaction) whenever deliveries were queued: the plugin wakes the delivery loop after the commit. */
  onQueued?: () => void;
  /** Resolves a name for the check at creation (tests). */
  checkDestination?: typeof checkDestination;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * Webhook endpoints of each site, the outbox of their deliveries and the bookkeeping of every
 * attempt. Deliveries are written in the transaction of the change that causes them
 * (`postChanged`, `taskSettled`, `knowledgeSettled`); each attempt is a job of kind
 * `webhook-delivery`, whose outcome (and the next attempt, if any) commits in one transaction.
 */
export class WebhookService {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly subscribed;
  private readonly siteName;
  // The delivery path runs these for every event and attempt: prepared once.
  private readonly deliveryById;
  private readonly webhookById;
  private readonly insertDelivery;
  private readonly insertAttempt;
  private readonly updateAfterAttempt;
  private readonly markHealthy;
  private readonly markFailing;

  constructor(
    private readonly db: Executor,
    private readonly queue: JobQueue,
    private readonly options: WebhookServiceOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    // Run on every post change: prepared once.
    this.subscribed = db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.siteId, sql.placeholder('siteId')), eq(webhooks.enabled, true)))
      .prepare();
    this.siteName = db
      .select({ id: sites.id, name: sites.name })
      .from(sites)
      .where(eq(sites.id, sql.placeholder('siteId')))
      .prepare();
    const p = (name: string) => sql`${sql.placeholder(name)}`;
    this.deliveryById = db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, sql.placeholder('id'))).prepare();
    this.webhookById = db.select().from(webhooks).where(eq(webhooks.id, sql.placeholder('id'))).prepare();
    this.insertDelivery = db
      .insert(webhookDeliveries)
      .values({
        id: p('id'),
        siteId: p('siteId'),
        webhookId: p('webhookId'),
        event: p('event'),
        payload: p('payload'),
        status: 'pending',
        attempts: 0,
        jobId: p('jobId'),
        retryUntil: p('retryUntil'),
        nextAttemptAt: p('now'),
        createdAt: p('now'),
        updatedAt: p('now'),
      })
      .prepare();
    this.insertAttempt = db
      .insert(webhookAttempts)
      .values({
        deliveryId: p('deliveryId'),
        attempt: p('attempt'),
        startedAt: p('startedAt'),
        durationMs: p('durationMs'),
        responseStatus: p('responseStatus'),
        responseBody: p('responseBody'),
        error: p('error'),
        outcome: p('outcome'),
      })
      .prepare();
    this.updateAfterAttempt = db
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
        updatedAt: p('now'),
      })
      .where(eq(webhookDeliveries.id, sql.placeholder('id')))
      .prepare();
    this.markHealthy = db
      .update(webhooks)
      .set({ failingSince: null, lastSuccessAt: p('now') })
      .where(eq(webhooks.id, sql.placeholder('id')))
      .prepare();
    this.markFailing = db
      .update(webhooks)
      .set({ failingSince: p('failingSince') })
      .where(eq(webhooks.id, sql.placeholder('id')))
      .prepare();
  }

  // ---- endpoints -------------------------------------------------------------------------

  private cleanUrl(raw: string): Promise<string> {
    return cleanUrl(raw, this.options);
  }

  /** A new endpoint with a new secret (the one answer that shows it, with rotate). */
  async create(siteId: string, input: WebhookInput): Promise<WebhookRow> {
    const url = await this.cleanUrl(input.url);
    const events = cleanEvents(input.events);
    const description = cleanDescription(input.description) ?? null;
    const row = newWebhookRow(siteId, { url, events, description, enabled: input.enabled }, new Date(this.now()));
    return this.db.transaction((tx) => {
      const { n } = tx.select({ n: count() }).from(webhooks).where(eq(webhooks.siteId, siteId)).get()!;
      if (n >= MAX_WEBHOOKS_PER_SITE) throw conflict(`A site has at most ${MAX_WEBHOOKS_PER_SITE} webhooks: delete one first`);
      tx.insert(webhooks).values(row).run();
      return row;
    });
  }

  private find(db: Executor, siteId: string, webhookId: string): WebhookRow {
    const row = db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .get();
    if (!row) throw notFound('webhook');
    return row;
  }

  async get(siteId: string, webhookId: string): Promise<WebhookRow> {
    return this.find(this.db, siteId, webhookId);
  }

  async list(siteId: string, page: number, limit: number): Promise<Page<WebhookRow>> {
    const where = eq(webhooks.siteId, siteId);
    return paginate(
      page,
      limit,
      () => this.db.select({ n: count() }).from(webhooks).where(where).get()!.n,
      (offset, size) => this.db.select().from(webhooks).where(where).orderBy(desc(webhooks.createdAt), desc(sql`rowid`)).limit(size).offset(offset).all(),
    );
  }

  /**
   * Changes url, events, description or enabled. Enabling clears a disabled endpoint's
   * failure record (its failed deliveries can then be retried); disabling stops new
   * deliveries, and queued ones fail when their turn comes.
   */
  async update(siteId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRow> {
    const url = patch.url === undefined ? undefined : await this.cleanUrl(patch.url);
    const events = patch.events === undefined ? undefined : cleanEvents(patch.events);
    const description = cleanDescription(patch.description);
    return this.db.transaction((tx) => {
      const row = this.find(tx, siteId, webhookId);
      const changes = webhookChanges(row, { url, events, description, enabled: patch.enabled }, new Date(this.now()));
      tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id)).run();
      return { ...row, ...changes };
    });
  }

  /** Deletes the endpoint with its deliveries and their attempts; queued attempts find nothing to send. */
  async delete(siteId: string, webhookId: string): Promise<void> {
    const { changes } = this.db
      .delete(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.siteId, siteId)))
      .run();
    if (changes === 0) throw notFound('webhook');
  }

  /**
   * A new signing secret. The previous one keeps signing (a second signature in the same
   * header) for WEBHOOK_PREVIOUS_SECRET_TTL_MS, so receivers can switch without losing events.
   */
  async rotateSecret(siteId: string, webhookId: string): Promise<WebhookRow> {
    return this.db.transaction((tx) => {
      const row = this.find(tx, siteId, webhookId);
      const changes = rotatedSecret(row, this.now());
      tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id)).run();
      return { ...row, ...changes };
    });
  }

  // ---- the outbox ------------------------------------------------------------------------

  /** Enabled endpoints of a site (one indexed read, run on every post change). */
  private endpoints(siteId: string): WebhookRow[] {
    return this.subscribed.all({ siteId });
  }

  /**
   * Queues one delivery per enabled endpoint of the site that subscribes to the event, in the
   * caller's transaction: the event is delivered if and only if the change commits.
   */
  private emit(tx: Executor, hooks: readonly WebhookRow[], siteId: string, type: WebhookEvent, data: Record<string, unknown>, at: Date): number {
    const targets = hooks.filter((hook) => hook.events.includes(type));
    if (targets.length === 0) return 0;
    const site = this.siteName.get({ siteId });
    if (!site) return 0;
    const body = eventBody(type, at, data, site);
    const now = this.now();
    for (const hook of targets) this.queueDelivery(tx, hook, type, body, now);
    this.options.onQueued?.();
    return targets.length;
  }

  private queueDelivery(tx: Executor, hook: WebhookRow, event: WebhookEvent, body: string, now: number): void {
    const id = randomUUID();
    const [job] = this.queue.enqueue(hook.siteId, [deliveryJob(id, hook.id, now)], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
    this.insertDelivery.run({ id, siteId: hook.siteId, webhookId: hook.id, event, payload: body, jobId: job.id, retryUntil: now + WEBHOOK_RETRY_WINDOW_MS, now });
  }

  /** A post was created, edited, published, unpublished or deleted (inside its transaction). */
  postChanged(tx: Executor, change: PostChange): void {
    const hooks = this.endpoints(change.siteId);
    if (hooks.length === 0) return;
    for (const event of postEvents(change)) {
      this.emit(tx, hooks, change.siteId, event.type, { post: postResource(event.post), ...(event.previous ? { previous: event.previous } : {}) }, change.at);
    }
  }

  /** A batch task succeeded or failed for good (inside the transaction that records it). */
  taskSettled(tx: Executor, job: JobRow, outcome: JobOutcome): void {
    if (job.kind !== GENERATE_POST) return;
    const at = new Date(this.now());
    const settled: JobRow =
      outcome.status === 'succeeded'
        ? { ...job, status: 'succeeded', result: outcome.result, lastError: null, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null }
        : { ...job, status: 'failed', lastError: outcome.error, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null };
    this.emit(tx, this.endpoints(job.siteId), job.siteId, outcome.status === 'succeeded' ? 'task.succeeded' : 'task.failed', { task: taskResource(toTask(settled)) }, at);
  }

  /** A knowledge file was indexed or failed (inside the transaction that marks it). */
  knowledgeSettled(tx: Executor, file: KnowledgeFileRow): void {
    if (file.status !== 'indexed' && file.status !== 'failed') return;
    this.emit(tx, this.endpoints(file.siteId), file.siteId, file.status === 'indexed' ? 'knowledge.indexed' : 'knowledge.failed', { knowledge: knowledgeResource(file) }, file.updatedAt);
  }

  // ---- attempts --------------------------------------------------------------------------

  /** What an attempt job sends, or why it sends nothing (deleted, retried by another job, disabled). */
  attemptTarget(deliveryId: string, jobId: string): AttemptTarget | Extract<AttemptOutcome, { skip: string }> {
    const delivery = this.deliveryById.get({ id: deliveryId });
    const hook = delivery && delivery.status === 'pending' && delivery.jobId === jobId ? this.webhookById.get({ id: delivery.webhookId }) : undefined;
    return attemptTargetOf(delivery, hook, jobId, this.now());
  }

  /** Wait before the attempt after attempt number `attempt`: base * 2^(attempt-1), capped, times a jitter in [0.5, 1). */
  retryDelayMs(attempt: number): number {
    return retryDelayMs(attempt, this.options.retryBaseMs, this.random);
  }

  /**
   * Records an attempt in the transaction that marks its job succeeded: the attempt, the
   * delivery's state, the endpoint's health (a day of failures in a row disables it) and the
   * next attempt, if any. Retries keep going until `retry_until`; the last one is made then.
   */
  recordAttempt(tx: Executor, job: JobRow, outcome: AttemptOutcome): unknown {
    const { deliveryId } = job.payload as DeliveryJobPayload;
    // Prepared statements run on the one connection, so inside the caller's transaction.
    const delivery = this.deliveryById.get({ id: deliveryId });
    if (!delivery || delivery.status !== 'pending' || delivery.jobId !== job.id) return { skipped: 'superseded' };
    const now = this.now();
    if ('skip' in outcome) {
      if (outcome.skip !== 'disabled') return { skipped: outcome.skip };
      this.settleDelivery(tx, delivery, `Not sent: ${outcome.reason}`, now);
      return { skipped: 'disabled' };
    }
    const { result, startedAt } = outcome;
    const hook = this.webhookById.get({ id: delivery.webhookId });
    const decision = decideAttempt(delivery, hook, outcome, now, (attempt) => this.retryDelayMs(attempt));
    const { attempt, verdict, error, nextAt, health } = decision;
    if (hook && health.kind === 'healthy') {
      this.markHealthy.run({ id: hook.id, now });
    } else if (hook && health.kind === 'disabled') {
      tx.update(webhooks).set(disabledChanges(health.failingSince, health.reason, now)).where(eq(webhooks.id, hook.id)).run();
      this.options.log?.warn({ webhookId: hook.id, siteId: hook.siteId, failingSince: health.failingSince }, 'webhook disabled after a day of failed deliveries');
    } else if (hook && health.kind === 'failing') {
      this.markFailing.run({ id: hook.id, failingSince: health.failingSince.getTime() });
    }
    this.insertAttempt.run({
      deliveryId,
      attempt,
      startedAt,
      durationMs: result.durationMs,
      responseStatus: result.status,
      responseBody: result.body,
      error,
      outcome: verdict,
    });
    let jobId = delivery.jobId;
    if (nextAt !== null) {
      [{ id: jobId }] = this.queue.enqueue(delivery.siteId, [deliveryJob(deliveryId, delivery.webhookId, nextAt)], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
    }
    this.updateAfterAttempt.run({
      id: deliveryId,
      status: verdict === 'retry' ? 'pending' : verdict,
      attempts: attempt,
      jobId,
      nextAttemptAt: nextAt,
      lastAttemptAt: startedAt,
      lastResponseStatus: result.status,
      lastError: verdict === 'succeeded' ? null : error,
      lastDurationMs: result.durationMs,
      deliveredAt: verdict === 'succeeded' ? now : null,
      now,
    });
    return { attempt, outcome: verdict, status: result.status };
  }

  private settleDelivery(tx: Executor, delivery: WebhookDeliveryRow, error: string, now: number): void {
    tx.update(webhookDeliveries)
      .set(settledChanges(error, now))
      .where(eq(webhookDeliveries.id, delivery.id))
      .run();
  }

  /** An attempt job failed for good by itself (internal errors, crashes): its delivery fails with it. */
  attemptJobFailed(tx: Executor, job: JobRow, outcome: JobOutcome): void {
    if (job.kind !== WEBHOOK_DELIVERY || outcome.status !== 'failed') return;
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const delivery = tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
    if (delivery?.status === 'pending' && delivery.jobId === job.id) this.settleDelivery(tx, delivery, `Delivery stopped: ${outcome.error}`, this.now());
  }

  // ---- deliveries as the API shows them ----------------------------------------------------

  async deliveries(siteId: string, webhookId: string, query: { page: number; limit: number; status?: WebhookDeliveryStatus }): Promise<Page<DeliveryView>> {
    this.find(this.db, siteId, webhookId);
    const filters = [eq(webhookDeliveries.webhookId, webhookId)];
    if (query.status) filters.push(eq(webhookDeliveries.status, query.status));
    const where = and(...filters);
    const page = paginate(
      query.page,
      query.limit,
      () => this.db.select({ n: count() }).from(webhookDeliveries).where(where).get()!.n,
      (offset, size) =>
        this.db
          .select({ delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError })
          .from(webhookDeliveries)
          .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
          .where(where)
          .orderBy(desc(webhookDeliveries.createdAt), desc(sql`${webhookDeliveries}.rowid`))
          .limit(size)
          .offset(offset)
          .all(),
    );
    const ids = page.items.map((item) => item.delivery.id);
    const attempts = ids.length
      ? this.db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, ids)).orderBy(desc(webhookAttempts.attempt)).all()
      : [];
    const byDelivery = attemptsByDelivery(attempts);
    return { items: page.items.map(({ delivery, jobStatus, jobError }) => deliveryView(delivery, jobStatus, jobError, byDelivery.get(delivery.id) ?? [])), pagination: page.pagination };
  }

  private viewOf(siteId: string, webhookId: string, deliveryId: string): DeliveryView {
    const row = this.db
      .select({ delivery: webhookDeliveries, jobStatus: jobs.status, jobError: jobs.lastError })
      .from(webhookDeliveries)
      .leftJoin(jobs, eq(jobs.id, webhookDeliveries.jobId))
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.siteId, siteId)))
      .get();
    if (!row) throw notFound('delivery');
    const attempts = this.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, deliveryId))
      .orderBy(desc(webhookAttempts.attempt))
      .limit(WEBHOOK_ATTEMPTS_SHOWN)
      .all()
      .map(attemptView);
    return deliveryView(row.delivery, row.jobStatus, row.jobError, attempts);
  }

  /**
   * Sends a finished delivery again now, with the same webhook-id and body (a new signature
   * and timestamp), retried as before for another day. 409 while it is still queued or while
   * its webhook is disabled.
   */
  async retryDelivery(siteId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    const current = this.viewOf(siteId, webhookId, deliveryId);
    this.db.transaction((tx) => {
      const hook = this.find(tx, siteId, webhookId);
      const refusal = redeliveryRefusal(hook, current);
      if (refusal) throw conflict(refusal);
      const now = this.now();
      const [job] = this.queue.enqueue(siteId, [deliveryJob(deliveryId, webhookId, now)], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
      tx.update(webhookDeliveries)
        .set(redeliveryChanges(job.id, now))
        .where(eq(webhookDeliveries.id, deliveryId))
        .run();
      this.options.onQueued?.();
    });
    return this.viewOf(siteId, webhookId, deliveryId);
  }

  /** Forgets finished deliveries (and their attempts and attempt jobs) older than the retention. */
  purge(): number {
    const cutoff = new Date(this.now() - WEBHOOK_DELIVERY_RETENTION_MS);
    const removed = this.db
      .delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.status, 'pending')))
      .run().changes;
    this.queue.purgeFinished(WEBHOOK_DELIVERY, cutoff);
    return removed;
  }
}
