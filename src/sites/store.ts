import type { Site } from '../db/schema.js';
import { ask, inSavepoint, type StepDatabase, type Steps } from '../db/steps.js';
import { conflict, notFound } from '../errors.js';
import { then, type MaybePromise } from '../maybe.js';
import { systemResolveTxt, tokenMissing, type ReservedHosts, type ResolveTxt } from './domains.js';
import { KeyLookupCache, type KeyChanges } from './key-cache.js';
import { HandleTakenMeanwhile } from './port.js';
import {
  checkPatchNotEmpty,
  checkSiteName,
  domainToProve,
  firstFreeHandle,
  generateKey,
  handleBase,
  handleTaken,
  hashKey,
  newKey,
  newSite,
  settingsChanges,
  type ApiKeyInfo,
  type AuthenticatedKey,
  type SettingsOptions,
  type SiteSettingsPatch,
} from './rules.js';

export type { ApiKeyInfo, AuthenticatedKey, Site, SiteSettingsPatch };

/**
 * Tries a site creation gets before giving up: another is needed only when another instance
 * took the handle picked between the look and the insert.
 */
const HANDLE_ATTEMPTS = 5;

/** A new site with a handle from its name (`[a-z0-9-]`, 2-40 characters), unique across the install. */
export function* createSiteSteps(name: string, now: Date): Steps<Site> {
  const trimmed = checkSiteName(name);
  return yield* inSavepoint(
    function* () {
      const base = handleBase(trimmed);
      const taken = yield* ask('sites', 'handlesStartingWith', base);
      const site = newSite(trimmed, firstFreeHandle(base, new Set(taken)), now);
      yield* ask('sites', 'insert', site);
      return site;
    },
    { attempts: HANDLE_ATTEMPTS, retryIf: (error) => error instanceof HandleTakenMeanwhile },
  );
}

/** Stores a key for a site (a given one, for BOOTSTRAP_API_KEY, or a new one) and answers it in clear. */
export function* createKeySteps(siteId: string, key: string, now: Date): Steps<{ key: string; info: ApiKeyInfo }> {
  if (!(yield* ask('sites', 'find', siteId))) throw notFound('site');
  const { info, hash } = newKey(siteId, key, now);
  yield* ask('sites', 'insertKey', { ...info, hash });
  return { key, info };
}

/** A site and its first key; the key is answered in clear, once. */
export function* createSiteWithKeySteps(name: string, key: string, now: Date): Steps<{ site: Site; key: string }> {
  const site = yield* createSiteSteps(name, now);
  return { site, key: (yield* createKeySteps(site.id, key, now)).key };
}

/** Revokes a key; true when it was active. Revoking twice is harmless. */
export function* revokeKeySteps(keyId: string, now: Date): Steps<boolean> {
  if (!(yield* ask('sites', 'keyExists', keyId))) throw notFound('key');
  return yield* ask('sites', 'revokeKey', keyId, now);
}

/** Changes a site's settings (name, description, handle, url, language, postsPerPage, timeZone). */
export function* updateSettingsSteps(siteId: string, patch: SiteSettingsPatch, now: Date, options: SettingsOptions): Steps<Site> {
  checkPatchNotEmpty(patch);
  // Locked: a post written meanwhile waits, and its version increment comes after ours.
  const current = yield* ask('sites', 'lock', siteId);
  if (!current) throw notFound('site');
  const changes = yield* settingsChanges(current, patch, now, options);
  try {
    yield* inSavepoint(() => ask('sites', 'update', siteId, changes));
  } catch (error) {
    // Another writer took the handle between the look and the write: the same answer as the look's.
    if (error instanceof HandleTakenMeanwhile && changes.handle !== undefined) throw handleTaken(changes.handle);
    throw error;
  }
  return { ...current, ...changes };
}

/**
 * Marks the site's own domain proven (its token was found, or an operator vouches for it):
 * from now on its host serves the site. 409 when it has no own domain, when the token changed
 * since it was checked (`checkedToken`; null: an operator's word), or when another site proved
 * the same host first.
 */
export function* markDomainProvenSteps(siteId: string, checkedToken: string | null, now: Date): Steps<Site> {
  const current = yield* ask('sites', 'lock', siteId);
  if (!current) throw notFound('site');
  const pending = domainToProve(current, checkedToken);
  if (!pending) return current;
  yield* ask('sites', 'lockHost', pending.host);
  const holder = yield* ask('sites', 'byHost', pending.host);
  if (holder !== undefined && holder.id !== siteId) throw conflict(`Another site already answers on ${pending.host}`);
  const changes = { domainToken: null, contentVersion: current.contentVersion + 1, contentUpdatedAt: now };
  yield* ask('sites', 'update', siteId, changes);
  return { ...current, ...changes };
}

/**
 * Creates the first site and its key when the database has no site yet. Answers the key in
 * clear only when it was generated here, so the caller can show it once.
 */
export function* bootstrapFirstSiteSteps(siteName: string, bootstrapKey: string | null, now: Date): Steps<{ site: Site; generatedKey: string | null } | null> {
  yield* ask('sites', 'lockBootstrap');
  if (yield* ask('sites', 'any')) return null;
  const { site, key } = yield* createSiteWithKeySteps(siteName, bootstrapKey ?? generateKey(), now);
  return { site, generatedKey: bootstrapKey ? null : key };
}

/** How the store proves domains: the hosts no site may claim, the DNS lookup (tests give their own). */
export interface DomainOptions {
  reservedHosts?: ReservedHosts;
  resolveTxt?: ResolveTxt;
}

let defaultResolveTxt: ResolveTxt | null = null;

/**
 * Checks the proof of a site's pending domain, outside any transaction (DNS takes seconds): the
 * token checked (to be still the site's when it is marked proven), null on an operator's word or
 * when the domain is proven already. 409 naming the record when DNS does not hold the token.
 */
async function proveDomain(site: Site, how: { dns: boolean }, options: DomainOptions): Promise<string | null> {
  if (!domainToProve(site, null) || !how.dns) return null;
  const token = site.domainToken!;
  const resolveTxt = options.resolveTxt ?? (defaultResolveTxt ??= systemResolveTxt());
  const missing = await tokenMissing(site.url!, token, resolveTxt);
  if (missing) throw conflict(`The domain is not proven yet: ${missing}. Publish "${token}" there, then check again`);
  return token;
}

export interface SiteStoreOptions {
  /** How this instance learns that keys changed in the database (dropping its key cache). */
  keyChanges: KeyChanges;
  /**
   * Runs steps that only read, at once where the database answers at once (SQLite: every
   * request authenticates, and a cache miss must not cost it a promise), else with a promise.
   */
  readAtOnce<T>(steps: () => Steps<T>): MaybePromise<T>;
}

/**
 * Sites and their API keys: what the admin CLI manages and every request authenticates with.
 * Keys are checked through a cache that any change to keys, by whatever writer, empties: at
 * once on SQLite, within KEY_CHANGE_STALE_MS on PostgreSQL's other instances (see
 * sites/postgres.ts). The same logic on both databases; the database is `db`'s.
 */
export class SiteStore {
  private readonly cache: KeyLookupCache;
  private domains: DomainOptions = {};

  constructor(
    private readonly db: StepDatabase,
    private readonly options: SiteStoreOptions,
  ) {
    this.cache = new KeyLookupCache(options.keyChanges);
  }

  /** The service's own hosts and the DNS lookup proving domains (from the configuration: the sites plugin). */
  useDomains(domains: DomainOptions): void {
    this.domains = domains;
  }

  /** Starts watching for key changes made elsewhere; until then the key cache stays off where that needs watching. */
  watchKeyChanges(onError: (error: unknown) => void): Promise<void> {
    return this.options.keyChanges.watch(onError);
  }

  /** Stops watching for key changes (before the database closes). */
  close(): Promise<void> {
    return this.options.keyChanges.close();
  }

  /**
   * The site of an active key, or undefined. It runs on every request: answered from the
   * cache, else at once on SQLite (no promise), with a promise on PostgreSQL.
   */
  authenticate(key: string): MaybePromise<AuthenticatedKey | undefined> {
    const generation = this.cache.checkSignal();
    const hash = hashKey(key);
    const hit = this.cache.get(hash);
    if (hit !== undefined) return hit ?? undefined;
    return then(this.options.readAtOnce(() => ask('sites', 'activeKey', hash)), (found) => {
      // Dropped while the lookup ran (the signal moved meanwhile): the answer may predate the change.
      this.cache.checkSignal();
      this.cache.set(hash, found ?? null, generation);
      return found;
    });
  }

  /** A new site with its first key (a new one unless given), answered in clear this once. */
  create(name: string, key = generateKey(), now = new Date()): Promise<{ site: Site; key: string }> {
    return this.db.write(() => createSiteWithKeySteps(name, key, now));
  }

  /** The first site and its key, when the database has none (see bootstrapFirstSiteSteps). */
  bootstrapFirstSite(siteName: string, bootstrapKey: string | null): Promise<{ site: Site; generatedKey: string | null } | null> {
    return this.db.write(() => bootstrapFirstSiteSteps(siteName, bootstrapKey, new Date()));
  }

  list(): Promise<Site[]> {
    return this.db.read(() => ask('sites', 'list'));
  }

  async get(siteId: string): Promise<Site> {
    const site = await this.db.read(() => ask('sites', 'find', siteId));
    if (!site) throw notFound('site');
    return site;
  }

  /** Changes a site's settings (name, description, handle, url, language, postsPerPage, timeZone). */
  update(siteId: string, patch: SiteSettingsPatch, now = new Date()): Promise<Site> {
    return this.db.write(() => updateSettingsSteps(siteId, patch, now, { reservedHosts: this.domains.reservedHosts }));
  }

  /**
   * Proves the site's own domain: by its DNS TXT record (`dns`), or on an operator's word.
   * 409 when the record does not hold the token (yet); the site as it is when already proven.
   */
  async verifyDomain(siteId: string, how: { dns: boolean }, now = new Date()): Promise<Site> {
    const checkedToken = await proveDomain(await this.get(siteId), how, this.domains);
    return this.db.write(() => markDomainProvenSteps(siteId, checkedToken, now));
  }

  createKey(siteId: string, key = generateKey(), now = new Date()): Promise<{ key: string; info: ApiKeyInfo }> {
    return this.db.write(() => createKeySteps(siteId, key, now));
  }

  listKeys(siteId: string): Promise<ApiKeyInfo[]> {
    return this.db.read(function* () {
      if (!(yield* ask('sites', 'find', siteId))) throw notFound('site');
      return yield* ask('sites', 'keysOf', siteId);
    });
  }

  /** Revokes a key: it stops working here at once, elsewhere as soon as the key changes reach them. False when it was already revoked. */
  async revokeKey(keyId: string, now = new Date()): Promise<boolean> {
    const changed = await this.db.write(() => revokeKeySteps(keyId, now));
    this.cache.clear();
    return changed;
  }
}
