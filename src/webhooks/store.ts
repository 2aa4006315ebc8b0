import { randomUUID } from 'node:crypto';
import type { KnowledgeFileRow, WebhookDeliveryRow, WebhookRow } from '../db/schema.js';
import { ask, type StepDatabase, type Steps } from '../db/steps.js';
import { conflict, notFound } from '../errors.js';
import type { JobOutcome } from '../jobs/loop.js';
import type { JobRow } from '../jobs/rules.js';
import { enqueueSteps, type AfterCommit } from '../jobs/store.js';
import { publicComment } from '../comments/view.js';
import type { CommentRow } from '../db/schema.js';
import { MAX_WEBHOOKS_PER_SITE, WEBHOOK_ATTEMPTS_SHOWN, WEBHOOK_DELIVERY_RETENTION_MS, type WebhookDeliveryStatus, type WebhookEvent } from '../limits.js';
import type { Page } from '../pagination.js';
import type { PostChange } from '../posts/rules.js';
import { GENERATE_POST } from '../tasks/generate-post.js';
import { toTask } from '../tasks/service.js';
import type { checkDestination } from './address.js';
import { knowledgeResource, postEvents, postResource, taskResource } from './payloads.js';
import type { DeliveryWithJob } from './port.js';
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

export interface WebhookStoreOptions {
  allowPrivate: boolean;
  /** First retry delay; each later one doubles, capped at WEBHOOK_RETRY_MAX_DELAY_MS, with jitter. */
  retryBaseMs: number;
  now?: () => number;
  random?: () => number;
  /** Told once a transaction that queued deliveries has committed: the plugin wakes the delivery loop. */
  onQueued?: () => void;
  /** Resolves a name for the check at creation (tests). */
  checkDestination?: typeof checkDestination;
  log?: { warn(obj: object, msg: string): void };
}

/** A 404 unless the endpoint is there. */
function* foundWebhook(siteId: string, webhookId: string, lock: boolean): Steps<WebhookRow> {
  const row = yield* ask('webhooks', 'findWebhook', siteId, webhookId, lock);
  if (!row) throw notFound('webhook');
  return row;
}

/**
 * Webhook endpoints of each site, the outbox of their deliveries and the bookkeeping of every
 * attempt, on either database. Deliveries are written in the transaction of the change that
 * causes them: its listeners' steps (`postChanged`, `taskSettled`, `knowledgeSettled`). Each
 * attempt is a job of kind `webhook-delivery`, whose outcome (and the next attempt, if any)
 * commits in one transaction (`recordAttempt`). The clock is the one given, never the database's.
 */
export class WebhookStore {
  private readonly now: () => number;
  private readonly random: () => number;
  /** Set while a wake of the delivery loop waits for a commit: one wake serves every delivery queued meanwhile. */
  private wakeDue = false;

  constructor(
    private readonly db: StepDatabase,
    private readonly options: WebhookStoreOptions,
    /** How the database runs a callback after the transaction under way has committed. */
    private readonly afterCommit: AfterCommit,
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
    return this.db.write(function* () {
      const n = yield* ask('webhooks', 'countLockingSite', siteId);
      if (n >= MAX_WEBHOOKS_PER_SITE) throw conflict(`A site has at most ${MAX_WEBHOOKS_PER_SITE} webhooks: delete one first`);
      yield* ask('webhooks', 'insertWebhook', row);
      return row;
    });
  }

  get(siteId: string, webhookId: string): Promise<WebhookRow> {
    return this.db.read(() => foundWebhook(siteId, webhookId, false));
  }

  list(siteId: string, page: number, limit: number): Promise<Page<WebhookRow>> {
    return this.db.read(function* () {
      const { total, rows } = yield* ask('webhooks', 'webhookPage', siteId, (page - 1) * limit, limit);
      return { items: rows, pagination: { page, limit, total, pages: Math.ceil(total / limit) } };
    });
  }

  /**
   * Changes url, events, description or enabled. Enabling clears a disabled endpoint's
   * failure record (its failed deliveries can then be retried); disabling stops new
   * deliveries, and queued ones fail when their turn comes.
   */
  async update(siteId: string, webhookId: string, patch: WebhookPatch): Promise<WebhookRow> {
    const url = patch.url === undefined ? undefined : await cleanUrl(patch.url, this.options);
    const events = patch.events === undefined ? undefined : cleanEvents(patch.events);
    const description = cleanDescription(patch.description);
    const now = new Date(this.now());
    return this.db.write(function* () {
      const row = yield* foundWebhook(siteId, webhookId, true);
      const changes = webhookChanges(row, { url, events, description, enabled: patch.enabled }, now);
      yield* ask('webhooks', 'updateWebhook', row.id, changes);
      return { ...row, ...changes };
    });
  }

  /** Deletes the endpoint with its deliveries and their attempts; queued attempts find nothing to send. */
  async delete(siteId: string, webhookId: string): Promise<void> {
    const deleted = await this.db.read(() => ask('webhooks', 'deleteWebhook', siteId, webhookId));
    if (!deleted) throw notFound('webhook');
  }

  /**
   * A new signing secret. The previous one keeps signing (a second signature in the same
   * header) for WEBHOOK_PREVIOUS_SECRET_TTL_MS, so receivers can switch without losing events.
   */
  rotateSecret(siteId: string, webhookId: string): Promise<WebhookRow> {
    const now = this.now();
    return this.db.write(function* () {
      const row = yield* foundWebhook(siteId, webhookId, true);
      const changes = rotatedSecret(row, now);
      yield* ask('webhooks', 'updateWebhook', row.id, changes);
      return { ...row, ...changes };
    });
  }

  // ---- the outbox ------------------------------------------------------------------------

  /** Wakes the delivery loop once the transaction under way has committed (once for all it queued). */
  private queued(): void {
    const { onQueued } = this.options;
    if (!onQueued || this.wakeDue) return;
    this.wakeDue = true;
    this.afterCommit(() => {
      this.wakeDue = false;
      onQueued();
    });
  }

  /**
   * Queues one delivery per enabled endpoint of the site that subscribes to the event, with its
   * attempt job, in the caller's transaction: the event is delivered if and only if the change
   * commits.
   */
  private *emit(hooks: readonly WebhookRow[], siteId: string, type: WebhookEvent, data: Record<string, unknown>, at: Date): Steps<number> {
    const targets = hooks.filter((hook) => hook.events.includes(type));
    if (targets.length === 0) return 0;
    const site = yield* ask('webhooks', 'siteName', siteId);
    if (!site) return 0;
    const body = eventBody(type, at, data, site);
    const now = this.now();
    const ids = targets.map(() => randomUUID());
    const attemptJobs = yield* enqueueSteps(
      siteId,
      targets.map((hook, i) => deliveryJob(ids[i]!, hook.id, now)),
      DELIVERY_JOB_ATTEMPTS,
      new Date(now),
    );
    yield* ask(
      'webhooks',
      'insertDeliveries',
      targets.map((hook, i) => newDeliveryRow(ids[i]!, hook, type, body, attemptJobs[i]!.id, now)),
    );
    this.queued();
    return targets.length;
  }

  /** A post was created, edited, published, unpublished or deleted (steps inside its transaction). */
  *postChanged(change: PostChange): Steps<void> {
    const hooks = yield* ask('webhooks', 'subscribed', change.siteId);
    if (hooks.length === 0) return;
    for (const event of postEvents(change)) {
      yield* this.emit(hooks, change.siteId, event.type, { post: postResource(event.post), ...(event.previous ? { previous: event.previous } : {}) }, change.at);
    }
  }

  /** A batch task succeeded or failed for good (steps inside the transaction that records it). */
  *taskSettled(job: JobRow, outcome: JobOutcome): Steps<void> {
    if (job.kind !== GENERATE_POST) return;
    const at = new Date(this.now());
    const settled: JobRow =
      outcome.status === 'succeeded'
        ? { ...job, status: 'succeeded', result: outcome.result, lastError: null, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null }
        : { ...job, status: 'failed', lastError: outcome.error, finishedAt: at, updatedAt: at, leaseOwner: null, leaseUntil: null };
    const type = outcome.status === 'succeeded' ? 'task.succeeded' : 'task.failed';
    yield* this.emit(yield* ask('webhooks', 'subscribed', job.siteId), job.siteId, type, { task: taskResource(toTask(settled)) }, at);
  }

  /** A knowledge file was indexed or failed (steps inside the transaction that marks it). */
  *knowledgeSettled(file: KnowledgeFileRow): Steps<void> {
    if (file.status !== 'indexed' && file.status !== 'failed') return;
    const type = file.status === 'indexed' ? 'knowledge.indexed' : 'knowledge.failed';
    yield* this.emit(yield* ask('webhooks', 'subscribed', file.siteId), file.siteId, type, { knowledge: knowledgeResource(file) }, file.updatedAt);
  }

  /** A post's newsletter was sent to all its recipients (steps inside the transaction that finishes it). */
  *newsletterSent(siteId: string, newsletter: { postId: string } & Record<string, unknown>): Steps<void> {
    const hooks = yield* ask('webhooks', 'subscribed', siteId);
    if (hooks.length === 0) return;
    yield* this.emit(hooks, siteId, 'newsletter.sent', { newsletter }, new Date(this.now()));
  }

  /** A reader's comment was created (with its status) or approved: what readers may see of it, never its email. */
  *commentEvent(type: 'comment.created' | 'comment.approved', comment: CommentRow, post: { id: string; title: string; slug: string }): Steps<void> {
    const status = comment.status === 'approved' ? 'approved' : 'pending';
    yield* this.emit(yield* ask('webhooks', 'subscribed', comment.siteId), comment.siteId, type, { comment: { ...publicComment(comment), status }, post }, new Date(this.now()));
  }

  // ---- attempts --------------------------------------------------------------------------

  /** What an attempt job sends, or why it sends nothing (deleted, retried by another job, disabled). */
  attemptTarget(deliveryId: string, jobId: string): Promise<AttemptTarget | Extract<AttemptOutcome, { skip: string }>> {
    const now = this.now;
    return this.db.read(function* () {
      const delivery = yield* ask('webhooks', 'delivery', deliveryId, false);
      const current = delivery && delivery.status === 'pending' && delivery.jobId === jobId;
      const hook = current ? yield* ask('webhooks', 'webhook', delivery.webhookId, false) : undefined;
      return attemptTargetOf(delivery, hook, jobId, now());
    });
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
  *recordAttempt(job: JobRow, outcome: AttemptOutcome): Steps<unknown> {
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const delivery = yield* ask('webhooks', 'delivery', deliveryId, true);
    if (!delivery || delivery.status !== 'pending' || delivery.jobId !== job.id) return { skipped: 'superseded' };
    const now = this.now();
    if ('skip' in outcome) {
      if (outcome.skip !== 'disabled') return { skipped: outcome.skip };
      yield* settleDelivery(delivery, `Not sent: ${outcome.reason}`, now);
      return { skipped: 'disabled' };
    }
    const hook = yield* ask('webhooks', 'webhook', delivery.webhookId, true);
    const decision = decideAttempt(delivery, hook, outcome, now, (attempt) => this.retryDelayMs(attempt));
    const { health } = decision;
    if (hook && health.kind === 'healthy') {
      yield* ask('webhooks', 'markHealthy', hook.id, now);
    } else if (hook && health.kind === 'disabled') {
      yield* ask('webhooks', 'updateWebhook', hook.id, disabledChanges(health.failingSince, health.reason, now));
      this.options.log?.warn({ webhookId: hook.id, siteId: hook.siteId, failingSince: health.failingSince }, 'webhook disabled after a day of failed deliveries');
    } else if (hook && health.kind === 'failing') {
      yield* ask('webhooks', 'markFailing', hook.id, health.failingSince.getTime());
    }
    yield* ask('webhooks', 'insertAttempt', attemptRow(deliveryId, decision, outcome));
    let jobId = delivery.jobId;
    if (decision.nextAt !== null) {
      [{ id: jobId }] = yield* enqueueSteps(delivery.siteId, [deliveryJob(deliveryId, delivery.webhookId, decision.nextAt)], DELIVERY_JOB_ATTEMPTS, new Date(now));
    }
    yield* ask('webhooks', 'recordAttempt', deliveryId, deliveryAfterAttempt(decision, outcome, jobId, now));
    return { attempt: decision.attempt, outcome: decision.verdict, status: outcome.result.status };
  }

  /** An attempt job failed for good by itself (internal errors, crashes): its delivery fails with it. */
  *attemptJobFailed(job: JobRow, outcome: JobOutcome): Steps<void> {
    if (job.kind !== WEBHOOK_DELIVERY || outcome.status !== 'failed') return;
    const { deliveryId } = job.payload as DeliveryJobPayload;
    const delivery = yield* ask('webhooks', 'delivery', deliveryId, true);
    if (delivery?.status === 'pending' && delivery.jobId === job.id) yield* settleDelivery(delivery, `Delivery stopped: ${outcome.error}`, this.now());
  }

  // ---- deliveries as the API shows them ----------------------------------------------------

  deliveries(siteId: string, webhookId: string, query: { page: number; limit: number; status?: WebhookDeliveryStatus }): Promise<Page<DeliveryView>> {
    const { page, limit, status } = query;
    return this.db.read(function* () {
      yield* foundWebhook(siteId, webhookId, false);
      const { total, rows } = yield* ask('webhooks', 'deliveryPage', webhookId, status, (page - 1) * limit, limit);
      const attempts = rows.length ? yield* ask('webhooks', 'attemptsOf', rows.map((row) => row.delivery.id), null) : [];
      const byDelivery = attemptsByDelivery(attempts);
      return {
        items: rows.map(({ delivery, jobStatus, jobError }) => deliveryView(delivery, jobStatus, jobError, byDelivery.get(delivery.id) ?? [])),
        pagination: { page, limit, total, pages: Math.ceil(total / limit) },
      };
    });
  }

  /**
   * Sends a finished delivery again now, with the same webhook-id and body (a new signature
   * and timestamp), retried as before for another day. 409 while it is still queued or while
   * its webhook is disabled. The delivery, then its endpoint, are locked while it is queued again.
   */
  async retryDelivery(siteId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    const now = this.now();
    const queued = () => this.queued();
    await this.db.write(function* () {
      const current = yield* viewOf(siteId, webhookId, deliveryId, true);
      const hook = yield* foundWebhook(siteId, webhookId, true);
      const refusal = redeliveryRefusal(hook, current);
      if (refusal) throw conflict(refusal);
      const [job] = yield* enqueueSteps(siteId, [deliveryJob(deliveryId, webhookId, now)], DELIVERY_JOB_ATTEMPTS, new Date(now));
      yield* ask('webhooks', 'updateDelivery', deliveryId, redeliveryChanges(job!.id, now));
      queued();
    });
    return this.db.read(() => viewOf(siteId, webhookId, deliveryId, false));
  }

  /** Forgets finished deliveries (and their attempts and attempt jobs) older than the retention. */
  purge(): Promise<number> {
    const cutoff = this.now() - WEBHOOK_DELIVERY_RETENTION_MS;
    return this.db.read(function* () {
      const removed = yield* ask('webhooks', 'purgeDeliveries', cutoff);
      yield* ask('jobs', 'purgeFinished', WEBHOOK_DELIVERY, cutoff);
      return removed;
    });
  }
}

function* settleDelivery(delivery: WebhookDeliveryRow, error: string, now: number): Steps<void> {
  yield* ask('webhooks', 'updateDelivery', delivery.id, settledChanges(error, now));
}

/** One delivery as the API shows it, with its latest attempts; `lock`ed while it is queued again. */
function* viewOf(siteId: string, webhookId: string, deliveryId: string, lock: boolean): Steps<DeliveryView> {
  const row: DeliveryWithJob | undefined = yield* ask('webhooks', 'deliveryWithJob', siteId, webhookId, deliveryId, lock);
  if (!row) throw notFound('delivery');
  const attempts = yield* ask('webhooks', 'attemptsOf', [deliveryId], WEBHOOK_ATTEMPTS_SHOWN);
  return deliveryView(row.delivery, row.jobStatus, row.jobError, attempts.map(attemptView));
}
