import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import type { Site } from '../db/schema.js';

/**
 * A site's own domain is proven before it serves the site: setting `url` to a new host leaves
 * it pending with a token, and the host serves the site only once the token is found in the
 * DNS TXT record `_blog-verify.<host>` (or an operator vouches for it: `blog-admin site
 * verify-domain`). Without this any tenant could claim any host no other site holds: the
 * service's own (serving its pages, feeds and robots.txt on the platform's address) or a
 * domain another tenant is about to use.
 */

/** Looks up the TXT records of a name: each record as the strings it is made of. */
export type ResolveTxt = (name: string) => Promise<string[][]>;

/** Node's resolver, with a short timeout: a check waits seconds at most. */
export function systemResolveTxt(): ResolveTxt {
  const resolver = new dns.promises.Resolver({ timeout: 3000, tries: 2 });
  return (name) => resolver.resolveTxt(name);
}

export const newDomainToken = () => `blog-verify-${randomBytes(18).toString('base64url')}`;

/** The hostname of a site's `url` (no port: DNS names have none). */
export const hostnameOf = (url: string) => new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();

export const verificationRecord = (url: string) => `_blog-verify.${hostnameOf(url)}`;

/** What GET /api/v1/site shows of a site's own domain. */
export interface DomainState {
  host: string;
  status: 'pending' | 'verified';
  /** While pending: the TXT record that proves the domain. */
  verification: { type: 'TXT'; name: string; value: string } | null;
}

export function domainState(site: Pick<Site, 'url' | 'domainToken'>): DomainState | null {
  if (!site.url) return null;
  const host = new URL(site.url).host;
  if (site.domainToken === null) return { host, status: 'verified', verification: null };
  return { host, status: 'pending', verification: { type: 'TXT', name: verificationRecord(site.url), value: site.domainToken } };
}

/** Whether a site's own domain is proven (it serves the site, and its links use it). */
export const domainProven = (site: Pick<Site, 'url' | 'domainToken'>) => site.url !== null && site.domainToken === null;

/**
 * Whether the TXT record of the site's host holds its token: null when it does, else why not
 * (no such record, or the lookup failed: a DNS outage is not a proof either way).
 */
export async function tokenMissing(url: string, token: string, resolveTxt: ResolveTxt): Promise<string | null> {
  const name = verificationRecord(url);
  let records: string[][];
  try {
    records = await resolveTxt(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === dns.NOTFOUND || code === dns.NODATA || code === 'ENOTFOUND' || code === 'ENODATA') return `there is no TXT record ${name}`;
    return `the TXT record ${name} could not be looked up (${code ?? (error as Error).message})`;
  }
  // A long TXT value comes in strings of 255 bytes at most: joined, as RFC 7208 reads them.
  return records.some((parts) => parts.join('').trim() === token) ? null : `the TXT record ${name} does not hold the site's token`;
}

/**
 * Hosts no site may claim: the service's own (PUBLIC_BASE_URL's and HOST's), compared by
 * hostname whatever the port.
 */
export function reservedHosts(config: { publicBaseUrl: string; host: string }): ReadonlySet<string> {
  const hosts = new Set<string>([hostnameOf(config.publicBaseUrl), config.host.replace(/^\[(.*)\]$/, '$1').toLowerCase()]);
  return hosts;
}
