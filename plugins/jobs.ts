import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { twinOf } from '../src/db/backend.js';
import { PostService } from '../src/posts/service.js';
import { PostWriter } from '../src/generation/writer.js';
import { JobLoop, type Clock, type JobHandler } from '../src/jobs/loop.js';
import { JobQueue } from '../src/jobs/queue.js';
import { generatePostHandler } from '../src/tasks/generate-post.js';
import { TaskService } from '../src/tasks/service.js';
import { WEBHOOK_DELIVERY } from '../src/webhooks/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobLoop;
    tasks: TaskService;
    /** Writes a grounded post now (the generate endpoint); batch tasks write theirs through the loop. */
    writer: PostWriter;
  }
}

export interface JobsPluginOptions {
  /** Start polling once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  backoffBaseMs?: number;
  /** Kinds of job besides post generation (tests add their own). */
  handlers?: JobHandler<never>[];
}

/**
 * Generation: the job queue and its loop (started with the server, stopped gracefully before
 * the database closes), batch tasks on top of it, and the writer of the generate endpoint.
 */
export default fp(
  async function jobsPlugin(app: FastifyInstance, opts: JobsPluginOptions) {
    const { config } = app;
    // Webhook deliveries run in their own loop (plugins/webhooks.ts): never behind a generation, nor in its slots.
    const queue = new JobQueue(app.database.db, { except: [WEBHOOK_DELIVERY] });
    const deps = { knowledge: app.knowledge, generator: app.generator, posts: twinOf(app.posts, PostService) };
    const handlers = [generatePostHandler(deps), ...(opts.handlers ?? [])];
    const loop = new JobLoop(queue, handlers, {
      pollMs: config.jobPollMs,
      concurrency: config.jobConcurrency,
      leaseMs: config.jobLeaseMs,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      backoffBaseMs: opts.backoffBaseMs,
      clock: opts.clock,
      random: opts.random,
      log: app.log,
    });
    app.decorate('jobs', loop);
    app.decorate('tasks', new TaskService(queue, app.knowledge, app.generator, config.jobMaxAttempts));
    app.decorate('writer', new PostWriter(deps));
    app.readiness.watchJobs(() => loop.status());
    // Not before listening: a process that fails to bind its port must not have claimed tasks.
    // start() never throws: a locked database makes it retry (and /ready say `starting`).
    if (opts.autoStart ?? true) app.addHook('onListen', async () => loop.start());
    // Shutdown stops claiming first, while in-flight requests finish; then waits for running jobs.
    app.addHook('preClose', async () => loop.stopClaiming());
    app.addHook('onClose', async () => loop.stop());
  },
  { name: 'jobs', dependencies: ['db', 'posts', 'knowledge', 'generator'] },
);
