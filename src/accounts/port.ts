import type { AccountTokenRow, InvitationRow, MembershipRow, SessionRow, UserRow } from '../db/schema.js';
import type { Member, MemberSite, Role, SessionFound } from './rules.js';

/**
 * What the account store asks its database (see src/db/steps.ts). Times are Dates. Checks that
 * must hold across writers (a site keeps an owner) lock the site's row first (`sites.lock`).
 */
export interface AccountPort {
  // ---- users
  userByEmail(email: string): UserRow | undefined;
  userById(userId: string): UserRow | undefined;
  /** Inserts a user; throws TakenMeanwhile when a writer outside the transaction took its email. */
  insertUser(row: UserRow): void;
  setPassword(userId: string, passwordHash: string, at: Date): void;
  /** The name readers see on the user's posts (null: none). */
  setDisplayName(userId: string, displayName: string | null): void;
  /** Deletes the user (memberships, sessions and links with it); false when there was none. */
  deleteUser(userId: string): boolean;
  /** Every user, oldest first. */
  listUsers(): UserRow[];

  // ---- memberships
  /** The user's sites, oldest membership first. */
  sitesOf(userId: string): MemberSite[];
  roleOn(userId: string, siteId: string): Role | undefined;
  /** Inserts a membership; throws TakenMeanwhile when another writer made it meanwhile. */
  insertMembership(row: MembershipRow): void;
  setRole(userId: string, siteId: string, role: Role): void;
  deleteMembership(userId: string, siteId: string): boolean;
  /** The site's members, oldest first. */
  membersOf(siteId: string): Member[];
  countOwners(siteId: string): number;

  // ---- sessions
  insertSession(row: SessionRow): void;
  /** A session by its token's hash, with its user's email, its site and the user's role there. */
  sessionByHash(tokenHash: string): SessionFound | undefined;
  touchSession(sessionId: string, at: Date): void;
  setSessionSite(sessionId: string, siteId: string): void;
  deleteSession(sessionId: string): void;
  /** Deletes the user's sessions that ended: past `now` (absolute end) or last seen before `idleBefore`. */
  deleteEndedSessionsOf(userId: string, now: Date, idleBefore: Date): void;
  /** The same for every user, and the one-time links used or expired before `now`; answers how many rows went. */
  deleteEnded(now: Date, idleBefore: Date): number;
  /** Ends the user's sessions: all, all but `exceptId`, or (with `siteId`) those on one site. */
  deleteSessionsOf(userId: string, exceptId: string | null, siteId: string | null): void;

  // ---- one-time links
  insertToken(row: AccountTokenRow): void;
  tokenByHash(tokenHash: string): AccountTokenRow | undefined;
  /** Marks the link used, if it is still unused and unexpired at `at`; false otherwise (its one use is taken). */
  useToken(tokenHash: string, at: Date): boolean;
  /** Deletes the user's links, used or not (a new one replaces them). */
  dropTokensOf(userId: string): void;

  // ---- invitations
  /** Inserts an invitation; throws TakenMeanwhile when one for the site and email was made meanwhile. */
  insertInvitation(row: InvitationRow): void;
  invitationOf(siteId: string, email: string): InvitationRow | undefined;
  invitationById(siteId: string, invitationId: string): InvitationRow | undefined;
  invitationByHash(tokenHash: string): InvitationRow | undefined;
  /** A new token, role and expiry for an invitation sent again. */
  renewInvitation(invitationId: string, change: Pick<InvitationRow, 'role' | 'tokenHash' | 'sentAt' | 'expiresAt'>): void;
  /** Deletes the invitation; false when it was gone already (accepted or revoked by another request). */
  deleteInvitation(invitationId: string): boolean;
  /** The site's invitations, newest first. */
  invitationsOf(siteId: string): InvitationRow[];
}

declare module '../db/steps.js' {
  interface Ports {
    accounts: AccountPort;
  }
}

/** Another writer (a request, the CLI, another instance) added the same user or membership between the look and the write. */
export class TakenMeanwhile extends Error {
  constructor(options?: ErrorOptions) {
    super('The user or membership was added by another writer meanwhile', options);
  }
}
