import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { generationWork } from '../src/jobs/generate-task.js';
import { JobLoop, type Clock } from '../src/jobs/loop.js';
import { TaskStore } from '../src/jobs/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobLoop;
  }
}

export interface JobsPluginOptions {
  /** Start polling once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  backoffBaseMs?: number;
}

/** The batch job loop, started with the server and stopped gracefully before the database closes. */
export default fp(
  async function jobsPlugin(app: FastifyInstance, opts: JobsPluginOptions) {
    const { config } = app;
    const loop = new JobLoop(new TaskStore(app.dbHandle), generationWork({ handle: app.dbHandle, generator: app.generator }), {
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
    // Not before listening: a process that fails to bind its port must not have claimed tasks.
    if (opts.autoStart ?? true) app.addHook('onListen', async () => loop.start());
    app.addHook('onClose', async () => loop.stop());
  },
  { name: 'jobs', dependencies: ['db', 'generator'] },
);
