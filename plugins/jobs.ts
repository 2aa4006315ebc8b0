import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Executor } from '../src/db/client.js';
import type { PgExecutor } from '../src/db/postgres.js';
import { PostWriter } from '../src/generation/writer.js';
import { JobLoop, type Clock, type JobHandler, type JobLoopOptions } from '../src/jobs/loop.js';
import { PgJobQueue } from '../src/jobs/pg-queue.js';
import { JobQueue } from '../src/jobs/queue.js';
import { KNOWLEDGE_EMBEDDING } from '../src/knowledge/embedding-job.js';
import type { PostInput, PostOrigin } from '../src/posts/store.js';
import { postgresStepDatabase } from '../src/db/postgres-steps.js';
import { sqliteStepDatabase } from '../src/db/sqlite-steps.js';
import { postgresAdapters } from '../src/stores/postgres.js';
import { sqliteAdapters } from '../src/stores/sqlite.js';
import { generatePostHandler } from '../src/tasks/generate-post.js';
import { TaskService } from '../src/tasks/service.js';
import { WEBHOOK_DELIVERY } from '../src/webhooks/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The generation loop, over SQLite's queue or PostgreSQL's (narrow it with loopOver to listen to it). */
    jobs: JobLoop<Executor> | JobLoop<PgExecutor>;
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
  /** Kinds of job besides post generation (tests add their own), for the database in use. */
  handlers?: JobHandler<never, any, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Generation: the job queue and its loop (started with the server, stopped gracefully before
 * the database closes), batch tasks on top of it, and the writer of the generate endpoint;
 * over SQLite's queue or PostgreSQL's, as the database in use.
 */
export default fp(
  async function jobsPlugin(app: FastifyInstance, opts: JobsPluginOptions) {
    const { config, backend } = app;
    const options: JobLoopOptions = {
      pollMs: config.jobPollMs,
      concurrency: config.jobConcurrency,
      leaseMs: config.jobLeaseMs,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      backoffBaseMs: opts.backoffBaseMs,
      clock: opts.clock,
      random: opts.random,
      log: app.log,
    };
    // Webhook deliveries and embeddings run in loops of their own (plugins/webhooks.ts,
    // plugins/embeddings.ts): never behind a generation, nor in its slots.
    const scope = { except: [WEBHOOK_DELIVERY, KNOWLEDGE_EMBEDDING] };
    const grounding = { knowledge: app.knowledge, generator: app.generator };
    let loop: JobLoop<Executor> | JobLoop<PgExecutor>;
    let queue: JobQueue | PgJobQueue;
    if (backend.kind === 'sqlite') {
      const sqliteQueue = new JobQueue(backend.sqlite.db, scope);
      // glue until jobs lands: the post's steps inside the job's transaction.
      const steps = sqliteStepDatabase(backend.sqlite.db, sqliteAdapters);
      const posts = { insert: (tx: Executor, siteId: string, input: PostInput, origin: PostOrigin) => steps.runIn(tx, app.posts.createSteps(siteId, input, origin)) };
      // One server per DATA_DIR (its lock): jobs left running were left by a process that is gone.
      loop = new JobLoop(sqliteQueue, [generatePostHandler({ ...grounding, posts }), ...(opts.handlers ?? [])], { ...options, releaseAllAtStart: true });
      queue = sqliteQueue;
    } else {
      const pgQueue = new PgJobQueue(backend.postgres.db, scope);
      // glue until jobs lands: the post's steps inside the job's transaction.
      const steps = postgresStepDatabase(backend.postgres.db, postgresAdapters);
      const posts = { insert: (tx: PgExecutor, siteId: string, input: PostInput, origin: PostOrigin) => steps.runIn(tx, app.posts.createSteps(siteId, input, origin)) };
      // Other instances may share the database: their running jobs are alive; a dead one's leases expire.
      loop = new JobLoop(pgQueue, [generatePostHandler<PgExecutor>({ ...grounding, posts }), ...(opts.handlers ?? [])], { ...options, releaseAllAtStart: false });
      queue = pgQueue;
    }
    app.decorate<JobLoop<Executor> | JobLoop<PgExecutor>>('jobs', loop);
    app.decorate('tasks', new TaskService(queue, app.knowledge, app.generator, config.jobMaxAttempts));
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
