import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { twinOf } from '../src/db/backend.js';
import { PostService } from '../src/posts/service.js';
import { JobLoop, systemClock, type Clock } from '../src/jobs/loop.js';
import { JobQueue } from '../src/jobs/queue.js';
import { deliveryHandler, type DeliveryHandlerDeps } from '../src/webhooks/delivery.js';
import { WEBHOOK_DELIVERY, WebhookService, type WebhookServiceOptions } from '../src/webhooks/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService;
    /** The loop that makes delivery attempts: its own concurrency, never behind generation tasks. */
    webhookDeliveries: JobLoop;
  }
}

export interface WebhooksPluginOptions {
  /** Start delivering once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  /** Where URLs point, checked at creation (tests replace DNS). */
  checkDestination?: WebhookServiceOptions['checkDestination'];
  send?: DeliveryHandlerDeps['send'];
}

const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Webhooks: the service, the outbox listeners (post changes, settled batch tasks, indexed or
 * failed knowledge files) and the delivery loop, a JobLoop over the `webhook-delivery` jobs
 * alone with WEBHOOK_CONCURRENCY slots, woken as soon as a transaction queues a delivery.
 */
export default fp(
  async function webhooksPlugin(app: FastifyInstance, opts: WebhooksPluginOptions) {
    const { config } = app;
    const clock = opts.clock ?? systemClock;
    const queue = new JobQueue(app.database.db, { only: [WEBHOOK_DELIVERY] });

    let live = false;
    let wakeScheduled = false;
    // Called inside the transaction that queued a delivery; the tick runs after it commits
    // (better-sqlite3 transactions are synchronous), instead of at the next poll.
    const wake = () => {
      if (!live || wakeScheduled) return;
      wakeScheduled = true;
      setImmediate(() => {
        wakeScheduled = false;
        if (live) void loop.tick();
      });
    };

    const service = new WebhookService(app.database.db, queue, {
      allowPrivate: config.webhookAllowPrivate,
      retryBaseMs: config.webhookRetryBaseMs,
      now: () => clock.now(),
      random: opts.random,
      onQueued: wake,
      checkDestination: opts.checkDestination,
      log: app.log,
    });
    const loop = new JobLoop(
      queue,
      [deliveryHandler({ webhooks: service, timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, now: () => clock.now(), send: opts.send })],
      {
        pollMs: config.jobPollMs,
        concurrency: config.webhookConcurrency,
        leaseMs: config.jobLeaseMs,
        shutdownTimeoutMs: config.shutdownTimeoutMs,
        clock,
        random: opts.random,
        log: app.log,
      },
    );
    loop.onSettled((tx, job, outcome) => service.attemptJobFailed(tx, job, outcome));

    twinOf(app.posts, PostService).onChange((tx, change) => service.postChanged(tx, change));
    app.jobs.onSettled((tx, job, outcome) => service.taskSettled(tx, job, outcome));
    app.indexer.onSettled((tx, file) => service.knowledgeSettled(tx, file));

    app.decorate('webhooks', service);
    app.decorate('webhookDeliveries', loop);

    const purge = () => {
      try {
        service.purge();
      } catch (error) {
        app.log.warn({ err: error }, 'could not purge old webhook deliveries');
      }
    };
    let purgeTimer: NodeJS.Timeout | null = null;
    if (opts.autoStart ?? true) {
      // Not before listening, like the generation loop: a start that fails to bind sends nothing.
      app.addHook('onListen', async () => {
        loop.start();
        live = true;
        purge();
        purgeTimer = setInterval(purge, PURGE_INTERVAL_MS);
        purgeTimer.unref();
      });
    }
    app.addHook('preClose', async () => {
      live = false;
      (loop as { stopClaiming?: () => void }).stopClaiming?.();
    });
    app.addHook('onClose', async () => {
      live = false;
      if (purgeTimer) clearInterval(purgeTimer);
      await loop.stop();
    });
  },
  { name: 'webhooks', dependencies: ['db', 'posts', 'knowledge', 'jobs'] },
);
