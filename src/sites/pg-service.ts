import type { PgExecutor } from '../db/postgres.js';
import type { Site } from '../db/schema.js';
import { notFound } from '../errors.js';
import { PgKeyAuthenticator, PgKeyChangeSignal, type PgKeyChangeOptions } from './pg-key-cache.js';
import { createKey, createSiteWithKey, getSite, listKeys, listSites } from './pg-keys.js';
import { markDomainProven, updateSiteSettings } from './pg-settings.js';
import { proveDomain, type DomainOptions } from './domain-proof.js';
import type { ApiKeyInfo, AuthenticatedKey } from './keys.js';
import type { SiteSettingsPatch } from './settings.js';

/**
 * SiteService (service.ts) on PostgreSQL: the same methods, answers and errors. Keys are
 * checked through a cache that a key change made by any instance empties within
 * KEY_CHANGE_STALE_MS (see PgKeyChangeSignal); close() stops watching for those changes.
 */
export class PgSiteService {
  private constructor(
    private readonly db: PgExecutor,
    private readonly signal: PgKeyChangeSignal,
    private readonly authenticator: PgKeyAuthenticator,
    private readonly domains: DomainOptions,
  ) {}

  /** Reads the key change counter once (rejecting when the database cannot answer), then watches it. */
  static async open(db: PgExecutor, options: PgKeyChangeOptions = {}, domains: DomainOptions = {}): Promise<PgSiteService> {
    const signal = await PgKeyChangeSignal.start(db, options);
    return new PgSiteService(db, signal, new PgKeyAuthenticator(db, signal), domains);
  }

  authenticate(key: string): Promise<AuthenticatedKey | undefined> {
    return this.authenticator.authenticate(key);
  }

  create(name: string): Promise<{ site: Site; key: string }> {
    return createSiteWithKey(this.db, name);
  }

  list(): Promise<Site[]> {
    return listSites(this.db);
  }

  async get(siteId: string): Promise<Site> {
    const site = await getSite(this.db, siteId);
    if (!site) throw notFound('site');
    return site;
  }

  update(siteId: string, patch: SiteSettingsPatch): Promise<Site> {
    return updateSiteSettings(this.db, siteId, patch, new Date(), { reservedHosts: this.domains.reservedHosts });
  }

  /** SiteService.verifyDomain on PostgreSQL. */
  async verifyDomain(siteId: string, how: { dns: boolean }): Promise<Site> {
    const site = await this.get(siteId);
    const checkedToken = await proveDomain(site, how, this.domains);
    return markDomainProven(this.db, siteId, checkedToken);
  }

  createKey(siteId: string): Promise<{ key: string; info: ApiKeyInfo }> {
    return createKey(this.db, siteId);
  }

  async listKeys(siteId: string): Promise<ApiKeyInfo[]> {
    await this.get(siteId);
    return listKeys(this.db, siteId);
  }

  /** Revokes a key: at once here, within KEY_CHANGE_STALE_MS on the other instances. False when it was already revoked. */
  revokeKey(keyId: string): Promise<boolean> {
    return this.authenticator.revoke(keyId);
  }

  close(): Promise<void> {
    return this.signal.close();
  }
}
