import { accountTokens, invitations, memberships, sessions, sites, users } from '../db/pg-schema.js';
import { refusedByUnique, type PgExecutor } from '../db/postgres.js';
import type { AsyncAdapter } from '../db/steps.js';
import { TakenMeanwhile, type AccountPort } from './port.js';
import { linkSpent, linkUsable, sessionEnded } from './rules.js';
import { and, asc, count, desc, eq, ne, sql } from '../db/orm.js';

/** A write refused by a unique key (users' email, memberships' user and site): another instance got there first. */
const guardTaken = refusedByUnique(['users_email_unique', 'memberships_user_id_site_id_pk', 'invitations_site_email_unique'], (cause) => new TakenMeanwhile({ cause }));

const memberColumns = {
  id: users.id,
  email: users.email,
  role: memberships.role,
  createdAt: memberships.createdAt,
  active: sql<boolean>`${users.passwordHash} is not null`,
};

/** The accounts port as PostgreSQL answers it, with promises, inside the store's transaction. */
export const postgresAccounts: AsyncAdapter<AccountPort, PgExecutor> = {
  userByEmail: async (tx, email) => (await tx.select().from(users).where(eq(users.email, email)))[0],
  userById: async (tx, userId) => (await tx.select().from(users).where(eq(users.id, userId)))[0],
  insertUser: (tx, row) => guardTaken(tx.insert(users).values(row)),
  setPassword: async (tx, userId, passwordHash, at) => void (await tx.update(users).set({ passwordHash, passwordChangedAt: at }).where(eq(users.id, userId))),
  setDisplayName: async (tx, userId, displayName) => void (await tx.update(users).set({ displayName }).where(eq(users.id, userId))),
  deleteUser: async (tx, userId) => (await tx.delete(users).where(eq(users.id, userId)).returning({ id: users.id })).length > 0,
  listUsers: (tx) => tx.select().from(users).orderBy(asc(users.createdAt), asc(users.email)),

  sitesOf: (tx, userId) =>
    tx
      .select({ id: sites.id, name: sites.name, handle: sites.handle, role: memberships.role })
      .from(memberships)
      .innerJoin(sites, eq(sites.id, memberships.siteId))
      .where(eq(memberships.userId, userId))
      .orderBy(asc(memberships.createdAt), asc(sites.name)),
  roleOn: async (tx, userId, siteId) =>
    (
      await tx
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId)))
    )[0]?.role,
  insertMembership: (tx, row) => guardTaken(tx.insert(memberships).values(row)),
  setRole: async (tx, userId, siteId, role) => void (await tx.update(memberships).set({ role }).where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId)))),
  deleteMembership: async (tx, userId, siteId) =>
    (await tx.delete(memberships).where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId))).returning({ id: memberships.userId })).length > 0,
  membersOf: (tx, siteId) =>
    tx
      .select(memberColumns)
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.siteId, siteId))
      .orderBy(asc(memberships.createdAt), asc(users.email)),
  countOwners: async (tx, siteId) =>
    (
      await tx
        .select({ n: count() })
        .from(memberships)
        .where(and(eq(memberships.siteId, siteId), eq(memberships.role, 'owner')))
    )[0]!.n,

  insertSession: async (tx, row) => void (await tx.insert(sessions).values(row)),
  sessionByHash: async (tx, tokenHash) => {
    const [row] = await tx
      .select({ session: sessions, email: users.email, siteName: sites.name, siteHandle: sites.handle, role: memberships.role })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .innerJoin(sites, eq(sites.id, sessions.siteId))
      .leftJoin(memberships, and(eq(memberships.userId, sessions.userId), eq(memberships.siteId, sessions.siteId)))
      .where(eq(sessions.tokenHash, tokenHash));
    return row && { session: row.session, email: row.email, site: { id: row.session.siteId, name: row.siteName, handle: row.siteHandle }, role: row.role };
  },
  touchSession: async (tx, sessionId, at) => void (await tx.update(sessions).set({ lastSeenAt: at }).where(eq(sessions.id, sessionId))),
  setSessionSite: async (tx, sessionId, siteId) => void (await tx.update(sessions).set({ siteId }).where(eq(sessions.id, sessionId))),
  deleteSession: async (tx, sessionId) => void (await tx.delete(sessions).where(eq(sessions.id, sessionId))),
  deleteEndedSessionsOf: async (tx, userId, now, idleBefore) =>
    void (await tx.delete(sessions).where(and(eq(sessions.userId, userId), sessionEnded(sessions, now, idleBefore)))),
  deleteEnded: async (tx, now, idleBefore) => {
    const ended = await tx.delete(sessions).where(sessionEnded(sessions, now, idleBefore));
    const links = await tx.delete(accountTokens).where(linkSpent(accountTokens, now));
    return (ended.rowCount ?? 0) + (links.rowCount ?? 0);
  },
  deleteSessionsOf: async (tx, userId, exceptId, siteId) =>
    void (await tx
      .delete(sessions)
      .where(and(eq(sessions.userId, userId), exceptId ? ne(sessions.id, exceptId) : undefined, siteId ? eq(sessions.siteId, siteId) : undefined))),

  insertToken: async (tx, row) => void (await tx.insert(accountTokens).values(row)),
  tokenByHash: async (tx, tokenHash) => (await tx.select().from(accountTokens).where(eq(accountTokens.tokenHash, tokenHash)))[0],
  // One statement: of two requests using one link at once, exactly one updates the row.
  useToken: async (tx, tokenHash, at) =>
    (
      await tx
        .update(accountTokens)
        .set({ usedAt: at })
        .where(and(eq(accountTokens.tokenHash, tokenHash), linkUsable(accountTokens, at)))
        .returning({ hash: accountTokens.tokenHash })
    ).length > 0,
  dropTokensOf: async (tx, userId) => void (await tx.delete(accountTokens).where(eq(accountTokens.userId, userId))),

  insertInvitation: (tx, row) => guardTaken(tx.insert(invitations).values(row)),
  invitationOf: async (tx, siteId, email) => (await tx.select().from(invitations).where(and(eq(invitations.siteId, siteId), eq(invitations.email, email))))[0],
  invitationById: async (tx, siteId, invitationId) => (await tx.select().from(invitations).where(and(eq(invitations.siteId, siteId), eq(invitations.id, invitationId))))[0],
  invitationByHash: async (tx, tokenHash) => (await tx.select().from(invitations).where(eq(invitations.tokenHash, tokenHash)))[0],
  renewInvitation: async (tx, invitationId, change) => void (await tx.update(invitations).set(change).where(eq(invitations.id, invitationId))),
  // One statement: of two requests accepting (or revoking) one invitation at once, exactly one deletes it.
  deleteInvitation: async (tx, invitationId) => (await tx.delete(invitations).where(eq(invitations.id, invitationId)).returning({ id: invitations.id })).length > 0,
  invitationsOf: (tx, siteId) => tx.select().from(invitations).where(eq(invitations.siteId, siteId)).orderBy(desc(invitations.sentAt), asc(invitations.email)),
};
