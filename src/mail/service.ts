import type { MailConfig } from '../config.js';
import { AppError } from '../errors.js';
import { afterCommit, ask, type StepDatabase, type Steps } from '../db/steps.js';
import type { JobHandler } from '../jobs/loop.js';
import { enqueueSteps } from '../jobs/store.js';
import { checkMessage, classifySendError, MAIL_SEND, newMessageId, senderDomain, sentPayload, type MailJobPayload, type MailJobResult, type MailMessage } from './rules.js';
import type { MailTransport } from './transport.js';

export { MAIL_SEND, type MailMessage } from './rules.js';
export { renderMail, type MailContent } from './render.js';

/** A queued message: its job (GET it as any job of the queue) and the Message-ID it will carry. */
export interface QueuedMail {
  jobId: string;
  messageId: string;
}

/** Thrown by `enqueue` when SMTP_URL is unset: callers check `mail.configured` first and say so. */
export const mailNotConfigured = () =>
  new AppError(503, 'MAIL_NOT_CONFIGURED', 'Mail is not set up on this service (SMTP_URL is unset): nothing can be sent');

/**
 * The mail module's API for features (accounts, comments, newsletters):
 *
 *     if (app.mail.configured) {
 *       const { jobId } = await app.mail.enqueue(siteId, { to, ...renderMail({ subject, paragraphs, action }) });
 *     }
 *
 * `enqueue` queues one message as one job (kind `mail-send`) and answers at once; the mail
 * loop sends it with retries and backoff. `enqueueSteps` queues it inside the caller's own
 * transaction (an outbox: the message goes if and only if the caller's change commits). A
 * message is queued once per call and carries a Message-ID fixed when it was queued, so a
 * retry is the same message. Bodies are never logged, and the job's result keeps none of it.
 */
export class Mailer {
  private readonly domain: string | null;

  constructor(
    private readonly db: StepDatabase,
    private readonly config: MailConfig | null,
    private readonly maxAttempts: number,
    /** Wakes the mail loop once a queued message's transaction has committed. */
    private readonly onQueued: () => void = () => {},
  ) {
    this.domain = config ? senderDomain(config.from) : null;
  }

  /** False when SMTP_URL is unset: nothing is sent, and features say so instead. */
  get configured(): boolean {
    return this.config !== null;
  }

  /** The sender every message names (MAIL_FROM), or null without mail. */
  get from(): string | null {
    return this.config?.from ?? null;
  }

  /** Queues one message on behalf of a site (the job's row goes with the site). */
  enqueue(siteId: string, message: MailMessage, now = new Date()): Promise<QueuedMail> {
    return this.db.write(() => this.enqueueSteps(siteId, message, now));
  }

  /** Queues one message inside the caller's transaction. */
  *enqueueSteps(siteId: string, message: MailMessage, now = new Date()): Steps<QueuedMail> {
    if (!this.domain) throw mailNotConfigured();
    checkMessage(message);
    const payload: MailJobPayload = { ...message, messageId: newMessageId(this.domain) };
    const [job] = yield* enqueueSteps(siteId, [{ kind: MAIL_SEND, payload, scheduledFor: now }], this.maxAttempts, now);
    yield* afterCommit(this.onQueued);
    return { jobId: job!.id, messageId: payload.messageId };
  }
}

/** The job that sends one message. Its errors name the SMTP answer, never the message's content. */
export function mailSendHandler(transport: MailTransport | null): JobHandler<MailJobPayload, MailJobResult> {
  return {
    kind: MAIL_SEND,
    async run(payload, signal) {
      if (!transport) throw Object.assign(new Error('Mail is not set up (SMTP_URL is unset): the message waits until it is'), { unavailable: true });
      try {
        const { accepted } = await transport.send(payload, signal);
        return { messageId: payload.messageId, accepted };
      } catch (error) {
        throw sendFailure(error);
      }
    },
    *complete(result, job) {
      // Sent: the message's parts (a link's token) leave the stored payload, in the transaction that records the success.
      yield* ask('jobs', 'setPayload', job.id, sentPayload(job.payload));
      return result;
    },
  };
}

/** A send's error as the queue records it: the SMTP code and answer, whether to retry, and nothing else. */
function sendFailure(error: unknown): Error {
  const { code, responseCode, response, command } = (error ?? {}) as { code?: unknown; responseCode?: unknown; response?: unknown; command?: unknown };
  const kind = classifySendError(error);
  const said = typeof response === 'string' ? response.slice(0, 300) : error instanceof Error ? error.message.slice(0, 300) : String(error);
  const parts = [typeof code === 'string' ? code : null, typeof command === 'string' ? `at ${command}` : null, typeof responseCode === 'number' ? String(responseCode) : null].filter(Boolean);
  return Object.assign(new Error(`Mail not sent (${parts.join(' ') || 'error'}): ${said}`), {
    permanent: kind === 'permanent',
    unavailable: kind === 'unavailable',
  });
}
