import { createHmac, randomBytes } from 'node:crypto';
import { createChallenge, randomInt, verifySolution, type Challenge, type Payload } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { ask, type StepDatabase } from '../db/steps.js';
import { blockedWordReason, fillTimeReason, honeypotReason, linksReason, MAX_LINKS, PROOF_FIELD } from './rules.js';

export type { Challenge };

/** The proof of work: SHA-256 once per attempt, the counter to find drawn up to the difficulty. */
const ALGORITHM = 'SHA-256';
/** Names of the guard's secrets in the database (one signs challenges, one their derived keys). */
const SIGNING_KEY = 'challenge-signature';
const KEY_SIGNING_KEY = 'challenge-key-signature';
const ADDRESS_KEY = 'client-window';

export interface SpamGuardOptions {
  /** Highest counter a challenge hides (SPAM_GUARD_DIFFICULTY): a browser tries about half of it on average. */
  difficulty: number;
  /** How long a challenge may be answered after it was issued. */
  challengeTtlMs: number;
  /** Least time between a challenge's issue (the form shown) and the submission (SPAM_GUARD_MIN_FILL_SECONDS). */
  minFillMs: number;
  /** Most submissions per client address and form in a window (SPAM_GUARD_RATE_MAX; 0: no limit). */
  rateMax: number;
  rateWindowMs: number;
  /** Most links before a submission waits for a person. */
  maxLinks?: number;
  /** Milliseconds since the epoch (tests). */
  clock?: () => number;
}

/** What a form submits for the guard to judge. */
export interface Submission {
  siteId: string;
  /** Which form (`comment`, `subscribe`): a challenge issued for one is no good for another. */
  form: string;
  /** Counted in a window under a keyed hash; never stored. */
  clientAddress: string;
  /** The widget's answer (base64 JSON); absent when the browser ran no script. */
  proof?: string | null;
  /** The honeypot field's value. */
  honeypot?: string | null;
  /** The free texts to look for links and blocked words in (a comment's name and body, say). */
  texts: readonly string[];
  /** The site's blocked words and phrases. */
  blockedWords: readonly string[];
}

/**
 * The guard's judgement, each with the reason staff are shown:
 * - `pass`: nothing against it;
 * - `hold`: accept, but let a person decide (no proof of work, too many links, an expired challenge);
 * - `spam`: accept silently as spam (honeypot, too fast, a blocked word): a robot learns nothing;
 * - `refuse`: do not accept (a forged or replayed proof: 400 naming `field`; too many submissions: 429).
 */
export type Verdict =
  | { outcome: 'pass' }
  | { outcome: 'hold'; reason: string }
  | { outcome: 'spam'; reason: string }
  | { outcome: 'refuse'; status: 400; field: string; reason: string }
  | { outcome: 'refuse'; status: 429; reason: string; retryAfterSeconds: number };

type ProofCheck = { ok: true; shownAt: number } | { ok: false; verdict: Verdict };

/** A challenge's own data: which site and form it is for, and when it was issued (the form shown). */
interface ChallengeData {
  site: string;
  form: string;
  issuedAt: number;
}

function decodeProof(proof: string): Payload | null {
  try {
    const payload = JSON.parse(Buffer.from(proof, 'base64').toString('utf8')) as Payload;
    if (!payload || typeof payload !== 'object' || !payload.challenge?.parameters || !payload.solution) return null;
    return payload;
  } catch {
    return null;
  }
}

/**
 * The spam guard of the public forms (comments, newsletter sign-up), with no outside service:
 * an ALTCHA proof-of-work challenge signed per form shown, each answerable once (remembered
 * in the database until it expires, so every instance refuses a replay), a honeypot, a
 * minimum fill time, a link count, the site's blocked words and a window per client address.
 */
export class SpamGuard {
  private readonly clock: () => number;
  private secrets: Promise<{ signature: string; keySignature: string; address: string }> | null = null;

  constructor(
    private readonly db: StepDatabase,
    private readonly options: SpamGuardOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /** The guard's settings (the widget is told the field names; tests read the difficulty). */
  get settings(): Readonly<SpamGuardOptions> {
    return this.options;
  }

  /** The secrets shared by every instance: made by the first that needs them, kept in the database. */
  private keys() {
    this.secrets ??= (async () => {
      const now = new Date(this.clock());
      const secret = (name: string) => this.db.read(() => ask('spamGuard', 'key', name, randomBytes(32).toString('base64url'), now));
      return { signature: await secret(SIGNING_KEY), keySignature: await secret(KEY_SIGNING_KEY), address: await secret(ADDRESS_KEY) };
    })().catch((error: unknown) => {
      this.secrets = null;
      throw error;
    });
    return this.secrets;
  }

  /** A new signed challenge for `form` of `siteId`, issued now (a form being shown). */
  async challenge(siteId: string, form: string): Promise<Challenge> {
    const { signature, keySignature } = await this.keys();
    const now = this.clock();
    const { difficulty } = this.options;
    const data: ChallengeData = { site: siteId, form, issuedAt: now };
    return createChallenge({
      algorithm: ALGORITHM,
      cost: 1,
      counter: randomInt(difficulty, Math.ceil(difficulty / 2)),
      deriveKey,
      data: { ...data },
      expiresAt: new Date(now + this.options.challengeTtlMs),
      hmacSignatureSecret: signature,
      hmacKeySignatureSecret: keySignature,
    });
  }

  /** Judges a submission (see Verdict); counts it in its client's window first. */
  async check(submission: Submission): Promise<Verdict> {
    const now = this.clock();
    const limited = await this.countInWindow(submission, now);
    if (limited) return limited;

    const honeypot = honeypotReason(submission.honeypot);
    if (honeypot) return { outcome: 'spam', reason: honeypot };

    let shownAt: number | null = null;
    if (submission.proof) {
      const proof = await this.checkProof(submission.proof, submission.siteId, submission.form, now);
      if (!proof.ok) return proof.verdict;
      shownAt = proof.shownAt;
    }
    const tooFast = shownAt === null ? null : fillTimeReason(shownAt, now, this.options.minFillMs);
    if (tooFast) return { outcome: 'spam', reason: tooFast };

    const blocked = blockedWordReason(submission.texts, submission.blockedWords);
    if (blocked) return { outcome: 'spam', reason: blocked };
    const links = linksReason(submission.texts, this.options.maxLinks ?? MAX_LINKS);
    if (links) return { outcome: 'hold', reason: links };
    if (shownAt === null) return { outcome: 'hold', reason: 'no proof of work (sent without JavaScript)' };
    return { outcome: 'pass' };
  }

  /** Forgets expired challenges and finished windows; answers how many rows went. */
  purge(): Promise<number> {
    const now = this.clock();
    return this.db.read(() => ask('spamGuard', 'purge', new Date(now), new Date(now - this.options.rateWindowMs)));
  }

  private async countInWindow(submission: Submission, now: number): Promise<Verdict | null> {
    const { rateMax, rateWindowMs } = this.options;
    if (rateMax <= 0) return null;
    const { address } = await this.keys();
    // A keyed hash: the window can be found again for the same address, the address never read back.
    const key = createHmac('sha256', address).update(`${submission.siteId}\n${submission.form}\n${submission.clientAddress}`).digest('base64url');
    const window = await this.db.read(() => ask('spamGuard', 'countSubmission', key, new Date(now), new Date(now - rateWindowMs)));
    if (window.count <= rateMax) return null;
    const retryAfterSeconds = Math.max(1, Math.ceil((window.windowStart.getTime() + rateWindowMs - now) / 1000));
    return { outcome: 'refuse', status: 429, reason: `more than ${rateMax} submissions in ${Math.round(rateWindowMs / 1000)} s`, retryAfterSeconds };
  }

  private async checkProof(proof: string, siteId: string, form: string, now: number): Promise<ProofCheck> {
    const refuse = (reason: string): ProofCheck => ({ ok: false, verdict: { outcome: 'refuse', status: 400, field: PROOF_FIELD, reason } });
    const payload = decodeProof(proof);
    if (!payload) return refuse('the proof of work is not readable');
    const { parameters } = payload.challenge;
    if (typeof parameters.expiresAt !== 'number' || parameters.expiresAt * 1000 <= now) {
      return { ok: false, verdict: { outcome: 'hold', reason: 'the proof of work came after its challenge expired' } };
    }
    const { signature, keySignature } = await this.keys();
    let result;
    try {
      result = await verifySolution({ challenge: payload.challenge, solution: payload.solution, deriveKey, hmacSignatureSecret: signature, hmacKeySignatureSecret: keySignature });
    } catch {
      return refuse('the proof of work is not readable');
    }
    if (result.expired) return { ok: false, verdict: { outcome: 'hold', reason: 'the proof of work came after its challenge expired' } };
    if (!result.verified) return refuse(result.invalidSignature ? 'the challenge was not issued here' : 'the proof of work is wrong');
    const data = parameters.data as Partial<ChallengeData> | undefined;
    if (data?.site !== siteId || data.form !== form || typeof data.issuedAt !== 'number') return refuse('the challenge was issued for another form');
    const fresh = await this.db.read(() => ask('spamGuard', 'useChallenge', parameters.nonce, new Date(parameters.expiresAt! * 1000)));
    if (!fresh) return refuse('the challenge was already used');
    return { ok: true, shownAt: data.issuedAt };
  }
}
