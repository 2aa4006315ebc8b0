import type { Executor } from '../db/sqlite.js';
import { accountTokens, invitations, memberships, sessions, sites, users } from '../db/schema.js';
import type { SyncAdapter } from '../db/steps.js';
import { TakenMeanwhile, type AccountPort } from './port.js';
import { linkSpent, linkUsable, sessionEnded } from './rules.js';
import { and, asc, desc, eq, ne, sql } from '../db/orm.js';

/** A write refused by a unique key (users' email, memberships' user and site): another writer got there first. */
function guardTaken(write: () => void): void {
  try {
    write();
  } catch (error) {
    const { code } = error as { code?: unknown };
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new TakenMeanwhile({ cause: error });
    throw error;
  }
}

const memberColumns = {
  id: users.id,
  email: users.email,
  role: memberships.role,
  createdAt: memberships.createdAt,
  active: sql<number>`${users.passwordHash} is not null`,
};

/** The accounts port as SQLite answers it, at once, inside the store's transaction. */
export const sqliteAccounts: SyncAdapter<AccountPort, Executor> = {
  userByEmail: (tx, email) => tx.select().from(users).where(eq(users.email, email)).get(),
  userById: (tx, userId) => tx.select().from(users).where(eq(users.id, userId)).get(),
  insertUser: (tx, row) => guardTaken(() => tx.insert(users).values(row).run()),
  setPassword: (tx, userId, passwordHash, at) => void tx.update(users).set({ passwordHash, passwordChangedAt: at }).where(eq(users.id, userId)).run(),
  setDisplayName: (tx, userId, displayName) => void tx.update(users).set({ displayName }).where(eq(users.id, userId)).run(),
  deleteUser: (tx, userId) => tx.delete(users).where(eq(users.id, userId)).run().changes > 0,
  listUsers: (tx) => tx.select().from(users).orderBy(asc(users.createdAt), asc(users.email)).all(),

  sitesOf: (tx, userId) =>
    tx
      .select({ id: sites.id, name: sites.name, handle: sites.handle, role: memberships.role })
      .from(memberships)
      .innerJoin(sites, eq(sites.id, memberships.siteId))
      .where(eq(memberships.userId, userId))
      .orderBy(asc(memberships.createdAt), asc(sites.name))
      .all(),
  roleOn: (tx, userId, siteId) =>
    tx
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId)))
      .get()?.role,
  insertMembership: (tx, row) => guardTaken(() => tx.insert(memberships).values(row).run()),
  setRole: (tx, userId, siteId, role) => void tx.update(memberships).set({ role }).where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId))).run(),
  deleteMembership: (tx, userId, siteId) => tx.delete(memberships).where(and(eq(memberships.userId, userId), eq(memberships.siteId, siteId))).run().changes > 0,
  membersOf: (tx, siteId) =>
    tx
      .select(memberColumns)
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.siteId, siteId))
      .orderBy(asc(memberships.createdAt), asc(users.email))
      .all()
      .map((row) => ({ ...row, active: Boolean(row.active) })),
  countOwners: (tx, siteId) =>
    tx
      .select({ n: sql<number>`count(*)` })
      .from(memberships)
      .where(and(eq(memberships.siteId, siteId), eq(memberships.role, 'owner')))
      .get()!.n,

  insertSession: (tx, row) => void tx.insert(sessions).values(row).run(),
  sessionByHash: (tx, tokenHash) => {
    const row = tx
      .select({ session: sessions, email: users.email, siteName: sites.name, siteHandle: sites.handle, role: memberships.role })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .innerJoin(sites, eq(sites.id, sessions.siteId))
      .leftJoin(memberships, and(eq(memberships.userId, sessions.userId), eq(memberships.siteId, sessions.siteId)))
      .where(eq(sessions.tokenHash, tokenHash))
      .get();
    return row && { session: row.session, email: row.email, site: { id: row.session.siteId, name: row.siteName, handle: row.siteHandle }, role: row.role };
  },
  touchSession: (tx, sessionId, at) => void tx.update(sessions).set({ lastSeenAt: at }).where(eq(sessions.id, sessionId)).run(),
  setSessionSite: (tx, sessionId, siteId) => void tx.update(sessions).set({ siteId }).where(eq(sessions.id, sessionId)).run(),
  deleteSession: (tx, sessionId) => void tx.delete(sessions).where(eq(sessions.id, sessionId)).run(),
  deleteEndedSessionsOf: (tx, userId, now, idleBefore) =>
    void tx
      .delete(sessions)
      .where(and(eq(sessions.userId, userId), sessionEnded(sessions, now, idleBefore)))
      .run(),
  deleteEnded: (tx, now, idleBefore) =>
    tx.delete(sessions).where(sessionEnded(sessions, now, idleBefore)).run().changes +
    tx.delete(accountTokens).where(linkSpent(accountTokens, now)).run().changes,
  deleteSessionsOf: (tx, userId, exceptId, siteId) =>
    void tx
      .delete(sessions)
      .where(and(eq(sessions.userId, userId), exceptId ? ne(sessions.id, exceptId) : undefined, siteId ? eq(sessions.siteId, siteId) : undefined))
      .run(),

  insertToken: (tx, row) => void tx.insert(accountTokens).values(row).run(),
  tokenByHash: (tx, tokenHash) => tx.select().from(accountTokens).where(eq(accountTokens.tokenHash, tokenHash)).get(),
  useToken: (tx, tokenHash, at) =>
    tx
      .update(accountTokens)
      .set({ usedAt: at })
      .where(and(eq(accountTokens.tokenHash, tokenHash), linkUsable(accountTokens, at)))
      .run().changes > 0,
  dropTokensOf: (tx, userId) => void tx.delete(accountTokens).where(eq(accountTokens.userId, userId)).run(),

  insertInvitation: (tx, row) => guardTaken(() => tx.insert(invitations).values(row).run()),
  invitationOf: (tx, siteId, email) => tx.select().from(invitations).where(and(eq(invitations.siteId, siteId), eq(invitations.email, email))).get(),
  invitationById: (tx, siteId, invitationId) => tx.select().from(invitations).where(and(eq(invitations.siteId, siteId), eq(invitations.id, invitationId))).get(),
  invitationByHash: (tx, tokenHash) => tx.select().from(invitations).where(eq(invitations.tokenHash, tokenHash)).get(),
  renewInvitation: (tx, invitationId, change) => void tx.update(invitations).set(change).where(eq(invitations.id, invitationId)).run(),
  deleteInvitation: (tx, invitationId) => tx.delete(invitations).where(eq(invitations.id, invitationId)).run().changes > 0,
  invitationsOf: (tx, siteId) => tx.select().from(invitations).where(eq(invitations.siteId, siteId)).orderBy(desc(invitations.sentAt), asc(invitations.email)).all(),
};
