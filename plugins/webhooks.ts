import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobLoop, jobLoopOptions, systemClock, type Clock } from '../src/jobs/loop.js';
import { deliveryHandler, type DeliveryHandlerDeps } from '../src/webhooks/delivery.js';
import { WEBHOOK_DELIVERY, type WebhookStore, type WebhookStoreOptions } from '../src/webhooks/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookStore;
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
  checkDestination?: WebhookStoreOptions['checkDestination'];
  send?: DeliveryHandlerDeps['send'];
}

const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Webhooks: the store, the outbox listeners (post changes, settled batch tasks, indexed or
 * failed knowledge files) and the delivery loop, a JobLoop over the `webhook-delivery` jobs
 * alone with WEBHOOK_CONCURRENCY slots, woken as soon as a transaction that queued a delivery
 * has committed.
 */
export default fp(
  async function webhooksPlugin(app: FastifyInstance, opts: WebhooksPluginOptions) {
    const { config } = app;
    const clock = opts.clock ?? systemClock;
    let live = false;
    const webhooks = app.stores.webhooks({
      allowPrivate: config.webhookAllowPrivate,
      retryBaseMs: config.webhookRetryBaseMs,
      now: () => clock.now(),
      random: opts.random,
      onQueued: () => {
        if (live) void loop.tick();
      },
      checkDestination: opts.checkDestination,
      log: app.log,
    });
    const sending = { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, now: () => clock.now(), send: opts.send };
    const loop = new JobLoop(
      app.stores.jobs.scoped({ only: [WEBHOOK_DELIVERY] }),
      [deliveryHandler({ webhooks, ...sending })],
      jobLoopOptions(config, { concurrency: config.webhookConcurrency, clock, random: opts.random, log: app.log }),
    );
    loop.onSettled((job, outcome) => webhooks.attemptJobFailed(job, outcome));
    app.jobs.onSettled((job, outcome) => webhooks.taskSettled(job, outcome));
    app.posts.onChange((change) => webhooks.postChanged(change));
    app.knowledgeFiles.onSettled((file) => webhooks.knowledgeSettled(file));

    app.decorate('webhooks', webhooks);
    app.decorate('webhookDeliveries', loop);

    const purge = async () => {
      try {
        await webhooks.purge();
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
        void purge();
        purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
        purgeTimer.unref();
      });
    }
    app.addHook('preClose', async () => {
      live = false;
      loop.stopClaiming();
    });
    app.addHook('onClose', async () => {
      live = false;
      if (purgeTimer) clearInterval(purgeTimer);
      await loop.stop();
    });
  },
  { name: 'webhooks', dependencies: ['db', 'posts', 'knowledge', 'jobs'] },
);
