import dns from 'node:dns';
import net from 'node:net';

/**
 * Addresses a webhook may not call unless WEBHOOK_ALLOW_PRIVATE=true: anything that reaches
 * this machine, its network or its cloud's metadata service instead of a public receiver.
 * Checked on the addresses a name resolves to, every time a delivery connects (a name may be
 * re-pointed after it was checked), and the connection goes to the address that was checked.
 *
 * The data below is the IANA special-purpose registries with their "Globally Reachable"
 * column, transcribed on 2026-11-25:
 * - IANA IPv4 Special-Purpose Address Registry (iana-ipv4-special-registry, RFC 6890 and
 *   updates), plus 224.0.0.0/4 multicast from the IANA IPv4 Address Space Registry;
 * - IANA IPv6 Special-Purpose Address Registry (iana-ipv6-special-registry, last updated
 *   2025-10-09), plus what the IANA IPv6 Address Space Registry does not allocate as global
 *   unicast (everything outside 2000::/3 but 64:ff9b::/96: fec0::/10 site-local, ff00::/8
 *   multicast, the embedded-IPv4 forms of ::/8 ...).
 * The most specific entry decides (192.0.0.9/32 is reachable inside 192.0.0.0/24, which is
 * not). `global: null` is the registry's "N/A": forms that embed an IPv4 address, checked as
 * that address (`embeds`), or refused outright when the address cannot be told (Teredo).
 */
interface SpecialRange {
  prefix: string;
  bits: number;
  name: string;
  global: boolean | null;
}

const IPV4_SPECIAL: SpecialRange[] = [
  { prefix: '0.0.0.0', bits: 8, name: 'a "this network" address', global: false },
  { prefix: '10.0.0.0', bits: 8, name: 'a private address', global: false },
  { prefix: '100.64.0.0', bits: 10, name: 'a shared (carrier-grade NAT) address', global: false },
  { prefix: '127.0.0.0', bits: 8, name: 'a loopback address', global: false },
  { prefix: '169.254.0.0', bits: 16, name: 'a link-local address (where cloud metadata services live)', global: false },
  { prefix: '172.16.0.0', bits: 12, name: 'a private address', global: false },
  { prefix: '192.0.0.0', bits: 24, name: 'an IETF protocol-assignment address', global: false },
  { prefix: '192.0.0.0', bits: 29, name: 'an IPv4 service continuity address', global: false },
  { prefix: '192.0.0.8', bits: 32, name: 'the IPv4 dummy address', global: false },
  { prefix: '192.0.0.9', bits: 32, name: 'the PCP anycast address', global: true },
  { prefix: '192.0.0.10', bits: 32, name: 'the TURN anycast address', global: true },
  { prefix: '192.0.0.170', bits: 31, name: 'a NAT64/DNS64 discovery address', global: false },
  { prefix: '192.0.2.0', bits: 24, name: 'a documentation address', global: false },
  { prefix: '192.31.196.0', bits: 24, name: 'an AS112 address', global: true },
  { prefix: '192.52.193.0', bits: 24, name: 'an AMT address', global: true },
  { prefix: '192.88.99.0', bits: 24, name: 'a deprecated 6to4 relay anycast address', global: false },
  { prefix: '192.168.0.0', bits: 16, name: 'a private address', global: false },
  { prefix: '192.175.48.0', bits: 24, name: 'an AS112 direct delegation address', global: true },
  { prefix: '198.18.0.0', bits: 15, name: 'a benchmarking address', global: false },
  { prefix: '198.51.100.0', bits: 24, name: 'a documentation address', global: false },
  { prefix: '203.0.113.0', bits: 24, name: 'a documentation address', global: false },
  { prefix: '224.0.0.0', bits: 4, name: 'a multicast address', global: false },
  { prefix: '240.0.0.0', bits: 4, name: 'a reserved address', global: false },
  { prefix: '255.255.255.255', bits: 32, name: 'the limited broadcast address', global: false },
];

const IPV6_SPECIAL: SpecialRange[] = [
  // IPv6 Address Space Registry: only 2000::/3 is global unicast (and 64:ff9b::/96 below).
  { prefix: '::', bits: 0, name: 'an address IANA does not allocate as global unicast', global: false },
  { prefix: '2000::', bits: 3, name: 'a global unicast address', global: true },
  { prefix: 'fc00::', bits: 7, name: 'a private (unique local) address', global: false },
  { prefix: 'fe80::', bits: 10, name: 'a link-local address', global: false },
  { prefix: 'fec0::', bits: 10, name: 'a site-local address', global: false },
  { prefix: 'ff00::', bits: 8, name: 'a multicast address', global: false },
  // Special-Purpose Address Registry.
  { prefix: '::1', bits: 128, name: 'a loopback address', global: false },
  { prefix: '::', bits: 128, name: 'the unspecified address', global: false },
  { prefix: '::ffff:0:0', bits: 96, name: 'an IPv4-mapped address', global: false },
  { prefix: '64:ff9b::', bits: 96, name: 'a NAT64 address', global: null },
  { prefix: '64:ff9b:1::', bits: 48, name: 'a local-use NAT64 address', global: false },
  { prefix: '100::', bits: 64, name: 'a discard-only address', global: false },
  { prefix: '100:0:0:1::', bits: 64, name: 'a dummy IPv6 address', global: false },
  { prefix: '2001::', bits: 23, name: 'an IETF protocol-assignment address', global: false },
  { prefix: '2001::', bits: 32, name: 'a Teredo tunnel address', global: false },
  { prefix: '2001:1::1', bits: 128, name: 'the PCP anycast address', global: true },
  { prefix: '2001:1::2', bits: 128, name: 'the TURN anycast address', global: true },
  { prefix: '2001:1::3', bits: 128, name: 'the DNS-SD SRP anycast address', global: true },
  { prefix: '2001:2::', bits: 48, name: 'a benchmarking address', global: false },
  { prefix: '2001:3::', bits: 32, name: 'an AMT address', global: true },
  { prefix: '2001:4:112::', bits: 48, name: 'an AS112 address', global: true },
  { prefix: '2001:10::', bits: 28, name: 'a deprecated ORCHID address', global: false },
  { prefix: '2001:20::', bits: 28, name: 'an ORCHIDv2 address', global: true },
  { prefix: '2001:30::', bits: 28, name: 'a drone remote ID address', global: true },
  { prefix: '2001:db8::', bits: 32, name: 'a documentation address', global: false },
  { prefix: '2002::', bits: 16, name: 'a 6to4 address', global: null },
  { prefix: '2620:4f:8000::', bits: 48, name: 'an AS112 direct delegation address', global: true },
  { prefix: '3fff::', bits: 20, name: 'a documentation address', global: false },
  { prefix: '5f00::', bits: 16, name: 'a segment routing (SRv6) SID', global: false },
];

/** The bytes of an IP address (4 or 16), or null when it is not one. */
export function ipBytes(address: string): Uint8Array | null {
  const family = net.isIP(address);
  if (family === 4) return Uint8Array.from(address.split('.').map(Number));
  if (family !== 6) return null;
  let text = address.replace(/%.*$/, '').toLowerCase();
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === null ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}

const within = (bytes: Uint8Array, prefix: Uint8Array, bits: number) => {
  if (bytes.length !== prefix.length) return false;
  for (let i = 0; i < bits; i++) {
    const bit = 7 - (i % 8);
    if (((bytes[i >> 3] >> bit) & 1) !== ((prefix[i >> 3] >> bit) & 1)) return false;
  }
  return true;
};

const parse = (ranges: SpecialRange[]) => ranges.map((range) => ({ ...range, bytes: ipBytes(range.prefix)! })).sort((a, b) => b.bits - a.bits);
// Most specific first: the first match decides.
const IPV4 = parse(IPV4_SPECIAL);
const IPV6 = parse(IPV6_SPECIAL);

/**
 * The IPv4 address inside an IPv6 one that carries it, where the registry leaves the answer
 * to that address (NAT64's 64:ff9b::/96 and 6to4's 2002::/16); the other embedding forms
 * (IPv4-mapped, SIIT ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d, local-use NAT64, Teredo)
 * are refused whatever they carry.
 */
function embeddedIpv4(bytes: Uint8Array, range: SpecialRange): Uint8Array | null {
  if (range.prefix === '64:ff9b::') return bytes.slice(12);
  if (range.prefix === '2002::') return bytes.slice(2, 6);
  return null;
}

/** Why an address may not be called ("a loopback address"), or null for a public one. */
export function forbiddenReason(address: string): string | null {
  const bytes = ipBytes(address);
  if (!bytes) return 'not an IP address';
  const range = (bytes.length === 4 ? IPV4 : IPV6).find((candidate) => within(bytes, candidate.bytes, candidate.bits));
  if (!range || range.global === true) return null;
  if (range.global === false) return range.name;
  const inner = embeddedIpv4(bytes, range);
  const reason = inner ? forbiddenReason(Array.from(inner).join('.')) : 'an address whose destination cannot be told';
  return reason ? `${range.name} carrying ${reason}` : null;
}

/** A refused address: permanent for a delivery (retrying cannot help), 400 at creation. */
export class ForbiddenAddressError extends Error {
  readonly permanent = true;
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${host} resolves to ${address}, ${reason}: webhooks only call public addresses (WEBHOOK_ALLOW_PRIVATE=true allows others)`);
    this.name = 'ForbiddenAddressError';
  }
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Names that are this machine whatever DNS says. */
const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;
const lookupAll: LookupAll = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * Checks where a URL points before it is saved: literal addresses and names that resolve now.
 * A name that does not resolve (yet) is accepted: each delivery checks again when it connects.
 */
export async function checkDestination(url: URL, resolve: LookupAll = lookupAll): Promise<void> {
  const host = hostOf(url);
  if (net.isIP(host)) {
    const reason = forbiddenReason(host);
    if (reason) throw new ForbiddenAddressError(host, host, reason);
    return;
  }
  if (isLocalName(host)) throw new ForbiddenAddressError(host, '127.0.0.1', 'a loopback address');
  let addresses: { address: string }[];
  try {
    addresses = await resolve(host);
  } catch {
    return;
  }
  for (const { address } of addresses) {
    const reason = forbiddenReason(address);
    if (reason) throw new ForbiddenAddressError(host, address, reason);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves the name and refuses it when any of its addresses
 * is forbidden, so the connection is made only to an address that was checked (no window for
 * a re-pointed name between the check and the connection).
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  if (isLocalName(hostname)) {
    callback(new ForbiddenAddressError(hostname, '127.0.0.1', 'a loopback address'), '', 4);
    return;
  }
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4);
    for (const { address } of addresses) {
      const reason = forbiddenReason(address);
      if (reason) return callback(new ForbiddenAddressError(hostname, address, reason), '', 4);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
    callback(null, first.address, first.family);
  });
}

/** A literal IP in a URL is connected to without any lookup: checked here instead. */
export function literalAddressProblem(url: URL): ForbiddenAddressError | null {
  const host = hostOf(url);
  if (!net.isIP(host)) return null;
  const reason = forbiddenReason(host);
  return reason ? new ForbiddenAddressError(host, host, reason) : null;
}
