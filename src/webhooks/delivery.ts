import type { Steps } from '../db/steps.js';
import type { JobHandler } from '../jobs/loop.js';
import type { JobRow } from '../jobs/rules.js';
import { WEBHOOK_DELIVERY, type AttemptOutcome, type AttemptTarget, type DeliveryJobPayload } from './rules.js';
import { sendWebhook, type SendOptions } from './sender.js';
import { signedHeaders } from './signing.js';

export { WEBHOOK_DELIVERY };

/** The bookkeeping of attempts (WebhookStore): `recordAttempt` answers the steps that record one in the job's transaction. */
export interface AttemptBook {
  attemptTarget(deliveryId: string, jobId: string): Promise<AttemptTarget | Extract<AttemptOutcome, { skip: string }>>;
  recordAttempt(job: JobRow, outcome: AttemptOutcome): Steps<unknown>;
}

export interface DeliveryHandlerDeps {
  webhooks: AttemptBook;
  timeoutMs: number;
  allowPrivate: boolean;
  /** When the attempt started, as the queue's clock tells it. */
  now: () => number;
  send?: (url: string, headers: Record<string, string>, body: string, options: SendOptions) => ReturnType<typeof sendWebhook>;
}

/**
 * One attempt of a delivery: `run` signs the stored body (Standard Webhooks headers, a fresh
 * timestamp, the same webhook-id every time) and POSTs it, outside any transaction; `complete`
 * records the outcome and queues the next attempt, if any, in the transaction that ends the
 * job. A crash in between makes the job run again: a receiver may see a webhook-id twice,
 * never miss it.
 */
export function deliveryHandler(deps: DeliveryHandlerDeps): JobHandler<DeliveryJobPayload, AttemptOutcome> {
  const send = deps.send ?? sendWebhook;
  return {
    kind: WEBHOOK_DELIVERY,
    async run({ deliveryId }, signal, job) {
      const target = await deps.webhooks.attemptTarget(deliveryId, job.id);
      if ('skip' in target) return target;
      const startedAt = deps.now();
      // The signed timestamp is the wall clock's: receivers compare it with theirs.
      const headers = signedHeaders(target.secrets, deliveryId, Math.floor(Date.now() / 1000), target.body);
      const result = await send(target.url, headers, target.body, { timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivate, signal });
      if (signal.aborted) throw new Error('Interrupted: the service is stopping');
      return { startedAt, result };
    },
    complete: (outcome, job) => deps.webhooks.recordAttempt(job, outcome),
  };
}
