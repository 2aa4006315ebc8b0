import { and, asc, eq, isNull, like, sql } from 'drizzle-orm';
import { apiKeys, sites } from '../db/pg-schema.js';
import type { Site } from '../db/schema.js';
import { isUniqueViolation, type PgExecutor } from '../db/postgres.js';
import { notFound } from '../errors.js';
import { checkSiteName, firstFreeHandle, generateKey, handleBase, newKey, newSite, type ApiKeyInfo, type AuthenticatedKey } from './rules.js';

/*
 * keys.ts on PostgreSQL: the same functions, inputs, results and errors, answered with promises.
 * Several instances may share the database, so what SQLite's single writer guarantees by
 * reading first is guaranteed here by the database (unique handles, one first site).
 */

/**
 * Tries a site creation gets before giving up: another is needed only when another instance
 * took the handle picked between the look and the insert.
 */
const HANDLE_ATTEMPTS = 5;

export async function createSite(db: PgExecutor, name: string, now = new Date()): Promise<Site> {
  const trimmed = checkSiteName(name);
  for (let attempt = 1; ; attempt++) {
    try {
      // A savepoint inside a caller's transaction: a failed attempt leaves it usable.
      return await db.transaction(async (tx) => {
        const site = newSite(trimmed, await freeHandle(tx, trimmed), now);
        await tx.insert(sites).values(site);
        return site;
      });
    } catch (error) {
      if (attempt >= HANDLE_ATTEMPTS || !isUniqueViolation(error, 'sites_handle_unique')) throw error;
    }
  }
}

/** A handle from the site's name (`[a-z0-9-]`, 2-40 characters), unique across the install. */
async function freeHandle(db: PgExecutor, name: string): Promise<string> {
  const base = handleBase(name);
  const taken = await db.select({ handle: sites.handle }).from(sites).where(like(sites.handle, `${base}%`));
  return firstFreeHandle(base, new Set(taken.map((row) => row.handle)));
}

export async function listSites(db: PgExecutor): Promise<Site[]> {
  return db.select().from(sites).orderBy(asc(sites.createdAt));
}

export async function getSite(db: PgExecutor, siteId: string): Promise<Site | undefined> {
  const [site] = await db.select().from(sites).where(eq(sites.id, siteId));
  return site;
}

/** Stores a key for a site (a given one, for BOOTSTRAP_API_KEY, or a new one) and returns it in clear. */
export async function createKey(db: PgExecutor, siteId: string, key = generateKey(), now = new Date()): Promise<{ key: string; info: ApiKeyInfo }> {
  if (!(await getSite(db, siteId))) throw notFound('site');
  const { info, hash } = newKey(siteId, key, now);
  await db.insert(apiKeys).values({ ...info, hash });
  return { key, info };
}

export async function listKeys(db: PgExecutor, siteId: string): Promise<ApiKeyInfo[]> {
  return db
    .select({ id: apiKeys.id, siteId: apiKeys.siteId, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.siteId, siteId))
    .orderBy(asc(apiKeys.createdAt));
}

/** Revokes a key; true when it was active. Revoking twice is harmless. */
export async function revokeKey(db: PgExecutor, keyId: string, now = new Date()): Promise<boolean> {
  const [found] = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, keyId));
  if (!found) throw notFound('key');
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return revoked.length > 0;
}

/** Finds the site of an active key by the key's hash, or undefined for unknown and revoked keys. */
export async function findActiveKey(db: PgExecutor, keyHash: string): Promise<AuthenticatedKey | undefined> {
  const [row] = await db
    .select({ keyId: apiKeys.id, siteId: sites.id, siteName: sites.name })
    .from(apiKeys)
    .innerJoin(sites, eq(sites.id, apiKeys.siteId))
    .where(and(eq(apiKeys.hash, keyHash), isNull(apiKeys.revokedAt)));
  return row && { keyId: row.keyId, site: { id: row.siteId, name: row.siteName } };
}

/** A site and its first key, in one transaction; the key is returned in clear, once. */
export async function createSiteWithKey(db: PgExecutor, name: string, key = generateKey(), now = new Date()): Promise<{ site: Site; key: string }> {
  return db.transaction(async (tx) => {
    const site = await createSite(tx, name, now);
    return { site, key: (await createKey(tx, site.id, key, now)).key };
  });
}

/** Held while an instance looks for a first site and creates it: instances starting together make one. */
const BOOTSTRAP_LOCK_KEY = sql`hashtextextended('blog-service:bootstrap-first-site', 0)`;

/**
 * Creates the first site and its key when the database has no site yet. Returns the key in
 * clear only when it was generated here, so the caller can print it once.
 */
export async function bootstrapFirstSite(
  db: PgExecutor,
  siteName: string,
  bootstrapKey: string | null,
): Promise<{ site: Site; generatedKey: string | null } | null> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`);
    if ((await tx.select({ id: sites.id }).from(sites).limit(1)).length > 0) return null;
    const { site, key } = await createSiteWithKey(tx, siteName, bootstrapKey ?? generateKey());
    return { site, generatedKey: bootstrapKey ? null : key };
  });
}
