import { PassThrough, type Readable } from 'node:stream';
import type { Site } from '../db/schema.js';
import type { JobHandler } from '../jobs/loop.js';
import { classifySendError } from '../mail/rules.js';
import type { PublicPost, PublicSite } from '../public-site/types.js';
import { fromHeader, newsletterTemplate } from './message.js';
import type { ComposedNewsletter, RawMail } from './mime.js';
import { CLAIM_BATCH, NEWSLETTER_SEND, type NewsletterSendPayload, type NewsletterStore, type RecipientOutcome } from './store.js';
import type { NewsletterRecipientRow } from './rules.js';

/*
 * The job that mails a post's newsletter: it claims the send's recipients in batches and
 * sends one message per recipient (the post rendered and composed once, each message spliced
 * from it: mime.ts), two at a time over two connections (smtp-session.ts), recording each
 * outcome, in order, as soon as the server has answered. A message's envelope and data go out
 * while the message before it awaits the server's answer and its record, but its end of data
 * waits for that record to commit (endingAfter): a process killed mid-send leaves at most the
 * recipient of one transaction accepted and unrecorded (a transaction whose data never ended
 * is dropped by the server with its connection); its claim runs out and the recipient is
 * mailed again; every other recipient is either recorded as sent or still due. Several
 * instances claim disjoint batches (FOR UPDATE SKIP LOCKED).
 */

/** How long a claim lasts without renewal unless told (the job's lease, JOB_LEASE_MS): renewed every quarter of it while its owner lives. */
export const CLAIM_MS = 60_000;
/** Temporary failures of one recipient before it is given up. */
export const MAX_RECIPIENT_ATTEMPTS = 5;
const RETRY_BASE_MS = 60_000;
/** How long a composed newsletter serves (its Date header tells when it was written). */
const COMPOSED_FOR_MS = 60_000;
const MAX_RETRY_MS = 3_600_000;

/** What the sender needs to know of a post and its site to render the mail. */
export interface NewsletterSource {
  load(siteId: string, postId: string): Promise<{ site: Site; view: PublicSite; post: PublicPost } | null>;
}

/** One message out: its envelope, and its raw MIME, whole or as a stream whose end the sender holds back (endingAfter). */
export interface OutgoingMail {
  envelope: RawMail['envelope'];
  raw: string | Readable;
}

/** One message out, the SMTP server's answer back; errors carry Nodemailer's `responseCode`. */
export type DeliverMail = (mail: OutgoingMail) => Promise<void>;

/**
 * A message's raw MIME as a stream that gives it at once but ends only once `after` has
 * resolved. Nodemailer writes the SMTP end of data ("\r\n.\r\n") when the message stream ends
 * (its DataStream's flush), so the server cannot accept the message before then; the message
 * itself travels (and the server reads it) while `after` is still on its way, and only the end
 * waits. Should `after` fail, the stream fails unended: the transaction is abandoned and the
 * server keeps nothing of it.
 */
export function endingAfter(raw: string, after: Promise<unknown>): Readable {
  const stream = new PassThrough();
  stream.write(raw);
  after.then(
    () => {
      if (!stream.destroyed) stream.end();
    },
    (error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))),
  );
  return stream;
}

/** Spaces message starts so that no more than `perMinute` begin in any minute (per process). */
export class RateLimiter {
  private next = 0;
  constructor(private readonly perMinute: number) {}
  async wait(signal: AbortSignal): Promise<void> {
    const gap = 60_000 / this.perMinute;
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + gap;
    if (at > now) await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, at - now);
      signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
  }
}

export interface SenderDeps {
  newsletters: NewsletterStore;
  source: NewsletterSource;
  /** MAIL_FROM; null without SMTP_URL (sends wait until mail is set up). */
  mailFrom: string | null;
  deliver: DeliverMail | null;
  limiter: RateLimiter;
  random?: () => number;
  /** First retry delay of a temporarily refused recipient (default a minute), doubling per attempt. */
  retryBaseMs?: number;
  /** How long a claim of recipients lasts without renewal (a dead instance's pass on after it). */
  claimMs?: number;
  log: { warn(obj: object, msg: string): void };
}

/** What the outcome of one recipient's SMTP transaction is. */
export function outcomeOf(error: unknown, attempts: number, now: number, random: () => number, retryBaseMs = RETRY_BASE_MS): RecipientOutcome {
  const kind = classifySendError(error);
  const { responseCode, response } = (error ?? {}) as { responseCode?: unknown; response?: unknown };
  const said = `${typeof responseCode === 'number' ? responseCode : 'error'}: ${typeof response === 'string' ? response.slice(0, 200) : error instanceof Error ? error.message.slice(0, 200) : String(error)}`;
  if (kind === 'permanent') return { status: 'bounced', error: said };
  if (attempts >= MAX_RECIPIENT_ATTEMPTS) return { status: 'failed', error: said };
  const delay = Math.min(MAX_RETRY_MS, retryBaseMs * 2 ** (attempts - 1)) * (0.5 + random() / 2);
  return { status: 'retry', error: said, at: now + Math.round(delay) };
}

const unavailable = (message: string) => Object.assign(new Error(message), { unavailable: true });

/** The SMTP server was away at the batch's message `from`: it and the rest of the batch go back. */
class ServerAway extends Error {
  constructor(
    readonly from: number,
    cause: unknown,
  ) {
    super('The mail server is unavailable', { cause });
  }
}

export function newsletterSendHandler(deps: SenderDeps): JobHandler<NewsletterSendPayload, { postId: string; sent: number }> {
  const random = deps.random ?? Math.random;
  return {
    kind: NEWSLETTER_SEND,
    async run(payload, signal, job) {
      const { postId } = payload;
      const { newsletters } = deps;
      if (!deps.deliver || !deps.mailFrom) throw unavailable('Mail is not set up (SMTP_URL is unset): the newsletter waits until it is');
      // Each run claims as its own owner: what an earlier, killed run held is someone else's.
      const owner = `${job.leaseOwner ?? 'worker'}:${job.id}:${job.attempts}`;
      const loaded = await deps.source.load(job.siteId, postId);
      // The MIME writer (Nodemailer's) is loaded by the first send, not by every start of the service.
      const { composeNewsletter, newsletterMail } = await import('./mime.js');
      // The post is rendered once per run; each recipient's message only splices in what is theirs.
      const mail = loaded && { view: loaded.view, template: newsletterTemplate(loaded.site, loaded.view, loaded.post), from: fromHeader(loaded.site, deps.mailFrom) };
      let composed: ComposedNewsletter | null = null;
      let sent = 0;
      let takeAll = newsletters.soleWorker;
      const claimMs = deps.claimMs ?? CLAIM_MS;
      const renew = setInterval(() => void newsletters.extendClaims(postId, owner, claimMs).catch(() => {}), claimMs / 4);
      renew.unref();
      try {
        for (;;) {
          if (signal.aborted) break;
          const batch = await newsletters.claim(postId, owner, CLAIM_BATCH, claimMs, takeAll);
          takeAll = false;
          if (batch.length === 0) break;
          if (!mail) {
            // Unpublished or deleted since: nobody else is mailed.
            for (const recipient of batch) await newsletters.settle(recipient, owner, { status: 'failed', error: 'the post is no longer published' });
            continue;
          }
          // Two messages in flight, each over a connection of its own (smtp-session.ts): one
          // message's envelope and data go out while the one before it awaits the server's answer
          // and its record, but its end of data waits for that record to commit (endingAfter).
          // `handled` settles once the last begun message's record has committed.
          let handled: Promise<void> = Promise.resolve();
          const handle = async (recipient: NewsletterRecipientRow, i: number, delivering: Promise<void>, before: Promise<void>) => {
            let outcome: RecipientOutcome;
            try {
              await delivering;
              outcome = { status: 'sent' };
            } catch (error) {
              // A record that failed failed this message too (its data was never ended): that failure is the one to tell.
              await before;
              if (classifySendError(error) === 'unavailable') throw new ServerAway(i, error);
              outcome = outcomeOf(error, recipient.attempts, Date.now(), random, deps.retryBaseMs);
            }
            // One record at a time, in order (after a refusal the one before may still be in flight).
            await before;
            const kept = await newsletters.settle(recipient, owner, outcome);
            if (!kept) deps.log.warn({ postId }, 'newsletter: a recipient claim was lost during its send');
            else if (outcome.status === 'sent') sent++;
          };
          try {
            for (const [i, recipient] of batch.entries()) {
              if (signal.aborted) {
                // Shutting down: the rest go back as they were, due at once for the next run.
                await handled;
                for (const left of batch.slice(i)) await newsletters.settle(left, owner, { status: 'retry', error: 'interrupted', at: Date.now() });
                break;
              }
              await deps.limiter.wait(signal);
              // Composed once per send, again once its Date is a minute old.
              if (!composed || Date.now() - composed.at > COMPOSED_FOR_MS) composed = await composeNewsletter(mail.template, mail.from);
              const { envelope, raw } = newsletterMail(composed, mail.view, recipient.email, recipient.unsubscribeToken);
              const before = handled;
              // The batch's first message has nothing before it to wait for: it goes whole, without a stream.
              const delivering = deps.deliver({ envelope, raw: i === 0 ? raw : endingAfter(raw, before) });
              handled = handle(recipient, i, delivering, before);
              // Its failure is told where it is awaited (the next message's turn, or the batch's end).
              handled.catch(() => {});
              // The next message begins once the one before this has been recorded: two in flight at most.
              await before;
              // That record has just released this message's end of data, which Nodemailer writes
              // through its streams' ticks, after every promise reaction due now. Beginning the next
              // message takes its turn after them, not ahead of them: the end of data is what the
              // send waits on, the next message's envelope is not (it is early by a round trip).
              await new Promise<void>((resolve) => setImmediate(resolve));
            }
            await handled;
          } catch (error) {
            if (!(error instanceof ServerAway)) throw error;
            // The server itself is away: these recipients are not at fault; all wait for the job's retry.
            await handled.catch(() => {});
            for (const left of batch.slice(error.from)) await newsletters.settle(left, owner, { status: 'retry', error: 'mail server unavailable', at: Date.now() });
            throw unavailable(`The mail server is unavailable: ${(error.cause as Error).message}`);
          }
        }
      } finally {
        clearInterval(renew);
      }
      return { postId, sent };
    },
    *complete(result, job) {
      const after = yield* deps.newsletters.afterRun(job.siteId, result.postId);
      return { ...result, ...after };
    },
  };
}
