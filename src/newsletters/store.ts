import { dayIn, daysOf, parseDay, type DayRange } from '../analytics/rules.js';
import type { Site } from '../db/schema.js';
import { afterCommit, ask, type StepDatabase, type Steps } from '../db/steps.js';
import { notFound } from '../errors.js';
import { enqueueSteps } from '../jobs/store.js';
import type { Page } from '../pagination.js';
import type { PostChange } from '../posts/rules.js';
import type {} from './port.js'; // the newsletters port the steps below ask
import {
  BOUNCES_TO_STOP,
  CONFIRM_RESEND_MS,
  CONFIRM_TTL_MS,
  CSV_HEADER,
  csvLine,
  newSubscriberRow,
  newToken,
  parseImport,
  sendView,
  subscriberView,
  tokenHash,
  type ImportProblem,
  type NewsletterRecipientRow,
  type SendView,
  type SubscriberCounts,
  type SubscriberQuery,
  type SubscriberRow,
  type SubscriberView,
} from './rules.js';
import { SUBSCRIBER_STATUSES, type SubscriberSource } from './statuses.js';

/** The site's subscribers counted by status, every status present (0 when none). */
function* countsOf(siteId: string): Steps<SubscriberCounts> {
  const counts = Object.fromEntries(SUBSCRIBER_STATUSES.map((status) => [status, 0])) as SubscriberCounts;
  for (const { status, n } of yield* ask('newsletters', 'subscribersByStatus', siteId)) counts[status] = Number(n);
  return counts;
}

type Settled = Pick<NewsletterRecipientRow, 'status' | 'lastError' | 'sentAt' | 'nextAttemptAt'>;

function* settleSteps(postId: string, subscriberId: string, owner: string, changes: Settled): Steps<boolean> {
  return yield* ask('newsletters', 'settleRecipient', postId, subscriberId, owner, changes);
}

/** A permanent refusal: the recipient settled and the address's bounce counted, both or neither. */
function* bounceSteps(postId: string, subscriberId: string, owner: string, changes: Settled, now: number): Steps<boolean> {
  if (!(yield* settleSteps(postId, subscriberId, owner, changes))) return false;
  yield* ask('newsletters', 'countBounce', subscriberId, BOUNCES_TO_STOP, now);
  return true;
}

/** One day of subscribers over time (the stats screen's chart). */
export interface SubscriberDay {
  day: string;
  subscribed: number;
  unsubscribed: number;
}

export { BOUNCES_TO_STOP, type SendView, type SubscriberCounts, type SubscriberView } from './rules.js';

/** The job that sends a post's newsletter: claims its recipients in batches until none is due. */
export const NEWSLETTER_SEND = 'newsletter-send';
export const NEWSLETTER_JOB_ATTEMPTS = 10;

export interface NewsletterSendPayload {
  postId: string;
}

/** A confirmation mail to queue in the transaction of the sign-up (the mail module's outbox). */
export interface ConfirmationRequest {
  site: Site;
  email: string;
  /** The one-time token of the link, in clear: only in the mail, never stored or logged. */
  token: string;
}

export interface NewsletterStoreOptions {
  now?: () => number;
  /** Steps that queue the confirmation mail, inside the sign-up's transaction. */
  confirmationMail?: (request: ConfirmationRequest) => Steps<void>;
  /** Steps run in the transaction that finishes a send (the webhook's `newsletter.sent`). */
  onSent?: (siteId: string, postId: string, progress: SendView) => Steps<void>;
  /** Told once a transaction that queued a send has committed (the plugin wakes its loop). */
  onQueued?: () => void;
}

export interface ImportReport {
  imported: number;
  problems: ImportProblem[];
}

/** What a subscribe request did; the answer to the reader is the same in every case. */
export type SubscribeOutcome = 'confirmation-sent' | 'confirmation-recent' | 'already-active';

/** What a recipient's attempt came to (the sender decides it from the SMTP answer). */
export type RecipientOutcome = { status: 'sent' } | { status: 'retry'; error: string; at: number } | { status: 'failed' | 'bounced'; error: string };

/** Recipients a claim takes at once. */
export const CLAIM_BATCH = 50;

/**
 * Subscribers of each site (double opt-in, unsubscribe, import, export) and the newsletter of
 * each post: a send made in the transaction of its first publication, with a row per
 * recipient, claimed in batches by `newsletter-send` jobs, so that a send stopped anywhere
 * resumes where it stopped. The clock is the one given, never the database's.
 */
export class NewsletterStore {
  private readonly now: () => number;

  constructor(
    private readonly db: StepDatabase,
    private readonly options: NewsletterStoreOptions,
    private readonly queue: { soleWorker: boolean },
  ) {
    this.now = options.now ?? Date.now;
  }

  get soleWorker(): boolean {
    return this.queue.soleWorker;
  }

  // ---- readers -------------------------------------------------------------------------------

  /**
   * A sign-up (double opt-in): a new or lapsed address becomes pending with a confirmation
   * mail; a pending one gets a new link unless it got one within the hour; an active one
   * nothing. The caller answers the reader the same in every case.
   */
  subscribe(site: Site, email: string, source: SubscriberSource): Promise<SubscribeOutcome> {
    const now = new Date(this.now());
    const mail = this.options.confirmationMail;
    return this.db.write(function* () {
      const current = yield* ask('newsletters', 'subscriberByEmail', site.id, email, true);
      if (current?.status === 'active') return 'already-active' as const;
      if (current?.confirmSentAt && now.getTime() - current.confirmSentAt.getTime() < CONFIRM_RESEND_MS) return 'confirmation-recent' as const;
      const token = newToken();
      if (!current) {
        yield* ask('newsletters', 'insertSubscribers', [newSubscriberRow(site.id, email, source, now, token)]);
      } else {
        // A lapsed address (unsubscribed, bouncing) starts over: a resubscribe needs a new confirmation.
        yield* ask('newsletters', 'updateSubscriber', current.id, {
          status: 'pending',
          consentSource: source,
          confirmTokenHash: tokenHash(token),
          confirmExpiresAt: new Date(now.getTime() + CONFIRM_TTL_MS),
          confirmSentAt: now,
          bounces: current.status === 'bouncing' ? 0 : current.bounces,
          updatedAt: now,
        });
      }
      if (mail) yield* mail({ site, email, token });
      return 'confirmation-sent' as const;
    });
  }

  /** Follows a confirmation link: the subscriber of that token, now active; null for an unknown, used or expired one. */
  confirm(token: string): Promise<SubscriberRow | null> {
    const now = new Date(this.now());
    return this.db.write(function* () {
      const row = yield* ask('newsletters', 'subscriberByConfirmHash', tokenHash(token), true);
      if (!row || row.status !== 'pending' || !row.confirmExpiresAt || row.confirmExpiresAt.getTime() < now.getTime()) return null;
      const changes = { status: 'active' as const, consentedAt: now, confirmTokenHash: null, confirmExpiresAt: null, updatedAt: now };
      yield* ask('newsletters', 'updateSubscriber', row.id, changes);
      return { ...row, ...changes };
    });
  }

  /** Whether an unsubscribe token belongs to a subscriber (the GET page asks before it acts). */
  async unsubscribeTarget(token: string): Promise<{ siteId: string; email: string } | null> {
    const row = await this.db.read(() => ask('newsletters', 'subscriberByUnsubscribeToken', token, false));
    return row ? { siteId: row.siteId, email: row.email } : null;
  }

  /** Unsubscribes the holder of the token at once; nothing for an unknown token (the caller answers the same). */
  unsubscribe(token: string): Promise<void> {
    const now = new Date(this.now());
    return this.db.write(function* () {
      const row = yield* ask('newsletters', 'subscriberByUnsubscribeToken', token, true);
      if (!row || row.status === 'unsubscribed') return;
      yield* ask('newsletters', 'updateSubscriber', row.id, { status: 'unsubscribed', confirmTokenHash: null, confirmExpiresAt: null, updatedAt: now });
    });
  }

  /** Forgets sign-ups never confirmed within CONFIRM_TTL_MS. */
  purgeExpired(): Promise<number> {
    const now = this.now();
    return this.db.read(() => ask('newsletters', 'purgeExpired', now));
  }

  // ---- staff ---------------------------------------------------------------------------------

  list(siteId: string, query: SubscriberQuery): Promise<Page<SubscriberView>> {
    const { page, limit, status, q } = query;
    return this.db.read(function* () {
      const { total, rows } = yield* ask('newsletters', 'subscriberPage', siteId, status, q?.trim() || undefined, (page - 1) * limit, limit);
      return { items: rows.map(subscriberView), pagination: { page, limit, total, pages: Math.ceil(total / limit) } };
    });
  }

  counts(siteId: string): Promise<SubscriberCounts> {
    return this.db.read(() => countsOf(siteId));
  }

  /**
   * Subscribers over time: per day of `range` in `timeZone`, the sign-ups confirmed (or imported)
   * and the unsubscribes, and how many are active now. An address that unsubscribed and came
   * back counts on the day of its latest confirmation only (no history of each change is kept).
   */
  async overTime(siteId: string, range: DayRange, timeZone: string): Promise<{ days: SubscriberDay[]; active: number }> {
    // A day in any time zone lies within 14 hours of the same UTC day.
    const slack = 14 * 3_600_000;
    const from = parseDay(range.from) - slack;
    const to = parseDay(range.to) + 86_400_000 + slack;
    const { moves, counts } = await this.db.read(function* () {
      const moves = yield* ask('newsletters', 'subscriberMoves', siteId, from, to);
      const counts = yield* countsOf(siteId);
      return { moves, counts };
    });
    const days = new Map(daysOf(range.from, range.to).map((day): [string, SubscriberDay] => [day, { day, subscribed: 0, unsubscribed: 0 }]));
    for (const move of moves) {
      const confirmed = move.consentedAt && days.get(dayIn(timeZone, move.consentedAt.getTime()));
      if (confirmed) confirmed.subscribed++;
      const left = move.status === 'unsubscribed' && days.get(dayIn(timeZone, move.updatedAt.getTime()));
      if (left) left.unsubscribed++;
    }
    return { days: [...days.values()], active: counts.active };
  }

  /** Erases the address (and its place in any send under way). */
  async delete(siteId: string, subscriberId: string): Promise<void> {
    const deleted = await this.db.read(() => ask('newsletters', 'deleteSubscriber', siteId, subscriberId));
    if (!deleted) throw notFound('subscriber');
  }

  /** The site's subscribers as CSV, a page of rows at a time (memory stays flat however many there are). */
  async *exportCsv(siteId: string): AsyncGenerator<string> {
    yield CSV_HEADER.join(',') + '\r\n';
    let after = '';
    for (;;) {
      const from = after;
      const rows = await this.db.read(() => ask('newsletters', 'subscribersAfter', siteId, from, 500));
      if (rows.length === 0) return;
      yield rows.map(csvLine).join('');
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Imports a CSV of addresses as active subscribers whose consent the importer vouches for.
   * Lines it cannot take (not an address, twice in the file, already a subscriber) are
   * reported and skipped; the rest go in one transaction, all or none.
   */
  importCsv(siteId: string, text: string): Promise<ImportReport> {
    const { emails, problems } = parseImport(text);
    const now = new Date(this.now());
    return this.db.write(function* () {
      const existing = new Set(emails.length ? yield* ask('newsletters', 'existingEmails', siteId, emails.map((entry) => entry.email)) : []);
      const fresh = emails.filter((entry) => !existing.has(entry.email));
      const report = [...problems, ...emails.filter((entry) => existing.has(entry.email)).map((entry) => ({ ...entry, reason: 'exists' as const }))].sort((a, b) => a.line - b.line);
      if (fresh.length) yield* ask('newsletters', 'insertSubscribers', fresh.map((entry) => newSubscriberRow(siteId, entry.email, 'import', now, null)));
      return { imported: fresh.length, problems: report };
    });
  }

  // ---- sends ---------------------------------------------------------------------------------

  /**
   * A post change (steps inside its transaction): the first publication of a public post, on a
   * site with newsletters on, unless the post opts out, makes its send, one recipient row per
   * confirmed subscriber, and the job that mails them. A post has one send, ever (its key).
   */
  *postChanged(change: PostChange): Steps<void> {
    const { before, after } = change;
    if (!after || after.isDraft || after.publishedAt === null || (before !== null && before.publishedAt !== null)) return;
    if (!after.sendNewsletter || after.visibility !== 'public') return;
    const site = yield* ask('sites', 'find', change.siteId);
    if (!site?.newsletterEnabled) return;
    const now = change.at;
    const send = { postId: after.id, siteId: change.siteId, status: 'sending' as const, recipients: 0, createdAt: now, finishedAt: null };
    if (!(yield* ask('newsletters', 'insertSend', send))) return;
    const recipients = yield* ask('newsletters', 'insertRecipients', change.siteId, after.id, now.getTime());
    yield* ask('newsletters', 'setRecipients', after.id, recipients);
    const payload: NewsletterSendPayload = { postId: after.id };
    yield* enqueueSteps(change.siteId, [{ kind: NEWSLETTER_SEND, payload, scheduledFor: now, groupId: after.id }], NEWSLETTER_JOB_ATTEMPTS, now);
    const { onQueued } = this.options;
    if (onQueued) yield* afterCommit(onQueued);
  }

  /** A post's send as GET /api/v1/posts/:id/newsletter shows it (`none` when it has none). */
  progress(siteId: string, postId: string): Promise<SendView> {
    return this.db.read(function* () {
      if (!(yield* ask('posts', 'find', siteId, postId))) throw notFound('post');
      const send = yield* ask('newsletters', 'send', siteId, postId);
      return sendView(send, send ? yield* ask('newsletters', 'sendCounts', postId) : null);
    });
  }

  /** Takes the next recipients of a send (see the port's claimRecipients). */
  claim(postId: string, owner: string, limit: number, claimMs: number, takeAll: boolean): Promise<NewsletterRecipientRow[]> {
    const now = this.now();
    return this.db.read(() => ask('newsletters', 'claimRecipients', postId, owner, limit, now, now + claimMs, takeAll));
  }

  extendClaims(postId: string, owner: string, claimMs: number): Promise<void> {
    const until = this.now() + claimMs;
    return this.db.read(() => ask('newsletters', 'extendClaims', postId, owner, until));
  }

  /** Records what one recipient's mail came to; a permanent refusal counts against the address. False: the claim was lost. */
  settle(recipient: NewsletterRecipientRow, owner: string, outcome: RecipientOutcome): Promise<boolean> {
    const now = this.now();
    const changes =
      outcome.status === 'sent'
        ? { status: 'sent' as const, lastError: null, sentAt: new Date(now), nextAttemptAt: recipient.nextAttemptAt }
        : outcome.status === 'retry'
          ? { status: 'pending' as const, lastError: outcome.error, sentAt: null, nextAttemptAt: new Date(outcome.at) }
          : { status: outcome.status, lastError: outcome.error, sentAt: null, nextAttemptAt: recipient.nextAttemptAt };
    // One statement per recipient, the bounce counted with it when there is one. Its commit
    // need not wait for the disk: a crash of this service loses none of them (the database has
    // them); only a crash of the database server itself could, and its recipients would then
    // be mailed again.
    const { postId, subscriberId } = recipient;
    if (outcome.status !== 'bounced') return this.db.read(() => settleSteps(postId, subscriberId, owner, changes));
    return this.db.write(() => bounceSteps(postId, subscriberId, owner, changes, now));
  }

  /**
   * Steps of the job's success: the send is finished when no recipient is left to try (the
   * webhook's `newsletter.sent` in the same transaction), else another job is queued for the
   * earliest retry. Answers what the job keeps as its result.
   */
  *afterRun(siteId: string, postId: string): Steps<{ finished: boolean; nextAt: string | null }> {
    const send = yield* ask('newsletters', 'send', siteId, postId);
    if (!send || send.status === 'sent') return { finished: true, nextAt: null };
    const next = yield* ask('newsletters', 'nextDue', postId);
    if (next === null) {
      const now = this.now();
      if ((yield* ask('newsletters', 'finishSend', postId, now)) && this.options.onSent) {
        const counts = yield* ask('newsletters', 'sendCounts', postId);
        yield* this.options.onSent(siteId, postId, sendView({ ...send, status: 'sent', finishedAt: new Date(now) }, counts));
      }
      return { finished: true, nextAt: null };
    }
    const at = new Date(Math.max(next, this.now()));
    const payload: NewsletterSendPayload = { postId };
    yield* enqueueSteps(siteId, [{ kind: NEWSLETTER_SEND, payload, scheduledFor: at, groupId: postId }], NEWSLETTER_JOB_ATTEMPTS, new Date(this.now()));
    return { finished: false, nextAt: at.toISOString() };
  }
}

