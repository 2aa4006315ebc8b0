import { and, asc, eq, isNull, like } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { apiKeys, sites, type Site } from '../db/schema.js';
import { notFound } from '../errors.js';
import { checkSiteName, firstFreeHandle, generateKey, handleBase, newKey, newSite, type ApiKeyInfo, type AuthenticatedKey } from './rules.js';

export { generateKey, hashKey, KEY_PREFIX, type ApiKeyInfo, type AuthenticatedKey, type SiteRef } from './rules.js';

export function createSite(db: Executor, name: string, now = new Date()): Site {
  const trimmed = checkSiteName(name);
  const site = newSite(trimmed, freeHandle(db, trimmed), now);
  db.insert(sites).values(site).run();
  return site;
}

/** A handle from the site's name (`[a-z0-9-]`, 2-40 characters), unique across the install. */
function freeHandle(db: Executor, name: string): string {
  const base = handleBase(name);
  const taken = db.select({ handle: sites.handle }).from(sites).where(like(sites.handle, `${base}%`)).all();
  return firstFreeHandle(base, new Set(taken.map((row) => row.handle)));
}

export function listSites(db: Executor): Site[] {
  return db.select().from(sites).orderBy(asc(sites.createdAt)).all();
}

export function getSite(db: Executor, siteId: string): Site | undefined {
  return db.select().from(sites).where(eq(sites.id, siteId)).get();
}

/** Stores a key for a site (a given one, for BOOTSTRAP_API_KEY, or a new one) and returns it in clear. */
export function createKey(db: Executor, siteId: string, key = generateKey(), now = new Date()): { key: string; info: ApiKeyInfo } {
  if (!getSite(db, siteId)) throw notFound('site');
  const { info, hash } = newKey(siteId, key, now);
  db.insert(apiKeys).values({ ...info, hash }).run();
  return { key, info };
}

export function listKeys(db: Executor, siteId: string): ApiKeyInfo[] {
  return db
    .select({ id: apiKeys.id, siteId: apiKeys.siteId, prefix: apiKeys.prefix, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.siteId, siteId))
    .orderBy(asc(apiKeys.createdAt))
    .all();
}

/** Revokes a key; true when it was active. Revoking twice is harmless. */
export function revokeKey(db: Executor, keyId: string, now = new Date()): boolean {
  const found = db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, keyId)).get();
  if (!found) throw notFound('key');
  const result = db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .run();
  return result.changes > 0;
}

/** Finds the site of an active key by the key's hash, or undefined for unknown and revoked keys. */
export function findActiveKey(db: Executor, keyHash: string): AuthenticatedKey | undefined {
  const row = db
    .select({ keyId: apiKeys.id, siteId: sites.id, siteName: sites.name })
    .from(apiKeys)
    .innerJoin(sites, eq(sites.id, apiKeys.siteId))
    .where(and(eq(apiKeys.hash, keyHash), isNull(apiKeys.revokedAt)))
    .get();
  return row && { keyId: row.keyId, site: { id: row.siteId, name: row.siteName } };
}

/** A site and its first key, in one transaction; the key is returned in clear, once. */
export function createSiteWithKey(db: Executor, name: string, key = generateKey(), now = new Date()): { site: Site; key: string } {
  return db.transaction((tx) => {
    const site = createSite(tx, name, now);
    return { site, key: createKey(tx, site.id, key, now).key };
  });
}

/**
 * Creates the first site and its key when the database has no site yet. Returns the key in
 * clear only when it was generated here, so the caller can print it once.
 */
export function bootstrapFirstSite(db: Executor, siteName: string, bootstrapKey: string | null): { site: Site; generatedKey: string | null } | null {
  if (db.select({ id: sites.id }).from(sites).limit(1).get()) return null;
  const { site, key } = createSiteWithKey(db, siteName, bootstrapKey ?? generateKey());
  return { site, generatedKey: bootstrapKey ? null : key };
}
