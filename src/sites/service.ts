import type { DbHandle } from '../db/client.js';
import type { Site } from '../db/schema.js';
import { notFound } from '../errors.js';
import { dataVersionSignal, KeyAuthenticator } from './key-cache.js';
import { createKey, createSiteWithKey, getSite, listKeys, listSites, type ApiKeyInfo, type AuthenticatedKey } from './keys.js';
import { markDomainProven, updateSiteSettings, type SiteSettingsPatch } from './settings.js';
import { proveDomain, type DomainOptions } from './domain-proof.js';

export type { Site, SiteSettingsPatch };

/** Sites and their API keys: what the admin CLI manages and every request authenticates with. */
export class SiteService {
  private readonly authenticator: KeyAuthenticator;

  constructor(
    private readonly handle: DbHandle,
    private readonly domains: DomainOptions = {},
  ) {
    this.authenticator = new KeyAuthenticator(handle.db, dataVersionSignal(handle.dataVersion));
  }

  /**
   * The site of an active key, or undefined. Synchronous on purpose: it runs on every request,
   * answered from a cache that is dropped whenever the database changed under it.
   */
  authenticate(key: string): AuthenticatedKey | undefined {
    return this.authenticator.authenticate(key);
  }

  /** A new site with its first key, returned in clear this once. */
  async create(name: string): Promise<{ site: Site; key: string }> {
    return createSiteWithKey(this.handle.db, name);
  }

  async list(): Promise<Site[]> {
    return listSites(this.handle.db);
  }

  async get(siteId: string): Promise<Site> {
    const site = getSite(this.handle.db, siteId);
    if (!site) throw notFound('site');
    return site;
  }

  /** Changes a site's settings (name, description, handle, url, language, postsPerPage). */
  async update(siteId: string, patch: SiteSettingsPatch): Promise<Site> {
    return updateSiteSettings(this.handle.db, siteId, patch, new Date(), { reservedHosts: this.domains.reservedHosts });
  }

  /**
   * Proves the site's own domain: by its DNS TXT record (`dns`), or on an operator's word.
   * 409 when the record does not hold the token (yet); the site as it is when already proven.
   */
  async verifyDomain(siteId: string, how: { dns: boolean }): Promise<Site> {
    const site = await this.get(siteId);
    const checkedToken = await proveDomain(site, how, this.domains);
    return markDomainProven(this.handle.db, siteId, checkedToken);
  }

  async createKey(siteId: string): Promise<{ key: string; info: ApiKeyInfo }> {
    return createKey(this.handle.db, siteId);
  }

  async listKeys(siteId: string): Promise<ApiKeyInfo[]> {
    await this.get(siteId);
    return listKeys(this.handle.db, siteId);
  }

  /** Revokes a key; it stops working at once. False when it was already revoked. */
  async revokeKey(keyId: string): Promise<boolean> {
    return this.authenticator.revoke(keyId);
  }
}
