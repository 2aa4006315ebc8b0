import { randomUUID } from 'node:crypto';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from '../db/schema.js';
import { validationError } from '../errors.js';
import type { NewJob } from '../jobs/rules.js';
import {
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  WEBHOOK_ATTEMPTS_SHOWN,
  WEBHOOK_DISABLE_AFTER_MS,
  WEBHOOK_PREVIOUS_SECRET_TTL_MS,
  WEBHOOK_RETRY_MAX_DELAY_MS,
  WEBHOOK_RETRY_WINDOW_MS,
  type WebhookDeliveryStatus,
  type WebhookEvent,
} from '../limits.js';
import { ForbiddenAddressError, checkDestination } from './address.js';
import type { EventPayload } from './payloads.js';
import type { AttemptResult } from './sender.js';
import { newSecret } from './signing.js';

// ---------------------------------------------------------------------------------------------
// The rules of webhooks that need no database: what the store (store.ts) decides between its
// questions to the database, and the rows it writes.
// ---------------------------------------------------------------------------------------------

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

const isoOrNever = (date: Date | null) => (date ? date.toISOString() : 'never');

// ---- endpoints -----------------------------------------------------------------------------

/** An endpoint's URL as kept, or a 400 saying what is wrong with it. */
export async function cleanUrl(raw: string, options: { allowPrivate: boolean; checkDestination?: typeof checkDestination }): Promise<string> {
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
  if (url.port === '0') throw problem('must not use port 0');
  if (text.length > MAX_WEBHOOK_URL_LENGTH) throw problem(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (!options.allowPrivate) {
    try {
      await (options.checkDestination ?? checkDestination)(url);
    } catch (error) {
      if (error instanceof ForbiddenAddressError) throw problem(`is refused: ${error.message}`);
      throw error;
    }
  }
  return url.toString();
}

export function cleanDescription(description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description;
  const trimmed = description.trim();
  if (trimmed.length > MAX_WEBHOOK_DESCRIPTION_LENGTH) throw validationError(`description must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`);
  return trimmed || null;
}

export function cleanEvents(events: readonly WebhookEvent[]): WebhookEvent[] {
  const unique = [...new Set(events)];
  if (unique.length === 0) throw validationError('events must name at least one event', [{ path: '/body/events', message: 'must name at least one event' }]);
  return unique;
}

/** A new endpoint's row, with a new secret (its url, events and description already cleaned). */
export function newWebhookRow(siteId: string, input: { url: string; events: WebhookEvent[]; description: string | null; enabled?: boolean }, now: Date): WebhookRow {
  const enabled = input.enabled ?? true;
  return {
    id: randomUUID(),
    siteId,
    url: input.url,
    description: input.description,
    events: input.events,
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
}

/**
 * The changes of an update (cleaned values; undefined: unchanged). Enabling clears a disabled
 * endpoint's failure record; disabling records when and why.
 */
export function webhookChanges(
  row: WebhookRow,
  patch: { url?: string; events?: WebhookEvent[]; description?: string | null; enabled?: boolean },
  now: Date,
): Partial<WebhookRow> {
  const changes: Partial<WebhookRow> = { updatedAt: now };
  if (patch.url !== undefined) changes.url = patch.url;
  if (patch.events !== undefined) changes.events = patch.events;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.enabled === true && !row.enabled) Object.assign(changes, { enabled: true, disabledAt: null, disabledReason: null, failingSince: null });
  if (patch.enabled === false && row.enabled) Object.assign(changes, { enabled: false, disabledAt: now, disabledReason: 'Disabled through the API' });
  return changes;
}

/** A new secret; the previous one keeps signing for WEBHOOK_PREVIOUS_SECRET_TTL_MS. */
export function rotatedSecret(row: WebhookRow, now: number) {
  return {
    secret: newSecret(),
    previousSecret: row.secret,
    previousSecretExpiresAt: new Date(now + WEBHOOK_PREVIOUS_SECRET_TTL_MS),
    updatedAt: new Date(now),
  };
}

// ---- the outbox ------------------------------------------------------------------------------

/** The exact body every attempt of an event's deliveries sends. */
export function eventBody(type: WebhookEvent, at: Date, data: Record<string, unknown>, site: { id: string; name: string }): string {
  const payload: EventPayload = { type, timestamp: at.toISOString(), data: { ...data, site } };
  return JSON.stringify(payload);
}

/** The attempt job of a delivery, due at `at`. */
export function deliveryJob(deliveryId: string, webhookId: string, at: number): NewJob {
  return { kind: WEBHOOK_DELIVERY, payload: { deliveryId } satisfies DeliveryJobPayload, scheduledFor: new Date(at), groupId: webhookId };
}

/** A new pending delivery of `body` to `hook`, retried until WEBHOOK_RETRY_WINDOW_MS from now. */
export function newDeliveryRow(id: string, hook: Pick<WebhookRow, 'id' | 'siteId'>, event: WebhookEvent, body: string, jobId: string, now: number) {
  return {
    id,
    siteId: hook.siteId,
    webhookId: hook.id,
    event,
    payload: body,
    status: 'pending' as const,
    attempts: 0,
    jobId,
    retryUntil: new Date(now + WEBHOOK_RETRY_WINDOW_MS),
    nextAttemptAt: new Date(now),
    createdAt: new Date(now),
    updatedAt: new Date(now),
  };
}

export type NewDeliveryRow = ReturnType<typeof newDeliveryRow>;

/** The changes that queue a finished delivery again (redelivery), with its new attempt job. */
export function redeliveryChanges(jobId: string, now: number) {
  return { status: 'pending' as const, jobId, retryUntil: new Date(now + WEBHOOK_RETRY_WINDOW_MS), nextAttemptAt: new Date(now), deliveredAt: null, updatedAt: new Date(now) };
}

// ---- attempts --------------------------------------------------------------------------------

/** What an attempt job sends, or why it sends nothing (deleted, retried by another job, disabled). */
export function attemptTargetOf(
  delivery: WebhookDeliveryRow | undefined,
  hook: WebhookRow | undefined,
  jobId: string,
  now: number,
): AttemptTarget | Extract<AttemptOutcome, { skip: string }> {
  if (!delivery) return { skip: 'gone' };
  if (delivery.status !== 'pending' || delivery.jobId !== jobId) return { skip: 'superseded' };
  if (!hook) return { skip: 'gone' };
  if (!hook.enabled) return { skip: 'disabled', reason: hook.disabledReason ?? 'The webhook is disabled' };
  const previous = hook.previousSecret && hook.previousSecretExpiresAt && hook.previousSecretExpiresAt.getTime() > now ? [hook.previousSecret] : [];
  return { url: hook.url, secrets: [hook.secret, ...previous], body: delivery.payload };
}

/** Wait before the attempt after attempt number `attempt`: base * 2^(attempt-1), capped, times a jitter in [0.5, 1). */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number): number {
  const ceiling = Math.min(WEBHOOK_RETRY_MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/** What an attempt does to its endpoint's health record. */
export type HealthChange =
  | { kind: 'none' }
  | { kind: 'healthy' }
  | { kind: 'failing'; failingSince: Date }
  | { kind: 'disabled'; failingSince: Date; reason: string };

export interface AttemptDecision {
  attempt: number;
  verdict: 'succeeded' | 'retry' | 'failed';
  error: string | null;
  /** When the next attempt is due, if any. */
  nextAt: number | null;
  health: HealthChange;
}

/**
 * The verdict on an attempt of a pending delivery: retries keep going until `retry_until` (the
 * last one is made then, never sooner than the receiver's Retry-After); a day of failures in a
 * row disables the endpoint, and its delivery fails with it.
 */
export function decideAttempt(
  delivery: WebhookDeliveryRow,
  hook: WebhookRow | undefined,
  outcome: { startedAt: number; result: AttemptResult },
  now: number,
  delayFor: (attempt: number) => number,
): AttemptDecision {
  const { result, startedAt } = outcome;
  const attempt = delivery.attempts + 1;
  let verdict = result.verdict;
  let error = result.error;
  let nextAt: number | null = null;
  if (verdict === 'retry') {
    if (now >= delivery.retryUntil.getTime()) {
      verdict = 'failed';
      error = `${error}; gave up after ${attempt} attempts since ${delivery.createdAt.toISOString()}`;
    } else {
      const delay = Math.max(delayFor(attempt), result.retryAfterMs ?? 0);
      nextAt = Math.min(now + delay, delivery.retryUntil.getTime());
    }
  }
  let health: HealthChange = { kind: 'none' };
  if (hook && verdict === 'succeeded') {
    health = { kind: 'healthy' };
  } else if (hook) {
    const failingSince = hook.failingSince ?? new Date(startedAt);
    if (hook.enabled && now - failingSince.getTime() >= WEBHOOK_DISABLE_AFTER_MS) {
      const reason =
        `Disabled automatically on ${new Date(now).toISOString()}: every attempt since ${failingSince.toISOString()} failed ` +
        `(last success: ${isoOrNever(hook.lastSuccessAt)}; last error: ${error}). Fix the receiver, then PATCH enabled: true and retry the failed deliveries`;
      health = { kind: 'disabled', failingSince, reason };
      if (nextAt !== null) {
        verdict = 'failed';
        error = `${error}; the webhook was disabled`;
        nextAt = null;
      }
    } else if (!hook.failingSince) {
      health = { kind: 'failing', failingSince };
    }
  }
  return { attempt, verdict, error, nextAt, health };
}

/** The endpoint's changes when an attempt disables it. */
export const disabledChanges = (failingSince: Date, reason: string, now: number) => ({
  failingSince,
  enabled: false,
  disabledAt: new Date(now),
  disabledReason: reason,
  updatedAt: new Date(now),
});

/** The attempt's row. */
export function attemptRow(deliveryId: string, decision: AttemptDecision, outcome: { startedAt: number; result: AttemptResult }) {
  return {
    deliveryId,
    attempt: decision.attempt,
    startedAt: new Date(outcome.startedAt),
    durationMs: outcome.result.durationMs,
    responseStatus: outcome.result.status,
    responseBody: outcome.result.body,
    error: decision.error,
    outcome: decision.verdict,
  };
}

export type NewAttemptRow = ReturnType<typeof attemptRow>;

/** The delivery's changes after an attempt (`jobId`: the next attempt's job, or the one that made it). */
export function deliveryAfterAttempt(decision: AttemptDecision, outcome: { startedAt: number; result: AttemptResult }, jobId: string | null, now: number) {
  const { verdict } = decision;
  return {
    status: verdict === 'retry' ? ('pending' as const) : verdict,
    attempts: decision.attempt,
    jobId,
    nextAttemptAt: decision.nextAt === null ? null : new Date(decision.nextAt),
    lastAttemptAt: new Date(outcome.startedAt),
    lastResponseStatus: outcome.result.status,
    lastError: verdict === 'succeeded' ? null : decision.error,
    lastDurationMs: outcome.result.durationMs,
    deliveredAt: verdict === 'succeeded' ? new Date(now) : null,
    updatedAt: new Date(now),
  };
}

export type DeliveryAfterAttempt = ReturnType<typeof deliveryAfterAttempt>;

/** A delivery failed without an attempt: its changes. */
export const settledChanges = (error: string, now: number) => ({ status: 'failed' as const, lastError: error, nextAttemptAt: null, updatedAt: new Date(now) });

// ---- deliveries as the API shows them --------------------------------------------------------

export const attemptView = (a: WebhookAttemptRow): DeliveryAttemptView => ({
  attempt: a.attempt,
  at: a.startedAt,
  durationMs: a.durationMs,
  responseStatus: a.responseStatus,
  responseBody: a.responseBody,
  error: a.error,
  outcome: a.outcome,
});

/** Attempts (newest first) by delivery, at most WEBHOOK_ATTEMPTS_SHOWN each. */
export function attemptsByDelivery(rows: readonly WebhookAttemptRow[]): Map<string, DeliveryAttemptView[]> {
  const byDelivery = new Map<string, DeliveryAttemptView[]>();
  for (const row of rows) {
    const list = byDelivery.get(row.deliveryId) ?? [];
    if (list.length < WEBHOOK_ATTEMPTS_SHOWN) list.push(attemptView(row));
    byDelivery.set(row.deliveryId, list);
  }
  return byDelivery;
}

export function deliveryView(row: WebhookDeliveryRow, jobStatus: string | null, jobError: string | null, attemptLog: DeliveryAttemptView[]): DeliveryView {
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

/** The 409 of a redelivery that cannot be made now, or null. */
export function redeliveryRefusal(hook: WebhookRow, current: DeliveryView): string | null {
  if (!hook.enabled) return 'The webhook is disabled: enable it (PATCH enabled: true) before retrying its deliveries';
  if (current.status === 'pending') return `The delivery is already queued: its next attempt is at ${current.nextAttemptAt?.toISOString() ?? 'once a worker is free'}`;
  return null;
}
