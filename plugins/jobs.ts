import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PostWriter } from '../src/generation/writer.js';
import { JobLoop, jobLoopOptions, type Clock, type JobHandler } from '../src/jobs/loop.js';
import { KNOWLEDGE_EMBEDDING } from '../src/knowledge/embedding-job.js';
import { MAIL_SEND } from '../src/mail/rules.js';
import { generatePostHandler } from '../src/tasks/generate-post.js';
import { PUBLISH_POST } from '../src/publishing/scheduled.js';
import { NEWSLETTER_SEND } from '../src/newsletters/store.js';
import { TaskService } from '../src/tasks/service.js';
import { WEBHOOK_DELIVERY } from '../src/webhooks/rules.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The generation loop. */
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
  handlers?: JobHandler<never, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Generation: the job queue's loop (started with the server, stopped gracefully before the
 * database closes), batch tasks on top of it, and the writer of the generate endpoint.
 */
export default fp(
  async function jobsPlugin(app: FastifyInstance, opts: JobsPluginOptions) {
    const { config } = app;
    const grounding = { knowledge: app.knowledge, generator: app.generator };
    // Webhook deliveries, embeddings, publications and mail run in loops of their own
    // (plugins/webhooks.ts, embeddings.ts, publishing.ts, mail.ts): never behind a generation, nor in its slots.
    const queue = app.stores.jobs.scoped({ except: [WEBHOOK_DELIVERY, KNOWLEDGE_EMBEDDING, PUBLISH_POST, MAIL_SEND, NEWSLETTER_SEND] });
    const options = jobLoopOptions(config, { concurrency: config.jobConcurrency, backoffBaseMs: opts.backoffBaseMs, clock: opts.clock, random: opts.random, log: app.log });
    const loop = new JobLoop(queue, [generatePostHandler({ ...grounding, posts: app.posts }), ...(opts.handlers ?? [])], options);
    app.decorate('jobs', loop);
    app.decorate('tasks', new TaskService(app.stores.jobs, app.knowledge, app.generator, config.jobMaxAttempts, app.media));
    app.decorate('writer', new PostWriter({ ...grounding, posts: app.posts }));
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
