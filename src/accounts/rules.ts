import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { AccountTokenRow, InvitationRow, SessionRow, UserRow } from '../db/schema.js';
import type { Column } from 'drizzle-orm';
import { AppError, validationError } from '../errors.js';
import { and, gt, isNotNull, isNull, lt, or } from '../db/orm.js';

/*
 * The rules of staff accounts: what an email and a password must be, how tokens are made and
 * stored, how long sessions and links live, who may do what, and when sign-in waits. Pure: the
 * store (store.ts) applies them; its adapters only read and write rows.
 */

/**
 * A newsroom's roles: `owner` (everything, the site's settings and staff too), `editor` (every
 * post), `author` (writes, publishes and deletes their own posts), `contributor` (writes their
 * own drafts and submits them for review; publishes nothing). See src/posts/permissions.ts.
 */
export const ROLES = ['owner', 'editor', 'author', 'contributor'] as const;
export type Role = (typeof ROLES)[number];

/** One site of a user, as the session shows it. */
export interface MemberSite {
  id: string;
  name: string;
  handle: string;
  role: Role;
}

/** A member of a site, as the users list shows it (`active`: a password is set). */
export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  active: boolean;
}

/** A session found by its token, with what a request needs of its user and current site. */
export interface SessionFound {
  session: SessionRow;
  email: string;
  site: { id: string; name: string; handle: string };
  /** The user's role on the session's site; null when the membership is gone. */
  role: Role | null;
}

/** Who a valid session cookie authenticates (what the auth plugin puts on the request). */
export interface SessionAuth {
  sessionId: string;
  userId: string;
  email: string;
  site: { id: string; name: string; handle: string };
  role: Role;
}

/** What GET /api/v1/auth/session answers. */
export interface SessionView {
  user: { id: string; email: string; displayName: string | null };
  site: { id: string; name: string; handle: string };
  role: Role;
  sites: MemberSite[];
}

export const MIN_PASSWORD_LENGTH = 10;
/** Longer passwords are refused before hashing: argon2 of a megabyte would be a free denial of service. */
export const MAX_PASSWORD_LENGTH = 1024;
const MAX_EMAIL_LENGTH = 254;
// One @, something on each side, a dot in the domain, no spaces: the rest is the mail server's business.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An email as stored and compared: trimmed and folded to lower case; 400 when it is not one. */
export function normalizeEmail(raw: string, field = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) {
    throw validationError(`${field} must be an email address`, [{ path: `/body/${field}`, message: 'must be an email address' }]);
  }
  return email;
}

/** A new password must be 10-1024 characters; 400 otherwise. */
export function checkNewPassword(password: string, field = 'password'): string {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    const message = `must be ${MIN_PASSWORD_LENGTH}-${MAX_PASSWORD_LENGTH} characters`;
    throw validationError(`${field} ${message}`, [{ path: `/body/${field}`, message }]);
  }
  return password;
}

export function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw validationError(`role must be one of ${ROLES.join(', ')}`, [{ path: '/body/role', message: `must be one of ${ROLES.join(', ')}` }]);
  return role as Role;
}

/** A new session or link token: 32 random bytes, base64url. Shown once (cookie, link), stored only as a hash. */
export const newToken = () => randomBytes(32).toString('base64url');
export const hashToken = (token: string) => hash('sha256', token, 'hex');

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** Setup and reset links work once, within this long. */
export const LINK_LIFETIME_MS = DAY_MS;
/** `last_seen_at` moves at most this often (a write per request would be a write per request). */
export const TOUCH_INTERVAL_MS = 60_000;

/** How long sessions live (SESSION_IDLE_HOURS, SESSION_MAX_DAYS). */
export interface SessionLifetimes {
  idleMs: number;
  maxMs: number;
}

export const DEFAULT_LIFETIMES: SessionLifetimes = { idleMs: 7 * DAY_MS, maxMs: 30 * DAY_MS };

/** Whether a session is still good at `now`: before its absolute end and not idle too long. */
export const sessionAlive = (session: SessionRow, now: number, lifetimes: SessionLifetimes) =>
  now < session.expiresAt.getTime() && now < session.lastSeenAt.getTime() + lifetimes.idleMs;

export const needsTouch = (session: SessionRow, now: number) => now - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS;

/** How long the cookie may be kept by the browser: the session's absolute end, in seconds from now. */
export const cookieMaxAgeSeconds = (expiresAt: Date, now: number) => Math.max(0, Math.floor((expiresAt.getTime() - now) / 1000));

export function newSessionRow(userId: string, siteId: string, tokenHash: string, now: Date, lifetimes: SessionLifetimes): SessionRow {
  return { id: randomUUID(), tokenHash, userId, siteId, createdAt: now, lastSeenAt: now, expiresAt: new Date(now.getTime() + lifetimes.maxMs) };
}

export function newUserRow(email: string, now: Date): UserRow {
  return { id: randomUUID(), email, passwordHash: null, displayName: null, createdAt: now, passwordChangedAt: null };
}

export function newTokenRow(userId: string, purpose: 'setup' | 'reset', tokenHash: string, now: Date): AccountTokenRow {
  return { tokenHash, userId, purpose, createdAt: now, expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS), usedAt: null };
}

/** Whether a link token can still be used at `now`. */
export const tokenUsable = (row: AccountTokenRow | undefined, now: number): row is AccountTokenRow => row !== undefined && row.usedAt === null && now < row.expiresAt.getTime();

/** An invitation can be accepted within this long of when it was (last) sent. */
export const INVITATION_LIFETIME_MS = 7 * DAY_MS;

/** An invitation as owners see it (the token never: it goes to the invited person). */
export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  sentAt: Date;
  expiresAt: Date;
  /** `pending` until it expires (`expired`: send it again for a new week). */
  status: 'pending' | 'expired';
}

export function newInvitationRow(siteId: string, email: string, role: Role, tokenHash: string, now: Date): InvitationRow {
  return { id: randomUUID(), siteId, email, role, tokenHash, createdAt: now, sentAt: now, expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS) };
}

export const invitationView = (row: InvitationRow, now: number): InvitationView => ({
  id: row.id,
  email: row.email,
  role: row.role as Role,
  createdAt: row.createdAt,
  sentAt: row.sentAt,
  expiresAt: row.expiresAt,
  status: now < row.expiresAt.getTime() ? 'pending' : 'expired',
});

/** Where an invitation leads: the admin UI's accept screen, the token in the fragment. */
export const acceptUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, '')}/admin/accept#token=${token}`;

/** Where a one-time link leads: the token in the fragment, which no server (nor its access log) receives. */
export const setupUrl = (baseUrl: string, token: string) => `${baseUrl.replace(/\/+$/, '')}/admin/setup#token=${token}`;

// ---- errors

export const SIGN_IN_FAILED = 'Email or password is wrong';
export const signInFailed = () => new AppError(401, 'UNAUTHORIZED', SIGN_IN_FAILED);
export const invalidToken = () => new AppError(400, 'INVALID_TOKEN', 'This link is invalid, expired or already used: ask for a new one');
export const invalidInvitation = () => new AppError(400, 'INVALID_TOKEN', 'This invitation is invalid, expired, revoked or already accepted: ask the site\'s owner to send it again');
export const forbidden = (message = 'Your role on this site does not allow this: an owner of the site may do it') => new AppError(403, 'FORBIDDEN', message);
export const lastOwner = () => new AppError(409, 'CONFLICT', 'A site keeps at least one owner: make another member owner first');

// ---- sign-in throttling

/**
 * Attempts in a window. `perEmailAddress`: one email from one client address (the tight limit:
 * a guesser at one address); `perEmail`: one email from any address (looser, so a stranger's
 * failures do not lock the owner out, yet a guesser spread over many addresses is held back);
 * `perAddress`: one address, whatever the email.
 */
export interface ThrottleLimits {
  perEmailAddress?: number;
  perEmail: number;
  perAddress: number;
  windowMs: number;
}

/** Sign-in: 5 attempts per email and address, 50 per email, 20 per address, in 15 minutes. */
export const DEFAULT_THROTTLE: ThrottleLimits = { perEmailAddress: 5, perEmail: 50, perAddress: 20, windowMs: 15 * 60_000 };

/** Most emails and addresses remembered at once: the oldest are forgotten first past it. */
const MAX_TRACKED = 100_000;

/** An attempt already counted (as a failure until said otherwise), whose password is being checked. */
export interface ThrottledAttempt {
  /** The password was right: this attempt stops counting and the email's failures from this address are cleared. */
  succeed(): void;
  /** The password was not checked after all (the hashing queue was full): this attempt stops counting. */
  cancel(): void;
}

/**
 * Failed sign-ins by email and address, by email and by address, in this process's memory (see
 * the README: each instance counts its own). An attempt is counted as it begins, before its
 * password is checked, so that attempts sent at the same moment cannot all pass the check of
 * the count; a right password takes its attempt back. Past a limit within the window, the next
 * attempt waits until the oldest one it counted leaves the window.
 */
export class SignInThrottle {
  private readonly byPair = new Map<string, number[]>();
  private readonly byEmail = new Map<string, number[]>();
  private readonly byAddress = new Map<string, number[]>();

  constructor(
    readonly limits: ThrottleLimits = DEFAULT_THROTTLE,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts an attempt for this email from this address now, or answers the seconds to wait
   * (nothing counted) when a limit is reached.
   */
  begin(email: string, address: string): { retryAfter: number; attempt?: undefined } | { retryAfter: 0; attempt: ThrottledAttempt } {
    const retryAfter = this.retryAfter(email, address);
    if (retryAfter > 0) return { retryAfter };
    const at = this.fail(email, address);
    const pair = pairKey(email, address);
    let settled = false;
    const takeBack = () => {
      if (settled) return false;
      settled = true;
      this.forget(this.byPair, pair, at);
      this.forget(this.byEmail, email, at);
      this.forget(this.byAddress, address, at);
      return true;
    };
    return {
      retryAfter: 0,
      attempt: {
        succeed: () => {
          if (takeBack()) this.byPair.delete(pair);
        },
        cancel: () => void takeBack(),
      },
    };
  }

  /** Seconds to wait before another attempt for this email from this address; 0: go ahead. */
  retryAfter(email: string, address: string): number {
    const now = this.now();
    const { perEmailAddress = 0, perEmail, perAddress } = this.limits;
    return Math.max(
      this.wait(this.byPair, pairKey(email, address), perEmailAddress, now),
      this.wait(this.byEmail, email, perEmail, now),
      this.wait(this.byAddress, address, perAddress, now),
    );
  }

  /** Counts a failure (an attempt) for this email from this address; answers when it was counted. */
  fail(email: string, address: string): number {
    const now = this.now();
    if (this.limits.perEmailAddress) this.record(this.byPair, pairKey(email, address), now);
    this.record(this.byEmail, email, now);
    this.record(this.byAddress, address, now);
    return now;
  }

  private recent(map: Map<string, number[]>, key: string, now: number): number[] {
    const times = (map.get(key) ?? []).filter((at) => now - at < this.limits.windowMs);
    if (times.length === 0) map.delete(key);
    else map.set(key, times);
    return times;
  }

  private wait(map: Map<string, number[]>, key: string, limit: number, now: number): number {
    if (limit <= 0) return 0;
    const times = this.recent(map, key, now);
    if (times.length < limit) return 0;
    const oldest = times[times.length - limit]!;
    return Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000));
  }

  private record(map: Map<string, number[]>, key: string, now: number): void {
    const times = this.recent(map, key, now);
    // Re-inserted last: the map's order is the order of last failure, for forgetting the oldest.
    map.delete(key);
    map.set(key, [...times, now]);
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value!);
  }

  /** Removes one attempt counted at `at`. */
  private forget(map: Map<string, number[]>, key: string, at: number): void {
    const times = map.get(key);
    const index = times?.indexOf(at) ?? -1;
    if (index < 0) return;
    times!.splice(index, 1);
    if (times!.length === 0) map.delete(key);
  }
}

const pairKey = (email: string, address: string) => `${address}\n${email}`;

// Conditions both databases' adapters put in their statements (written once here).

/** Sessions that ended: past their absolute end, or idle since before `idleBefore`. */
export const sessionEnded = (sessions: { expiresAt: Column; lastSeenAt: Column }, now: Date, idleBefore: Date) =>
  or(lt(sessions.expiresAt, now), lt(sessions.lastSeenAt, idleBefore));

/** One-time links that are spent: used, or expired before `now`. */
export const linkSpent = (tokens: { expiresAt: Column; usedAt: Column }, now: Date) => or(lt(tokens.expiresAt, now), isNotNull(tokens.usedAt));

/** A link still good at `at`: unused and unexpired. */
export const linkUsable = (tokens: { expiresAt: Column; usedAt: Column }, at: Date) => and(isNull(tokens.usedAt), gt(tokens.expiresAt, at));
