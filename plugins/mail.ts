import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { JobLoop, jobLoopOptions, type Clock } from '../src/jobs/loop.js';
import { MAIL_SEND } from '../src/mail/rules.js';
import { Mailer, mailSendHandler } from '../src/mail/service.js';
import { smtpTransport, type MailTransport } from '../src/mail/transport.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Outgoing mail: `mail.configured`, `mail.enqueue(siteId, message)` (src/mail/service.ts). */
    mail: Mailer;
    /** The loop that sends queued mail. */
    mailLoop: JobLoop;
  }
}

export interface MailPluginOptions {
  /** Start the loop once the server listens (default true); tests may drive `tick()` themselves. */
  autoStart?: boolean;
  clock?: Clock;
  random?: () => number;
  /** First retry delay of a message the server refused for now (doubling, with jitter). */
  backoffBaseMs?: number;
  /** A transport instead of SMTP_URL's (never needed by tests: they run an SMTP server). */
  transport?: MailTransport;
}

/** A few messages at once: enough for account mail, and a newsletter's jobs never crowd out an invitation for long. */
const MAIL_CONCURRENCY = 4;

/**
 * Outgoing mail over SMTP_URL: each message is a job of the queue, sent by a loop of its own
 * (never behind a generation). Without SMTP_URL the module says it is not configured and
 * queues nothing; messages queued earlier wait until it is.
 */
export default fp(
  async function mailPlugin(app: FastifyInstance, opts: MailPluginOptions) {
    const { config } = app;
    const transport = opts.transport ?? (config.mail ? smtpTransport(config.mail) : null);
    const loop = new JobLoop(
      app.stores.jobs.scoped({ only: [MAIL_SEND] }),
      [mailSendHandler(transport)],
      jobLoopOptions(config, { concurrency: MAIL_CONCURRENCY, clock: opts.clock, random: opts.random, backoffBaseMs: opts.backoffBaseMs, log: app.log }),
    );
    // A queued message goes out at once rather than at the next poll (only once the loop runs).
    const wake = () => {
      if (loop.status().state === 'running') void loop.tick();
    };
    app.decorate('mail', new Mailer(app.stores.db, config.mail, config.jobMaxAttempts, wake));
    app.decorate('mailLoop', loop);
    if (opts.autoStart ?? true) app.addHook('onListen', async () => loop.start());
    app.addHook('preClose', async () => loop.stopClaiming());
    app.addHook('onClose', async () => {
      await loop.stop();
      transport?.close();
    });
  },
  { name: 'mail', dependencies: ['db', 'jobs'] },
);
