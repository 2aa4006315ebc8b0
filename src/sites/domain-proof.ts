import type { Site } from '../db/schema.js';
import { conflict } from '../errors.js';
import { systemResolveTxt, tokenMissing, type ResolveTxt } from './domains.js';
import { domainToProve } from './rules.js';

/** How site services prove domains: the hosts no site may claim, the DNS lookup (tests give their own). */
export interface DomainOptions {
  reservedHosts?: ReadonlySet<string>;
  resolveTxt?: ResolveTxt;
}

let defaultResolveTxt: ResolveTxt | null = null;

/**
 * Checks the proof of a site's pending domain (shared by both databases' services): the token
 * checked (to be still the site's when it is marked proven), null on an operator's word or
 * when the domain is proven already. 409 naming the record when DNS does not hold the token.
 */
export async function proveDomain(site: Site, how: { dns: boolean }, options: DomainOptions): Promise<string | null> {
  if (!domainToProve(site, null) || !how.dns) return null;
  const token = site.domainToken!;
  const resolveTxt = options.resolveTxt ?? (defaultResolveTxt ??= systemResolveTxt());
  const missing = await tokenMissing(site.url!, token, resolveTxt);
  if (missing) throw conflict(`The domain is not proven yet: ${missing}. Publish "${token}" there, then check again`);
  return token;
}
