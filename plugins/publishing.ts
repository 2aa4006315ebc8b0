import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobLoop, jobLoopOptions, type Clock } from '../src/jobs/loop.js';
import { publicationJobs, publishPostHandler, PUBLISH_POST } from '../src/publishing/scheduled.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The loop that publishes scheduled posts when their time comes. */
    publishing: JobLoop;
  }
}

export interface PublishingPluginOptions {
  /** Start the loop once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
}

/** Publications take no time of their own: two at once keep up with any schedule. */
const PUBLISHING_CONCURRENCY = 2;

/**
 * Scheduled publishing: every post change keeps the post's publication job in step, in its
 * transaction; a JobLoop of its own publishes, so a publication never waits behind a long
 * generation in the generation loop's slots.
 */
export default fp(
  async function publishingPlugin(app: FastifyInstance, opts: PublishingPluginOptions) {
    const { config } = app;
    app.posts.onChange(publicationJobs(config.jobMaxAttempts));
    const loop = new JobLoop(
      app.stores.jobs.scoped({ only: [PUBLISH_POST] }),
      [publishPostHandler(app.posts)],
      jobLoopOptions(config, { concurrency: PUBLISHING_CONCURRENCY, clock: opts.clock, random: opts.random, log: app.log }),
    );
    app.decorate('publishing', loop);
    // Not before listening, like the other loops; shutdown stops claiming, then waits.
    if (opts.autoStart ?? true) app.addHook('onListen', async () => loop.start());
    app.addHook('preClose', async () => loop.stopClaiming());
    app.addHook('onClose', async () => loop.stop());
  },
  { name: 'publishing', dependencies: ['db', 'posts', 'jobs'] },
);
