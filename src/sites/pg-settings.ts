import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { sites } from '../db/pg-schema.js';
import type { Site } from '../db/schema.js';
import { isUniqueViolation, type PgExecutor } from '../db/postgres.js';
import { conflict, notFound } from '../errors.js';
import { checkPatchNotEmpty, domainToProve, handleTaken, runSettingsStepsAsync, settingsChanges, urlsOfHost, type SettingsOptions, type SiteSettingsPatch } from './rules.js';

/*
 * settings.ts on PostgreSQL: the same functions, inputs, results and errors, answered with
 * promises. Several instances may write one site at once: its row is locked while settings
 * change, and the content version only ever moves by atomic increments.
 */

/** touchSiteContent() of settings.ts on PostgreSQL: an atomic increment, as several instances may write at once. */
export async function touchSiteContent(db: PgExecutor, siteId: string, now = new Date()): Promise<void> {
  await db
    .update(sites)
    .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: now })
    .where(eq(sites.id, siteId));
}

export async function updateSiteSettings(db: PgExecutor, siteId: string, patch: SiteSettingsPatch, now = new Date(), options: SettingsOptions = {}): Promise<Site> {
  checkPatchNotEmpty(patch);
  return db.transaction(async (tx) => {
    // Locked: a post written meanwhile waits, and its version increment comes after ours.
    const [current] = await tx.select().from(sites).where(eq(sites.id, siteId)).for('update');
    if (!current) throw notFound('site');
    const changes = await runSettingsStepsAsync(settingsChanges(current, patch, now, options), async (question) => {
      const where = question.holderOf === 'handle' ? eq(sites.handle, question.handle) : and(inArray(sites.url, question.urls), isNull(sites.domainToken));
      const [holder] = await tx.select({ id: sites.id }).from(sites).where(where).limit(1);
      return holder?.id;
    });
    try {
      await tx.update(sites).set(changes).where(eq(sites.id, siteId));
    } catch (error) {
      // Another instance took the handle between the look and the write: the same answer as the look's.
      if (changes.handle !== undefined && isUniqueViolation(error, 'sites_handle_unique')) throw handleTaken(changes.handle);
      throw error;
    }
    return { ...current, ...changes };
  });
}

/** markDomainProven() of settings.ts on PostgreSQL. */
export async function markDomainProven(db: PgExecutor, siteId: string, checkedToken: string | null, now = new Date()): Promise<Site> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(sites).where(eq(sites.id, siteId)).for('update');
    if (!current) throw notFound('site');
    const pending = domainToProve(current, checkedToken);
    if (!pending) return current;
    // Two sites proving one host at once: the lock on the proven one's row is not ours, so the
    // transactions serialise on an advisory lock per host.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`site-domain:${pending.host.toLowerCase()}`}))`);
    const [holder] = await tx
      .select({ id: sites.id })
      .from(sites)
      .where(and(inArray(sites.url, urlsOfHost(pending.host)), isNull(sites.domainToken), ne(sites.id, siteId)))
      .limit(1);
    if (holder) throw conflict(`Another site already answers on ${pending.host}`);
    const changes = { domainToken: null, contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: now };
    const [updated] = await tx.update(sites).set(changes).where(eq(sites.id, siteId)).returning();
    return updated!;
  });
}

/** The site readers reach at /sites/<handle>/. */
export async function findSiteByHandle(db: PgExecutor, handle: string): Promise<Site | undefined> {
  const [site] = await db.select().from(sites).where(eq(sites.handle, handle));
  return site;
}

/** The site whose own `url` has this host (`blog.example.com`, with `:port` when not the default). */
export async function findSiteByHost(db: PgExecutor, host: string): Promise<Site | undefined> {
  // Only a proven domain serves its site.
  const [site] = await db
    .select()
    .from(sites)
    .where(and(inArray(sites.url, urlsOfHost(host)), isNull(sites.domainToken)))
    .limit(1);
  return site;
}
