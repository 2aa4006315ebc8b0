import type { UserRow } from '../db/schema.js';
import { ask, inSavepoint, type StepDatabase, type Steps } from '../db/steps.js';
import { TakenMeanwhile } from './port.js';
import { conflict, notFound, validationError } from '../errors.js';
import { hashPassword, verifyPassword } from './passwords.js';
import {
  DEFAULT_LIFETIMES,
  INVITATION_LIFETIME_MS,
  checkNewPassword,
  checkRole,
  forbidden,
  hashToken,
  invalidInvitation,
  invalidToken,
  invitationView,
  newInvitationRow,
  lastOwner,
  needsTouch,
  newSessionRow,
  newToken,
  newTokenRow,
  newUserRow,
  normalizeEmail,
  sessionAlive,
  signInFailed,
  tokenUsable,
  type InvitationView,
  type Member,
  type MemberSite,
  type Role,
  type SessionAuth,
  type SessionLifetimes,
  type SessionView,
} from './rules.js';

export type { InvitationView, Member, MemberSite, Role, SessionAuth, SessionView };

/** An invitation just made or sent again: its token goes to the invited person only (mail, or an owner's link without mail). */
export interface SentInvitation {
  invitation: InvitationView;
  token: string;
}

export interface AccountStoreOptions {
  lifetimes?: SessionLifetimes;
  now?: () => number;
}

/** A new session: its token (for the cookie, shown once) and what it authenticates. */
export interface NewSession {
  token: string;
  auth: SessionAuth;
  expiresAt: Date;
}

/** A user as management answers show it. */
export interface UserInfo {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  active: boolean;
}

/** A session on the user's first site (oldest membership), or on `siteId` when given. 401 when the user belongs to no site. */
function* startSessionSteps(user: UserRow, siteId: string | null, now: Date, lifetimes: SessionLifetimes): Steps<NewSession> {
  const sites = yield* ask('accounts', 'sitesOf', user.id);
  const site = (siteId && sites.find((s) => s.id === siteId)) || sites[0];
  if (!site) throw signInFailed();
  // The user's ended sessions go as a new one starts: the table holds live sessions and few others.
  yield* ask('accounts', 'deleteEndedSessionsOf', user.id, now, new Date(now.getTime() - lifetimes.idleMs));
  const token = newToken();
  const row = newSessionRow(user.id, site.id, hashToken(token), now, lifetimes);
  yield* ask('accounts', 'insertSession', row);
  return {
    token,
    expiresAt: row.expiresAt,
    auth: { sessionId: row.id, userId: user.id, email: user.email, site: { id: site.id, name: site.name, handle: site.handle }, role: site.role },
  };
}

/** A 404 unless the user is a member of the site; answers the member. */
function* memberSteps(siteId: string, userId: string): Steps<{ user: UserRow; role: Role }> {
  const role = yield* ask('accounts', 'roleOn', userId, siteId);
  const user = role && (yield* ask('accounts', 'userById', userId));
  if (!role || !user) throw notFound('user');
  return { user, role };
}

/** 409 when `userId` is the site's last owner and would stop being one. Locks the site first, so two demotions cannot both pass. */
function* keepAnOwnerSteps(siteId: string, role: Role): Steps<void> {
  if (!(yield* ask('sites', 'lock', siteId))) throw notFound('site');
  if (role === 'owner' && (yield* ask('accounts', 'countOwners', siteId)) <= 1) throw lastOwner();
}

/** A fresh one-time link token for the user (earlier unused ones stop working). */
function* issueTokenSteps(userId: string, purpose: 'setup' | 'reset', now: Date): Steps<string> {
  yield* ask('accounts', 'dropTokensOf', userId);
  const token = newToken();
  yield* ask('accounts', 'insertToken', newTokenRow(userId, purpose, hashToken(token), now));
  return token;
}

/** Runs a write that another writer may have beaten (a unique key): its refusal becomes `answer()`, the transaction goes on. */
function* guardTaken(write: () => Steps<void>, answer: () => Error): Steps<void> {
  try {
    yield* inSavepoint(write);
  } catch (error) {
    if (error instanceof TakenMeanwhile) throw answer();
    throw error;
  }
}

/**
 * Adds a member to a site: an existing user (by email) gets the membership; a new one is created
 * with a setup link (its token answered, once). 409 when the user is already a member.
 */
export function* addMemberSteps(
  siteId: string,
  rawEmail: string,
  role: Role,
  now: Date,
  passwordHash: string | null = null,
): Steps<{ user: UserInfo; setupToken: string | null; created: boolean }> {
  const email = normalizeEmail(rawEmail);
  checkRole(role);
  if (!(yield* ask('sites', 'find', siteId))) throw notFound('site');
  let user = yield* ask('accounts', 'userByEmail', email);
  const created = !user;
  const taken = () => conflict(`${email} is already a member of this site`);
  if (!user) {
    const row = newUserRow(email, now);
    yield* guardTaken(() => ask('accounts', 'insertUser', row), () => conflict(`${email} was added by someone else meanwhile: try again`));
    user = row;
  } else if ((yield* ask('accounts', 'roleOn', user.id, siteId)) !== undefined) {
    throw taken();
  }
  const userId = user.id;
  yield* guardTaken(() => ask('accounts', 'insertMembership', { userId, siteId, role, createdAt: now }), taken);
  if (passwordHash !== null && user.passwordHash === null) {
    yield* ask('accounts', 'setPassword', user.id, passwordHash, now);
    user = { ...user, passwordHash };
  }
  const setupToken = user.passwordHash === null ? yield* issueTokenSteps(user.id, 'setup', now) : null;
  return { user: { id: user.id, email: user.email, role, createdAt: now, active: user.passwordHash !== null }, setupToken, created };
}

/**
 * Staff users, their memberships of sites, their sessions and their one-time links, on either
 * database. Passwords are hashed and checked outside transactions (argon2 takes tens of
 * milliseconds and much memory); the store holds no HTTP: the routes set cookies and statuses.
 */
export class AccountStore {
  readonly lifetimes: SessionLifetimes;
  private readonly now: () => number;

  constructor(
    private readonly db: StepDatabase,
    options: AccountStoreOptions = {},
  ) {
    this.lifetimes = options.lifetimes ?? DEFAULT_LIFETIMES;
    this.now = options.now ?? Date.now;
  }

  // ---- signing in and out ------------------------------------------------------------------

  /**
   * A new session for the email and password, or 401 with one message for an unknown email, a
   * wrong password and a user without one: each costs one argon2 verification.
   */
  async signIn(rawEmail: string, password: string): Promise<NewSession> {
    const email = rawEmail.trim().toLowerCase();
    const user = await this.db.read(() => ask('accounts', 'userByEmail', email));
    const ok = await verifyPassword(user?.passwordHash ?? null, password);
    if (!ok || !user) throw signInFailed();
    const { lifetimes } = this;
    const now = new Date(this.now());
    return this.db.write(() => startSessionSteps(user, null, now, lifetimes));
  }

  /** Who a session token belongs to; undefined when unknown, expired (then deleted) or no longer a member of its site. */
  async authenticate(token: string): Promise<SessionAuth | undefined> {
    const found = await this.db.read(() => ask('accounts', 'sessionByHash', hashToken(token)));
    if (!found) return undefined;
    const now = this.now();
    const { session } = found;
    if (!sessionAlive(session, now, this.lifetimes)) {
      await this.db.write(() => ask('accounts', 'deleteSession', session.id));
      return undefined;
    }
    if (found.role === null) return undefined;
    if (needsTouch(session, now)) await this.db.write(() => ask('accounts', 'touchSession', session.id, new Date(now)));
    return { sessionId: session.id, userId: session.userId, email: found.email, site: found.site, role: found.role };
  }

  /** What the session shows: the user, the current site and role, and every site of the user. */
  async describe(auth: SessionAuth): Promise<SessionView> {
    const [sites, user] = await this.db.read(function* () {
      return [yield* ask('accounts', 'sitesOf', auth.userId), yield* ask('accounts', 'userById', auth.userId)] as const;
    });
    return { user: { id: auth.userId, email: auth.email, displayName: user?.displayName ?? null }, site: auth.site, role: auth.role, sites };
  }

  /**
   * Sets the name readers see on the user's posts (trimmed; empty: none). The pages of the
   * user's sites move to a new version, so none shows the old name.
   */
  setDisplayName(userId: string, displayName: string | null, now = new Date()): Promise<void> {
    const name = displayName?.trim() || null;
    return this.db.write(function* () {
      yield* ask('accounts', 'setDisplayName', userId, name);
      for (const site of yield* ask('accounts', 'sitesOf', userId)) yield* ask('sites', 'touchContent', site.id, now);
    });
  }

  /**
   * Deletes every user's ended sessions and the one-time links used or expired: those nobody
   * comes back to (a session is otherwise deleted when it is next used, or when its user signs
   * in again). Answers how many rows went.
   */
  purgeEnded(): Promise<number> {
    const now = new Date(this.now());
    const idleBefore = new Date(now.getTime() - this.lifetimes.idleMs);
    return this.db.write(() => ask('accounts', 'deleteEnded', now, idleBefore));
  }

  /** Ends the session on the server. */
  signOut(sessionId: string): Promise<void> {
    return this.db.write(() => ask('accounts', 'deleteSession', sessionId));
  }

  /** Moves the session to another site of the user; 403 when the user is no member of it. */
  async switchSite(auth: SessionAuth, siteId: string): Promise<SessionAuth> {
    return this.db.write(function* () {
      const sites = yield* ask('accounts', 'sitesOf', auth.userId);
      const site = sites.find((s) => s.id === siteId);
      if (!site) throw forbidden('You are not a member of that site');
      yield* ask('accounts', 'setSessionSite', auth.sessionId, siteId);
      return { ...auth, site: { id: site.id, name: site.name, handle: site.handle }, role: site.role };
    });
  }

  /**
   * Uses a one-time setup or reset link: sets the password, ends every session of the user and
   * starts a new one. 400 INVALID_TOKEN for an unknown, used or expired link (also when two
   * requests race for it: one wins).
   */
  async useLink(token: string, password: string): Promise<NewSession> {
    checkNewPassword(password);
    const tokenHash = hashToken(token);
    const row = await this.db.read(() => ask('accounts', 'tokenByHash', tokenHash));
    if (!tokenUsable(row, this.now())) throw invalidToken();
    const passwordHash = await hashPassword(password);
    const { lifetimes } = this;
    const now = new Date(this.now());
    return this.db.write(function* () {
      if (!(yield* ask('accounts', 'useToken', tokenHash, now))) throw invalidToken();
      const user = yield* ask('accounts', 'userById', row.userId);
      if (!user) throw invalidToken();
      yield* ask('accounts', 'setPassword', user.id, passwordHash, now);
      yield* ask('accounts', 'deleteSessionsOf', user.id, null, null);
      return yield* startSessionSteps({ ...user, passwordHash }, null, now, lifetimes);
    });
  }

  /** Changes the password of a signed-in user (who proves the current one); ends the user's other sessions. */
  async changePassword(auth: SessionAuth, currentPassword: string, newPassword: string): Promise<void> {
    checkNewPassword(newPassword, 'newPassword');
    const user = await this.db.read(() => ask('accounts', 'userById', auth.userId));
    if (!user || !(await verifyPassword(user.passwordHash, currentPassword))) {
      throw wrongCurrentPassword();
    }
    const passwordHash = await hashPassword(newPassword);
    const now = new Date(this.now());
    await this.db.write(function* () {
      yield* ask('accounts', 'setPassword', auth.userId, passwordHash, now);
      yield* ask('accounts', 'deleteSessionsOf', auth.userId, auth.sessionId, null);
    });
  }

  // ---- members of a site (owners, the CLI) -------------------------------------------------

  listMembers(siteId: string): Promise<Member[]> {
    return this.db.read(() => ask('accounts', 'membersOf', siteId));
  }

  /** See addMemberSteps; with `password`, a new user gets it instead of a setup link. */
  async addMember(siteId: string, email: string, role: Role, password?: string): Promise<{ user: UserInfo; setupToken: string | null; created: boolean }> {
    const passwordHash = password === undefined ? null : await hashPassword(checkNewPassword(password));
    const now = new Date(this.now());
    return this.db.write(() => addMemberSteps(siteId, email, role, now, passwordHash));
  }

  /** Changes a member's role; 409 for demoting the site's last owner. */
  setRole(siteId: string, userId: string, role: Role): Promise<UserInfo> {
    checkRole(role);
    return this.db.write(function* () {
      const member = yield* memberSteps(siteId, userId);
      if (member.role !== role) {
        yield* keepAnOwnerSteps(siteId, member.role);
        yield* ask('accounts', 'setRole', userId, siteId, role);
      }
      const { user } = member;
      const info = (yield* ask('accounts', 'membersOf', siteId)).find((m) => m.id === user.id)!;
      return { ...info, role };
    });
  }

  /** Removes a member from a site (its sessions there end); 409 for the site's last owner. */
  removeMember(siteId: string, userId: string): Promise<void> {
    return this.db.write(function* () {
      const member = yield* memberSteps(siteId, userId);
      yield* keepAnOwnerSteps(siteId, member.role);
      yield* ask('accounts', 'deleteMembership', userId, siteId);
      yield* ask('accounts', 'deleteSessionsOf', userId, null, siteId);
    });
  }

  // ---- invitations (owners invite; the person accepts) --------------------------------------

  /**
   * Invites an email to the site with a role: a new invitation, or the pending one sent again
   * (a new token and a new week, the role as now given). Nothing about the email's account, if
   * any, is looked at beyond whether it is already a member of this very site (409): the answer
   * is the same for an email with an account elsewhere and for one with none.
   */
  invite(siteId: string, rawEmail: string, role: Role): Promise<SentInvitation> {
    const email = normalizeEmail(rawEmail);
    checkRole(role);
    const now = new Date(this.now());
    return this.db.write(function* () {
      if (!(yield* ask('sites', 'find', siteId))) throw notFound('site');
      const user = yield* ask('accounts', 'userByEmail', email);
      if (user && (yield* ask('accounts', 'roleOn', user.id, siteId)) !== undefined) throw conflict(`${email} is already a member of this site`);
      const token = newToken();
      const existing = yield* ask('accounts', 'invitationOf', siteId, email);
      if (existing) {
        const change = { role, tokenHash: hashToken(token), sentAt: now, expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS) };
        yield* ask('accounts', 'renewInvitation', existing.id, change);
        return { invitation: invitationView({ ...existing, ...change }, now.getTime()), token };
      }
      const row = newInvitationRow(siteId, email, role, hashToken(token), now);
      yield* guardTaken(() => ask('accounts', 'insertInvitation', row), () => conflict(`${email} was invited by someone else meanwhile: see the pending invitations`));
      return { invitation: invitationView(row, now.getTime()), token };
    });
  }

  /** Sends a pending (or expired) invitation again: a new token (the old link stops working) and a new week. */
  resendInvitation(siteId: string, invitationId: string): Promise<SentInvitation> {
    const now = new Date(this.now());
    return this.db.write(function* () {
      const row = yield* ask('accounts', 'invitationById', siteId, invitationId);
      if (!row) throw notFound('invitation');
      const token = newToken();
      const change = { role: row.role, tokenHash: hashToken(token), sentAt: now, expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS) };
      yield* ask('accounts', 'renewInvitation', row.id, change);
      return { invitation: invitationView({ ...row, ...change }, now.getTime()), token };
    });
  }

  /** Revokes an invitation: its link stops working. */
  async revokeInvitation(siteId: string, invitationId: string): Promise<void> {
    await this.db.write(function* () {
      const row = yield* ask('accounts', 'invitationById', siteId, invitationId);
      if (!row || !(yield* ask('accounts', 'deleteInvitation', row.id))) throw notFound('invitation');
    });
  }

  async listInvitations(siteId: string): Promise<InvitationView[]> {
    const now = this.now();
    return (await this.db.read(() => ask('accounts', 'invitationsOf', siteId))).map((row) => invitationView(row, now));
  }

  /** The invitation of a token, still good (else 400 INVALID_TOKEN): its email, site and role. */
  async invitationFor(token: string): Promise<{ id: string; email: string; siteId: string; role: Role }> {
    const row = await this.db.read(() => ask('accounts', 'invitationByHash', hashToken(token)));
    if (!row || this.now() >= row.expiresAt.getTime()) throw invalidInvitation();
    return { id: row.id, email: row.email, siteId: row.siteId, role: row.role as Role };
  }

  /**
   * Accepts an invitation with its token. Signed in (`auth`): the session's user must be the
   * invited email (403 otherwise); the membership is added and the session moves to the site.
   * Not signed in, with `password`: an email with an account signs in with that account's own
   * password (401 with sign-in's message when wrong; nothing is ever set or reset), and an
   * email without one gets a new account with this password, on this one site. The invitation
   * is used once (of two requests at once, one wins).
   */
  async acceptInvitation(token: string, input: { auth?: SessionAuth; password?: string }): Promise<NewSession | SessionAuth> {
    const invitation = await this.invitationFor(token);
    const { lifetimes } = this;
    const now = new Date(this.now());
    const join = function* (userId: string): Steps<void> {
      if (!(yield* ask('accounts', 'deleteInvitation', invitation.id))) throw invalidInvitation();
      // Already a member (the CLI added them meanwhile): the invitation is spent all the same.
      if ((yield* ask('accounts', 'roleOn', userId, invitation.siteId)) === undefined) {
        yield* guardTaken(() => ask('accounts', 'insertMembership', { userId, siteId: invitation.siteId, role: invitation.role, createdAt: now }), () => conflict('You joined this site meanwhile'));
      }
    };
    const { auth, password } = input;
    if (auth) {
      if (auth.email !== invitation.email) throw forbidden('This invitation is for another email address: sign out, then open the link again');
      return this.db.write(function* () {
        yield* join(auth.userId);
        const sites = yield* ask('accounts', 'sitesOf', auth.userId);
        const site = sites.find((s) => s.id === invitation.siteId)!;
        yield* ask('accounts', 'setSessionSite', auth.sessionId, site.id);
        return { ...auth, site: { id: site.id, name: site.name, handle: site.handle }, role: site.role };
      });
    }
    if (password === undefined) throw validationError('password is required unless you are signed in as the invited person', [{ path: '/body/password', message: 'is required' }]);
    const user = await this.db.read(() => ask('accounts', 'userByEmail', invitation.email));
    if (user) {
      // An account exists: its own password signs in; nothing is set.
      if (!(await verifyPassword(user.passwordHash, password))) throw signInFailed();
      return this.db.write(function* () {
        yield* join(user.id);
        return yield* startSessionSteps(user, invitation.siteId, now, lifetimes);
      });
    }
    const passwordHash = await hashPassword(checkNewPassword(password));
    return this.db.write(function* () {
      const row = { ...newUserRow(invitation.email, now), passwordHash, passwordChangedAt: now };
      yield* guardTaken(() => ask('accounts', 'insertUser', row), () => conflict('An account for this email was made meanwhile: sign in, then open the link again'));
      yield* join(row.id);
      return yield* startSessionSteps(row, invitation.siteId, now, lifetimes);
    });
  }

  /**
   * A reset link for the person who asked for one by email ("Forgot password?"): null when the
   * email has no account, or belongs to no site (no session could start). Answers the site to
   * send the mail on behalf of (the user's first).
   */
  async forgotPassword(rawEmail: string): Promise<{ token: string; email: string; siteId: string } | null> {
    const email = rawEmail.trim().toLowerCase();
    const now = new Date(this.now());
    return this.db.write(function* () {
      const user = yield* ask('accounts', 'userByEmail', email);
      if (!user) return null;
      const [site] = yield* ask('accounts', 'sitesOf', user.id);
      if (!site) return null;
      const token = yield* issueTokenSteps(user.id, user.passwordHash === null ? 'setup' : 'reset', now);
      return { token, email: user.email, siteId: site.id };
    });
  }

  // ---- users across sites (the CLI) --------------------------------------------------------

  async listUsers(): Promise<{ user: UserRow; sites: MemberSite[] }[]> {
    return this.db.read(function* () {
      const users = yield* ask('accounts', 'listUsers');
      const all: { user: UserRow; sites: MemberSite[] }[] = [];
      for (const user of users) all.push({ user, sites: yield* ask('accounts', 'sitesOf', user.id) });
      return all;
    });
  }

  async userByEmail(rawEmail: string): Promise<UserRow> {
    const email = normalizeEmail(rawEmail);
    const user = await this.db.read(() => ask('accounts', 'userByEmail', email));
    if (!user) throw notFound('user');
    return user;
  }

  /** A reset link for a user by email, whatever the site. */
  async resetLinkByEmail(email: string): Promise<string> {
    const user = await this.userByEmail(email);
    const now = new Date(this.now());
    return this.db.write(() => issueTokenSteps(user.id, user.passwordHash === null ? 'setup' : 'reset', now));
  }

  /** Deletes a user from every site (sessions and links with it); 409 when that leaves a site without an owner. */
  deleteUser(userId: string): Promise<void> {
    return this.db.write(function* () {
      for (const site of yield* ask('accounts', 'sitesOf', userId)) yield* keepAnOwnerSteps(site.id, site.role);
      if (!(yield* ask('accounts', 'deleteUser', userId))) throw notFound('user');
    });
  }

  /**
   * The first owner of a freshly created first site (the server's first start): a user with
   * `email` and a setup link (its token answered, once). Null when that user exists already.
   */
  async bootstrapOwner(siteId: string, email: string): Promise<string | null> {
    const now = new Date(this.now());
    return this.db.write(function* () {
      if ((yield* ask('accounts', 'listUsers')).length > 0) return null;
      return (yield* addMemberSteps(siteId, email, 'owner', now)).setupToken;
    });
  }
}

const wrongCurrentPassword = () => validationError('currentPassword is wrong', [{ path: '/body/currentPassword', message: 'is wrong' }]);
