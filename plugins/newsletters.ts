import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { systemClock, type Clock } from '../src/jobs/loop.js';
import type { NewsletterStore } from '../src/newsletters/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Subscribers of each site and the newsletters of its posts (src/newsletters/store.ts). */
    newsletters: NewsletterStore;
  }
}

export interface NewslettersPluginOptions {
  /** Start the sending loop and the purge of expired sign-ups once the server listens (default true). */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
}

const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Newsletters: the store of subscribers and sends, and an hourly purge of sign-ups never
 * confirmed within their week.
 */
export default fp(
  async function newslettersPlugin(app: FastifyInstance, opts: NewslettersPluginOptions) {
    const clock = opts.clock ?? systemClock;
    const newsletters = app.stores.newsletters({ now: () => clock.now() });
    app.decorate('newsletters', newsletters);
    app.posts.onChange((change) => newsletters.postChanged(change));

    const purge = async () => {
      try {
        await newsletters.purgeExpired();
      } catch (error) {
        app.log.warn({ err: error }, 'could not purge expired newsletter sign-ups');
      }
    };
    let purgeTimer: NodeJS.Timeout | null = null;
    if (opts.autoStart ?? true) {
      app.addHook('onListen', async () => {
        void purge();
        purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
        purgeTimer.unref();
      });
    }
    app.addHook('onClose', async () => {
      if (purgeTimer) clearInterval(purgeTimer);
    });
  },
  { name: 'newsletters', dependencies: ['db', 'posts', 'jobs', 'webhooks'] },
);
