import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { jobs, sites, webhookAttempts, webhookDeliveries, webhooks, type KnowledgeFileRow, type WebhookDeliveryRow, type WebhookRow } from '../db/schema.js';
import { AppError, conflict, notFound, validationError } from '../errors.js';
import type { JobOutcome } from '../jobs/loop.js';
import type { JobQueue, JobRow } from '../jobs/queue.js';
import {
  MAX_WEBHOOKS_PER_SITE,
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  WEBHOOK_ATTEMPTS_SHOWN,
  WEBHOOK_DELIVERY_RETENTION_MS,
  WEBHOOK_DISABLE_AFTER_MS,
  WEBHOOK_PREVIOUS_SECRET_TTL_MS,
  WEBHOOK_RETRY_MAX_DELAY_MS,
  WEBHOOK_RETRY_WINDOW_MS,
  type WebhookDeliveryStatus,
  type WebhookEvent,
} from '../limits.js';
import { paginate, type Page } from '../pagination.js';
import type { PostChange } from '../posts/service.js';
import { GENERATE_POST } from '../tasks/generate-post.js';
import { toTask } from '../tasks/service.js';
import { ForbiddenAddressError, checkDestination } from './address.js';
import { knowledgeResource, postEvents, postResource, taskResource, type EventPayload } from './payloads.js';
import type { AttemptResult } from './sender.js';
import { newSecret } from './signing.js';

export type { WebhookRow };

/** The job kind of a delivery attempt: each attempt is one job, in a loop of its own. */
export const WEBHOOK_DELIVERY = 'webhook-delivery';
export interface DeliveryJobPayload {
  deliveryId: string;
}
/** Attempts of one delivery job (its own crashes or internal errors, not the receiver's answers). */
export const DELIVERY_JOB_ATTEMPTS = 5;

export interface WebhookInput {
  url: string;
  events: WebhookEvent[];
  description?: string | null;
  enabled?: boolean;
}
export type WebhookPatch = Partial<WebhookInput>;

export interface DeliveryAttemptView {
  attempt: number;
  at: Date;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  outcome: 'succeeded' | 'retry' | 'failed';
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  event: WebhookEvent;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  retryUntil: Date;
  lastAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  deliveredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The most recent attempts, newest first. */
  attemptLog: DeliveryAttemptView[];
}

/** What a delivery job's run() hands its complete(): an attempt, or why none was made. */
export type AttemptOutcome = { skip: 'gone' | 'superseded' } | { skip: 'disabled'; reason: string } | { startedAt: number; result: AttemptResult };

export interface AttemptTarget {
  url: string;
  secrets: string[];
  body: string;
}

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

const isoOrNever = (date: Date | null) => (date ? date.toISOString() : 'never');

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

  private async cleanUrl(raw: string): Promise<string> {
    const problem = (message: string) => validationError(`url ${message}`, [{ path: '/body/url', message }]);
    const text = raw.trim();
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw problem('must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw problem('must use http or https');
    if (url.username || url.password) throw problem('must not carry credentials: authenticate receivers by the signature');
    if (url.hash) throw problem('must not have a #fragment');
    if (text.length > MAX_WEBHOOK_URL_LENGTH) throw problem(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
    if (!this.options.allowPrivate) {
      try {
        await (this.options.checkDestination ?? checkDestination)(url);
      } catch (error) {
        if (error instanceof ForbiddenAddressError) throw problem(`is refused: ${error.message}`);
        throw error;
      }
    }
    return url.toString();
  }

  private static cleanDescription(description: string | null | undefined): string | null | undefined {
    if (description === undefined || description === null) return description;
    const trimmed = description.trim();
    if (trimmed.length > MAX_WEBHOOK_DESCRIPTION_LENGTH) throw validationError(`description must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`);
    return trimmed || null;
  }

  private static cleanEvents(events: readonly WebhookEvent[]): WebhookEvent[] {
    const unique = [...new Set(events)];
    if (unique.length === 0) throw validationError('events must name at least one event', [{ path: '/body/events', message: 'must name at least one event' }]);
    return unique;
  }

  /** A new endpoint with a new secret (the one answer that shows it, with rotate). */
  async create(siteId: string, input: WebhookInput): Promise<WebhookRow> {
    const url = await this.cleanUrl(input.url);
    const events = WebhookService.cleanEvents(input.events);
    const description = WebhookService.cleanDescription(input.description) ?? null;
    const now = new Date(this.now());
    const enabled = input.enabled ?? true;
    const row: WebhookRow = {
      id: randomUUID(),
      siteId,
      url,
      description,
      events,
      enabled,
      secret: newSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      failingSince: null,
      disabledAt: enabled ? null : now,
      disabledReason: enabled ? null : 'Disabled through the API',
      lastSuccessAt: null,
      createdAt: now,
      updatedAt: now,
    };
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
    const events = patch.events === undefined ? undefined : WebhookService.cleanEvents(patch.events);
    const description = WebhookService.cleanDescription(patch.description);
    return this.db.transaction((tx) => {
      const row = this.find(tx, siteId, webhookId);
      const now = new Date(this.now());
      const changes: Partial<WebhookRow> = { updatedAt: now };
      if (url !== undefined) changes.url = url;
      if (events !== undefined) changes.events = events;
      if (description !== undefined) changes.description = description;
      if (patch.enabled === true && !row.enabled) Object.assign(changes, { enabled: true, disabledAt: null, disabledReason: null, failingSince: null });
      if (patch.enabled === false && row.enabled) Object.assign(changes, { enabled: false, disabledAt: now, disabledReason: 'Disabled through the API' });
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
      const now = this.now();
      const changes = {
        secret: newSecret(),
        previousSecret: row.secret,
        previousSecretExpiresAt: new Date(now + WEBHOOK_PREVIOUS_SECRET_TTL_MS),
        updatedAt: new Date(now),
      };
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
    const payload: EventPayload = { type, timestamp: at.toISOString(), data: { ...data, site } };
    const body = JSON.stringify(payload);
    const now = this.now();
    for (const hook of targets) this.queueDelivery(tx, hook, type, body, now);
    this.options.onQueued?.();
    return targets.length;
  }

  private queueDelivery(tx: Executor, hook: WebhookRow, event: WebhookEvent, body: string, now: number): void {
    const id = randomUUID();
    const [job] = this.queue.enqueue(hook.siteId, [{ kind: WEBHOOK_DELIVERY, payload: { deliveryId: id } satisfies DeliveryJobPayload, scheduledFor: new Date(now), groupId: hook.id }], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
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
    if (!delivery) return { skip: 'gone' };
    if (delivery.status !== 'pending' || delivery.jobId !== jobId) return { skip: 'superseded' };
    const hook = this.webhookById.get({ id: delivery.webhookId });
    if (!hook) return { skip: 'gone' };
    if (!hook.enabled) return { skip: 'disabled', reason: hook.disabledReason ?? 'The webhook is disabled' };
    const previous = hook.previousSecret && hook.previousSecretExpiresAt && hook.previousSecretExpiresAt.getTime() > this.now() ? [hook.previousSecret] : [];
    return { url: hook.url, secrets: [hook.secret, ...previous], body: delivery.payload };
  }

  /** Wait before the attempt after attempt number `attempt`: base * 2^(attempt-1), capped, times a jitter in [0.5, 1). */
  retryDelayMs(attempt: number): number {
    const ceiling = Math.min(WEBHOOK_RETRY_MAX_DELAY_MS, this.options.retryBaseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(ceiling * (0.5 + this.random() / 2));
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
      this.settleDelivery(tx, delivery, 'failed', `Not sent: ${outcome.reason}`, now);
      return { skipped: 'disabled' };
    }
    const { result, startedAt } = outcome;
    const attempt = delivery.attempts + 1;
    const hook = this.webhookById.get({ id: delivery.webhookId });
    let verdict = result.verdict;
    let error = result.error;
    let nextAt: number | null = null;
    if (verdict === 'retry') {
      if (now >= delivery.retryUntil.getTime()) {
        verdict = 'failed';
        error = `${error}; gave up after ${attempt} attempts since ${delivery.createdAt.toISOString()}`;
      } else {
        // Never sooner than the receiver's Retry-After; the last attempt is made at retry_until.
        const delay = Math.max(this.retryDelayMs(attempt), result.retryAfterMs ?? 0);
        nextAt = Math.min(now + delay, delivery.retryUntil.getTime());
      }
    }
    if (hook && verdict === 'succeeded') {
      this.markHealthy.run({ id: hook.id, now });
    } else if (hook) {
      const failingSince = hook.failingSince ?? new Date(startedAt);
      if (hook.enabled && now - failingSince.getTime() >= WEBHOOK_DISABLE_AFTER_MS) {
        const reason =
          `Disabled automatically on ${new Date(now).toISOString()}: every attempt since ${failingSince.toISOString()} failed ` +
          `(last success: ${isoOrNever(hook.lastSuccessAt)}; last error: ${error}). Fix the receiver, then PATCH enabled: true and retry the failed deliveries`;
        tx.update(webhooks)
          .set({ failingSince, enabled: false, disabledAt: new Date(now), disabledReason: reason, updatedAt: new Date(now) })
          .where(eq(webhooks.id, hook.id))
          .run();
        this.options.log?.warn({ webhookId: hook.id, siteId: hook.siteId, failingSince }, 'webhook disabled after a day of failed deliveries');
        if (nextAt !== null) {
          verdict = 'failed';
          error = `${error}; the webhook was disabled`;
          nextAt = null;
        }
      } else if (!hook.failingSince) {
        this.markFailing.run({ id: hook.id, failingSince: failingSince.getTime() });
      }
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
      [{ id: jobId }] = this.queue.enqueue(delivery.siteId, [{ kind: WEBHOOK_DELIVERY, payload: { deliveryId } satisfies DeliveryJobPayload, scheduledFor: new Date(nextAt), groupId: delivery.webhookId }], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
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

  private settleDelivery(tx: Executor, delivery: WebhookDeliveryRow, status: 'failed', error: string, now: number): void {
    tx.update(webhookDeliveries)
      .set({ status, lastError: error, nextAttemptAt: null, updatedAt: new Date(now) })
      .where(eq(webhookDeliveries.id, delivery.id))
      .run();
  }

  /** An attempt job failed for good by itself (internal errors, crashes): its delivery fails with it. */
  attemptJobFailed(tx: Executor, job: JobRow, outcome: JobOutcome): void {
    if (job.kind !== WEBHOOK_DELIVERY || outcome.status !== 'failed') return;
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const delivery = tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
    if (delivery?.status === 'pending' && delivery.jobId === job.id) this.settleDelivery(tx, delivery, 'failed', `Delivery stopped: ${outcome.error}`, this.now());
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
    const byDelivery = new Map<string, DeliveryAttemptView[]>();
    for (const row of attempts) {
      const list = byDelivery.get(row.deliveryId) ?? [];
      if (list.length < WEBHOOK_ATTEMPTS_SHOWN) {
        list.push({ attempt: row.attempt, at: row.startedAt, durationMs: row.durationMs, responseStatus: row.responseStatus, responseBody: row.responseBody, error: row.error, outcome: row.outcome });
      }
      byDelivery.set(row.deliveryId, list);
    }
    return { items: page.items.map(({ delivery, jobStatus, jobError }) => this.deliveryView(delivery, jobStatus, jobError, byDelivery.get(delivery.id) ?? [])), pagination: page.pagination };
  }

  private deliveryView(row: WebhookDeliveryRow, jobStatus: string | null, jobError: string | null, attemptLog: DeliveryAttemptView[]): DeliveryView {
    // A pending delivery whose attempt job ended without recording it (it used up its own
    // attempts across crashes) has failed.
    const orphaned = row.status === 'pending' && (jobStatus === null || jobStatus === 'failed' || jobStatus === 'cancelled');
    return {
      id: row.id,
      webhookId: row.webhookId,
      event: row.event,
      status: orphaned ? 'failed' : row.status,
      attempts: row.attempts,
      nextAttemptAt: orphaned ? null : row.nextAttemptAt,
      retryUntil: row.retryUntil,
      lastAttemptAt: row.lastAttemptAt,
      lastResponseStatus: row.lastResponseStatus,
      lastError: orphaned ? `Delivery stopped: ${jobError ?? 'its attempt job is gone'}` : row.lastError,
      lastDurationMs: row.lastDurationMs,
      deliveredAt: row.deliveredAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      attemptLog,
    };
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
      .map((a) => ({ attempt: a.attempt, at: a.startedAt, durationMs: a.durationMs, responseStatus: a.responseStatus, responseBody: a.responseBody, error: a.error, outcome: a.outcome }));
    return this.deliveryView(row.delivery, row.jobStatus, row.jobError, attempts);
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
      if (!hook.enabled) throw conflict('The webhook is disabled: enable it (PATCH enabled: true) before retrying its deliveries');
      if (current.status === 'pending') {
        throw new AppError(409, 'CONFLICT', `The delivery is already queued: its next attempt is at ${current.nextAttemptAt?.toISOString() ?? 'once a worker is free'}`);
      }
      const now = this.now();
      const [job] = this.queue.enqueue(siteId, [{ kind: WEBHOOK_DELIVERY, payload: { deliveryId } satisfies DeliveryJobPayload, scheduledFor: new Date(now), groupId: webhookId }], DELIVERY_JOB_ATTEMPTS, new Date(now), tx);
      tx.update(webhookDeliveries)
        .set({ status: 'pending', jobId: job.id, retryUntil: new Date(now + WEBHOOK_RETRY_WINDOW_MS), nextAttemptAt: new Date(now), deliveredAt: null, updatedAt: new Date(now) })
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
