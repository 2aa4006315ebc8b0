import type { Site } from '../db/schema.js';
import { AppError, validationError } from '../errors.js';
import { isAddress } from '../mail/rules.js';
import type { SpamGuard } from '../spam-guard/guard.js';
import type { SubscriberSource } from './statuses.js';
import type { NewsletterStore, SubscribeOutcome } from './store.js';

/*
 * A reader's sign-up, whichever way it came (the page's form, the content API): the spam
 * guard judges it, then the store makes it pending with a confirmation mail (double opt-in).
 * The answer is the same whether the address was new, pending or already subscribed, and for
 * what the guard silently takes as spam: only a refused proof (400) or a full window (429)
 * answers otherwise.
 */

export interface SignUpRequest {
  site: Site;
  email: string;
  source: Extract<SubscriberSource, 'form' | 'api'>;
  /** Counted in the guard's window under a keyed hash; never stored. */
  clientAddress: string;
  /** The proof-of-work widget's answer; absent without JavaScript. */
  proof?: string | null;
  honeypot?: string | null;
}

export interface SignUpDeps {
  guard: SpamGuard;
  newsletters: NewsletterStore;
  /** False without SMTP_URL: no confirmation can be mailed, so no sign-up is taken. */
  mailConfigured: boolean;
}

/** What happened, for the log and the tests; the reader is answered the same for all of them. */
export type SignUpOutcome = SubscribeOutcome | 'spam';

export const newsletterOff = () => new AppError(404, 'NOT_FOUND', 'This site has no newsletter');
export const newsletterUnavailable = () =>
  new AppError(503, 'MAIL_NOT_CONFIGURED', 'Sign-ups are closed for now: this service cannot send mail (SMTP_URL is unset)');

/** The address as subscribers are kept: trimmed, folded to lower case; a 400 naming `email` when it is not one address. */
export function signUpAddress(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!isAddress(email)) throw validationError('Enter one email address', [{ path: '/body/email', message: 'must be one email address' }]);
  return email;
}

export async function signUp(deps: SignUpDeps, request: SignUpRequest): Promise<SignUpOutcome> {
  const { site } = request;
  if (!site.newsletterEnabled) throw newsletterOff();
  const email = signUpAddress(request.email);
  if (!deps.mailConfigured) throw newsletterUnavailable();
  const verdict = await deps.guard.check({
    siteId: site.id,
    form: 'subscribe',
    clientAddress: request.clientAddress,
    proof: request.proof,
    honeypot: request.honeypot,
    // No free text: links and blocked words are for what others read.
    texts: [],
    blockedWords: [],
  });
  if (verdict.outcome === 'refuse') {
    if (verdict.status === 429) throw new AppError(429, 'RATE_LIMITED', `Too many sign-ups from this address: ${verdict.reason}`, { retryAfter: verdict.retryAfterSeconds });
    throw validationError('The form could not be checked: reload the page and try again', [{ path: `/body/${verdict.field}`, message: verdict.reason }]);
  }
  if (verdict.outcome === 'spam') return 'spam';
  // Held (no proof: a browser without JavaScript) is still a sign-up: the confirmation mail
  // itself asks the address's owner, and at most one goes to an address an hour.
  return deps.newsletters.subscribe(site, email, request.source);
}
