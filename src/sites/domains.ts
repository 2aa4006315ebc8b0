import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import os from 'node:os';
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
 * A hostname as the reserved check compares it: lower case, without brackets or trailing dots,
 * an IP address in its one canonical spelling (IPv4 in any of the forms URLs accept, such as
 * 0x7f.1 or 2130706433, as dotted decimal; IPv6 compressed and without a zone; an IPv4-mapped
 * IPv6 address as its IPv4 address).
 */
export function canonicalHost(raw: string): string {
  let host = raw.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
  if (host.includes(':')) {
    // A link-local address's zone (fe80::1%eth0) names an interface of this machine, not another address.
    host = host.replace(/%.*$/, '');
    if (!URL.canParse(`http://[${host}]/`)) return host;
    const ipv6 = new URL(`http://[${host}]/`).hostname.slice(1, -1);
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ipv6);
    if (!mapped) return ipv6;
    const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return URL.canParse(`http://${host}/`) ? new URL(`http://${host}/`).hostname : host;
}

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::']);

/** localhost, a name under .localhost, 127.0.0.0/8 or ::1 (canonical hosts). */
const isLoopback = (host: string) => host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1';

/** Hosts no site may claim (see reservedHosts). */
export interface ReservedHosts {
  has(hostname: string): boolean;
}

/**
 * Hosts no site may claim: the service's own (PUBLIC_BASE_URL's and HOST's), compared by
 * canonical hostname (canonicalHost) whatever the port. When the service listens on a loopback
 * or wildcard address, or PUBLIC_BASE_URL is a loopback name, every loopback name and address
 * is its own; listening on a wildcard, so is every address of the machine's interfaces.
 */
export function reservedHosts(config: { publicBaseUrl: string; host: string }, interfaceAddresses: () => string[] = localAddresses): ReservedHosts {
  const listen = canonicalHost(config.host);
  const own = new Set([canonicalHost(hostnameOf(config.publicBaseUrl)), listen]);
  if (WILDCARD_HOSTS.has(listen)) for (const address of interfaceAddresses()) own.add(canonicalHost(address));
  own.delete('');
  const loopbackIsOwn = WILDCARD_HOSTS.has(listen) || [...own].some(isLoopback);
  return {
    has(hostname) {
      const host = canonicalHost(hostname);
      return own.has(host) || (loopbackIsOwn && isLoopback(host));
    },
  };
}

function localAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((addresses) => (addresses ?? []).map((address) => address.address));
}
