import { eq, inArray, sql } from 'drizzle-orm';
import { prepared, type Executor } from '../db/client.js';
import { sites, type Site } from '../db/schema.js';
import { conflict, notFound, validationError } from '../errors.js';
import { hasVisibleCharacter, isWellFormed } from '../text/wellformed.js';
import {
  MAX_HANDLE_LENGTH,
  MAX_POSTS_PER_PAGE,
  MAX_SITE_DESCRIPTION_LENGTH,
  MAX_SITE_NAME_LENGTH,
  MIN_HANDLE_LENGTH,
  RESERVED_SLUGS,
} from '../limits.js';

/** What a site's owner may change about it (the API's PATCH /site and `site update`). */
export interface SiteSettingsPatch {
  name?: string;
  description?: string | null;
  handle?: string;
  url?: string | null;
  language?: string;
  postsPerPage?: number;
}

const HANDLE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// BCP 47 as pages' `lang` takes it: a primary language and optional subtags (en, en-GB, zh-Hant-TW).
const LANGUAGE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

const invalid = (field: string, message: string) => validationError(`${field} ${message}`, [{ path: `/body/${field}`, message }]);

/** An absolute http(s) origin (`https://blog.example.com`), as a site's own address. */
export function normalizeSiteUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid('url', 'must be an absolute URL such as https://blog.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('url', 'must use http or https');
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw invalid('url', 'must be an origin only (scheme, host and optional port), without a path');
  }
  return url.origin;
}

function checkHandle(handle: string): string {
  if (handle.length < MIN_HANDLE_LENGTH || handle.length > MAX_HANDLE_LENGTH || !HANDLE.test(handle)) {
    throw invalid('handle', `must be ${MIN_HANDLE_LENGTH}-${MAX_HANDLE_LENGTH} characters of a-z, 0-9 and inner hyphens`);
  }
  if (RESERVED_SLUGS.has(handle)) throw invalid('handle', 'is a reserved word');
  return handle;
}

/** Records that what the site shows readers changed: cached pages of the older version are stale. */
const moveContentVersion = (db: Executor) =>
  db
    .update(sites)
    // `now` is passed as stored: epoch milliseconds.
    .set({ contentVersion: sql`${sites.contentVersion} + 1`, contentUpdatedAt: sql`${sql.placeholder('now')}` })
    .where(eq(sites.id, sql.placeholder('siteId')))
    .prepare();

export function touchSiteContent(db: Executor, siteId: string, now = new Date()): void {
  // Every post write runs it: prepared once.
  prepared(db, moveContentVersion).run({ siteId, now: now.getTime() });
}

export function updateSiteSettings(db: Executor, siteId: string, patch: SiteSettingsPatch, now = new Date()): Site {
  if (Object.values(patch).every((value) => value === undefined)) {
    throw validationError('Nothing to change: give at least one of name, description, handle, url, language, postsPerPage');
  }
  return db.transaction((tx) => {
    const current = tx.select().from(sites).where(eq(sites.id, siteId)).get();
    if (!current) throw notFound('site');
    const changes: Partial<Site> = {};
    if (patch.name !== undefined) {
      const name = patch.name.trim();
      if (!name || name.length > MAX_SITE_NAME_LENGTH) throw invalid('name', `must be 1-${MAX_SITE_NAME_LENGTH} characters`);
      if (!hasVisibleCharacter(name)) throw invalid('name', 'must have at least one visible character');
      if (!isWellFormed(name)) throw invalid('name', 'must be well-formed Unicode (no lone surrogates)');
      changes.name = name;
    }
    if (patch.description !== undefined) {
      const description = patch.description?.trim() || null;
      if (description && description.length > MAX_SITE_DESCRIPTION_LENGTH) throw invalid('description', `must be at most ${MAX_SITE_DESCRIPTION_LENGTH} characters`);
      if (description && !isWellFormed(description)) throw invalid('description', 'must be well-formed Unicode (no lone surrogates)');
      changes.description = description;
    }
    if (patch.handle !== undefined && patch.handle !== current.handle) {
      changes.handle = checkHandle(patch.handle);
      const holder = tx.select({ id: sites.id }).from(sites).where(eq(sites.handle, changes.handle)).get();
      if (holder) throw conflict(`The handle "${changes.handle}" is taken by another site`);
    }
    if (patch.url !== undefined) {
      changes.url = patch.url === null || patch.url.trim() === '' ? null : normalizeSiteUrl(patch.url);
      if (changes.url && changes.url !== current.url) {
        const host = new URL(changes.url).host;
        const holder = tx.select({ id: sites.id }).from(sites).where(inArray(sites.url, [`http://${host}`, `https://${host}`])).get();
        if (holder && holder.id !== siteId) throw conflict(`Another site already answers on ${host}`);
      }
    }
    if (patch.language !== undefined) {
      if (!LANGUAGE.test(patch.language)) throw invalid('language', 'must be a BCP 47 language tag such as en or en-GB');
      changes.language = patch.language;
    }
    if (patch.postsPerPage !== undefined) {
      if (!Number.isInteger(patch.postsPerPage) || patch.postsPerPage < 1 || patch.postsPerPage > MAX_POSTS_PER_PAGE) {
        throw invalid('postsPerPage', `must be an integer from 1 to ${MAX_POSTS_PER_PAGE}`);
      }
      changes.postsPerPage = patch.postsPerPage;
    }
    // Every setting shows on the pages (name, language, addresses): cached pages are stale.
    Object.assign(changes, { contentVersion: current.contentVersion + 1, contentUpdatedAt: now });
    tx.update(sites).set(changes).where(eq(sites.id, siteId)).run();
    return { ...current, ...changes };
  });
}

const lookups = (db: Executor) => ({
  byHandle: db.select().from(sites).where(eq(sites.handle, sql.placeholder('handle'))).prepare(),
  byUrl: db
    .select()
    .from(sites)
    .where(inArray(sites.url, [sql.placeholder('http'), sql.placeholder('https')]))
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
  const lower = host.toLowerCase();
  return lookupsFor(db).byUrl.get({ http: `http://${lower}`, https: `https://${lower}` });
}
