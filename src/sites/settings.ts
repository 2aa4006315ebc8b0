import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { prepared, type Executor } from '../db/client.js';
import { sites, type Site } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import { checkPatchNotEmpty, domainToProve, runSettingsSteps, settingsChanges, urlsOfHost, type SettingsOptions, type SiteSettingsPatch } from './rules.js';

export { normalizeSiteUrl, type SiteSettingsPatch } from './rules.js';

/** Records that what the site shows readers changed: cached pages of the older version are stale. */
const moveContentVersion = (db: Executor) =>
  db
    .update(sites)
    // `now` is passed as stored: epoch milliseconds.
    .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: sql`${sql.placeholder('now')}` })
    .where(eq(sites.id, sql.placeholder('siteId')))
    .returning({ version: sites.contentVersion })
    .prepare();

/** Moves the site's content version; answers the new one (null: no such site). */
export function touchSiteContent(db: Executor, siteId: string, now = new Date()): number | null {
  // Every post write runs it: prepared once.
  return prepared(db, moveContentVersion).get({ siteId, now: now.getTime() })?.version ?? null;
}

export function updateSiteSettings(db: Executor, siteId: string, patch: SiteSettingsPatch, now = new Date(), options: SettingsOptions = {}): Site {
  checkPatchNotEmpty(patch);
  return db.transaction((tx) => {
    const current = tx.select().from(sites).where(eq(sites.id, siteId)).get();
    if (!current) throw notFound('site');
    const changes = runSettingsSteps(settingsChanges(current, patch, now, options), (question) =>
      question.holderOf === 'handle'
        ? tx.select({ id: sites.id }).from(sites).where(eq(sites.handle, question.handle)).get()?.id
        : tx.select({ id: sites.id }).from(sites).where(and(inArray(sites.url, question.urls), isNull(sites.domainToken))).get()?.id,
    );
    tx.update(sites).set(changes).where(eq(sites.id, siteId)).run();
    return { ...current, ...changes };
  });
}

/**
 * Marks the site's own domain proven (its token was found, or an operator vouches for it):
 * from now on its host serves the site. 409 when it has no own domain, when the token changed
 * since it was checked, or when another site proved the same host first.
 */
export function markDomainProven(db: Executor, siteId: string, checkedToken: string | null, now = new Date()): Site {
  return db.transaction((tx) => {
    const current = tx.select().from(sites).where(eq(sites.id, siteId)).get();
    if (!current) throw notFound('site');
    const pending = domainToProve(current, checkedToken);
    if (!pending) return current;
    const holder = tx
      .select({ id: sites.id })
      .from(sites)
      .where(and(inArray(sites.url, urlsOfHost(pending.host)), isNull(sites.domainToken), ne(sites.id, siteId)))
      .get();
    if (holder) throw conflict(`Another site already answers on ${pending.host}`);
    const changes = { domainToken: null, contentVersion: current.contentVersion + 1, contentUpdatedAt: now };
    tx.update(sites).set(changes).where(eq(sites.id, siteId)).run();
    return { ...current, ...changes };
  });
}

const lookups = (db: Executor) => ({
  byHandle: db.select().from(sites).where(eq(sites.handle, sql.placeholder('handle'))).prepare(),
  byUrl: db
    .select()
    .from(sites)
    // Only a proven domain serves its site.
    .where(and(inArray(sites.url, [sql.placeholder('http'), sql.placeholder('https')]), isNull(sites.domainToken)))
    .prepare(),
});

// Every public request looks its site up: prepared once per connection, not per request.
const preparedLookups = new WeakMap<Executor, ReturnType<typeof lookups>>();

function lookupsFor(db: Executor) {
  let prepared = preparedLookups.get(db);
  if (!prepared) preparedLookups.set(db, (prepared = lookups(db)));
  return prepared;
}

/** The site readers reach at /sites/<handle>/. */
export function findSiteByHandle(db: Executor, handle: string): Site | undefined {
  return lookupsFor(db).byHandle.get({ handle });
}

/** The site whose own `url` has this host (`blog.example.com`, with `:port` when not the default). */
export function findSiteByHost(db: Executor, host: string): Site | undefined {
  const [http, https] = urlsOfHost(host);
  return lookupsFor(db).byUrl.get({ http, https });
}
