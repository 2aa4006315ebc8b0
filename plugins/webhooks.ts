import { EventEmitter } from 'node:events';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Executor } from '../src/db/client.js';
import type { PgExecutor } from '../src/db/postgres.js';
import { JobLoop, loopOver, systemClock, type Clock, type JobLoopOptions } from '../src/jobs/loop.js';
import { PgJobQueue } from '../src/jobs/pg-queue.js';
import { JobQueue } from '../src/jobs/queue.js';
import { ask } from '../src/db/steps.js';
import { inTransaction } from '../src/knowledge/glue.js'; // glue until webhooks land
import { deliveryHandler, type DeliveryHandlerDeps } from '../src/webhooks/delivery.js';
import { PgWebhookStore } from '../src/webhooks/pg-store.js';
import { WEBHOOK_DELIVERY, WebhookService, type WebhookServiceOptions } from '../src/webhooks/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhooks, in the database DATABASE_URL chose (the same methods and answers on both). */
    webhooks: WebhookService | PgWebhookStore;
    /** The loop that makes delivery attempts: its own concurrency, never behind generation tasks. */
    webhookDeliveries: JobLoop<Executor> | JobLoop<PgExecutor>;
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

/** The connection pool under Drizzle's database object (which keeps it as `$client`), if it is one. */
function poolOf(db: PgExecutor): EventEmitter | null {
  const client = (db as { $client?: unknown }).$client;
  return client instanceof EventEmitter ? client : null;
}

/**
 * Webhooks: the service, the outbox listeners (post changes, settled batch tasks, indexed or
 * failed knowledge files) and the delivery loop, a JobLoop over the `webhook-delivery` jobs
 * alone with WEBHOOK_CONCURRENCY slots, woken as soon as a transaction that queued a delivery
 * has committed; over SQLite or PostgreSQL, as the database in use.
 */
export default fp(
  async function webhooksPlugin(app: FastifyInstance, opts: WebhooksPluginOptions) {
    const { config, backend } = app;
    const clock = opts.clock ?? systemClock;
    const scope = { only: [WEBHOOK_DELIVERY] };

    let live = false;
    const tickSoon = () =>
      setImmediate(() => {
        if (live) void loop.tick();
      });
    /** Called inside the transaction that queued a delivery: the tick must come after its commit. */
    let wake: () => void;
    let stopWaking = () => {};
    let wakeDue = false;
    if (backend.kind === 'sqlite') {
      // better-sqlite3 transactions are synchronous: the next turn of the event loop is after the commit.
      wake = () => {
        if (!live || wakeDue) return;
        wakeDue = true;
        setImmediate(() => {
          wakeDue = false;
          if (live) void loop.tick();
        });
      };
    } else {
      // A PostgreSQL transaction ends by giving its connection back to the pool: the tick follows
      // the next connection given back after a delivery was queued (usually that transaction's; if
      // another's came first, the tick finds nothing yet and the next poll claims the delivery).
      const pool = poolOf(backend.postgres.db);
      const onRelease = () => {
        if (!wakeDue) return;
        wakeDue = false;
        tickSoon();
      };
      pool?.on('release', onRelease);
      stopWaking = () => pool?.off('release', onRelease);
      wake = () => {
        if (live) wakeDue = true;
      };
    }

    const serviceOptions: WebhookServiceOptions = {
      allowPrivate: config.webhookAllowPrivate,
      retryBaseMs: config.webhookRetryBaseMs,
      now: () => clock.now(),
      random: opts.random,
      onQueued: () => wake(),
      checkDestination: opts.checkDestination,
      log: app.log,
    };
    const loopOptions: JobLoopOptions = {
      pollMs: config.jobPollMs,
      concurrency: config.webhookConcurrency,
      leaseMs: config.jobLeaseMs,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      clock,
      random: opts.random,
      log: app.log,
    };
    const sending = { timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate, now: () => clock.now(), send: opts.send };

    let service: WebhookService | PgWebhookStore;
    let loop: JobLoop<Executor> | JobLoop<PgExecutor>;
    if (backend.kind === 'sqlite') {
      const queue = new JobQueue(backend.sqlite.db, scope);
      const webhooks = new WebhookService(backend.sqlite.db, queue, serviceOptions);
      const deliveries = new JobLoop(queue, [deliveryHandler({ webhooks, ...sending })], { ...loopOptions, releaseAllAtStart: true });
      deliveries.onSettled((tx, job, outcome) => webhooks.attemptJobFailed(tx, job, outcome));
      // glue until jobs lands
      app.posts.onChange(function* (change) {
        yield* ask('glue', 'call', (tx: Executor) => webhooks.postChanged(tx, change));
      });
      loopOver(app.jobs, JobQueue).onSettled((tx, job, outcome) => webhooks.taskSettled(tx, job, outcome));
      app.knowledgeFiles.onSettled((file) => inTransaction((tx: Executor) => webhooks.knowledgeSettled(tx, file))); // glue until webhooks land
      [service, loop] = [webhooks, deliveries];
    } else {
      const queue = new PgJobQueue(backend.postgres.db, scope);
      const webhooks = new PgWebhookStore(backend.postgres.db, queue, serviceOptions);
      // Other instances may share the database: their attempts under way are alive.
      const deliveries = new JobLoop(queue, [deliveryHandler<PgExecutor>({ webhooks, ...sending })], { ...loopOptions, releaseAllAtStart: false });
      deliveries.onSettled((tx, job, outcome) => webhooks.attemptJobFailed(tx, job, outcome));
      // glue until jobs lands
      app.posts.onChange(function* (change) {
        yield* ask('glue', 'call', (tx: PgExecutor) => webhooks.postChanged(tx, change));
      });
      loopOver(app.jobs, PgJobQueue).onSettled((tx, job, outcome) => webhooks.taskSettled(tx, job, outcome));
      app.knowledgeFiles.onSettled((file) => inTransaction((tx: PgExecutor) => webhooks.knowledgeSettled(tx, file))); // glue until webhooks land
      [service, loop] = [webhooks, deliveries];
    }

    app.decorate<WebhookService | PgWebhookStore>('webhooks', service);
    app.decorate<JobLoop<Executor> | JobLoop<PgExecutor>>('webhookDeliveries', loop);

    const purge = async () => {
      try {
        await service.purge();
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
      stopWaking();
      if (purgeTimer) clearInterval(purgeTimer);
      await loop.stop();
    });
  },
  { name: 'webhooks', dependencies: ['db', 'posts', 'knowledge', 'jobs'] },
);
