import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobLoop, jobLoopOptions, systemClock, type Clock } from '../src/jobs/loop.js';
import { confirmationMessage } from '../src/newsletters/message.js';
import { newsletterSendHandler, RateLimiter, type NewsletterSource } from '../src/newsletters/sender.js';
import { smtpSession } from '../src/newsletters/smtp-session.js';
import { NEWSLETTER_SEND, type NewsletterStore } from '../src/newsletters/store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Subscribers of each site and the newsletters of its posts (src/newsletters/store.ts). */
    newsletters: NewsletterStore;
    /** The loop that mails newsletters (jobs of kind `newsletter-send`). */
    newsletterLoop: JobLoop;
  }
}

export interface NewslettersPluginOptions {
  /** Start the sending loop and the purge of expired sign-ups once the server listens (default true). */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  /** First retry delay of a recipient the server refused for now (doubling, with jitter; default a minute). */
  backoffBaseMs?: number;
}

const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Newsletters: the store of subscribers and sends, and an hourly purge of sign-ups never
 * confirmed within their week.
 */
export default fp(
  async function newslettersPlugin(app: FastifyInstance, opts: NewslettersPluginOptions) {
    const clock = opts.clock ?? systemClock;
    const newsletters = app.stores.newsletters({
      now: () => clock.now(),
      onSent: (siteId, postId, progress) => app.webhooks.newsletterSent(siteId, { postId, ...progress }),
      onQueued: () => {
        if (loop.status().state === 'running') void loop.tick();
      },
      // Queued in the sign-up's own transaction: the mail goes if and only if the sign-up is kept.
      *confirmationMail({ site, email, token }) {
        yield* app.mail.enqueueSteps(site.id, confirmationMessage(site, app.publicPages.view(site, ''), email, token));
      },
    });
    const smtp = app.config.mail ? smtpSession(app.config.mail) : null;
    const source: NewsletterSource = {
      async load(siteId, postId) {
        const row = await app.posts.get(siteId, postId).catch(() => null);
        if (!row || row.isDraft) return null;
        const site = await app.sites.get(siteId);
        const found = await app.publicSite.bySlug(siteId, row.slug);
        if (!found || !('post' in found)) return null;
        return { site, view: app.publicPages.view(site, ''), post: found.post };
      },
    };
    const loop = new JobLoop(
      app.stores.jobs.scoped({ only: [NEWSLETTER_SEND] }),
      [
        newsletterSendHandler({
          newsletters,
          source,
          mailFrom: app.config.mail?.from ?? null,
          deliver: smtp?.deliver ?? null,
          limiter: new RateLimiter(app.config.mailRatePerMinute),
          random: opts.random,
          retryBaseMs: opts.backoffBaseMs,
          claimMs: app.config.jobLeaseMs,
          log: app.log,
        }),
      ],
      // Sends of two posts at once, sharing the SMTP session's connections (each send keeps two messages in flight).
      jobLoopOptions(app.config, { concurrency: 2, clock, random: opts.random, log: app.log }),
    );
    app.decorate('newsletterLoop', loop);
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
        loop.start();
        void purge();
        purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
        purgeTimer.unref();
      });
    }
    app.addHook('preClose', async () => loop.stopClaiming());
    app.addHook('onClose', async () => {
      if (purgeTimer) clearInterval(purgeTimer);
      await loop.stop();
      smtp?.close();
    });
  },
  { name: 'newsletters', dependencies: ['db', 'posts', 'jobs', 'webhooks', 'mail'] },
);
