import dns from 'node:dns';
import net from 'node:net';

/**
 * Addresses a webhook may not call unless WEBHOOK_ALLOW_PRIVATE=true: anything that reaches
 * this machine, its network or its cloud's metadata service instead of a public receiver.
 * Checked on the addresses a name resolves to, every time a delivery connects (a name may be
 * re-pointed after it was checked), and the connection goes to the address that was checked.
 */
const RANGES: { prefix: string; bits: number; reason: string }[] = [
  { prefix: '0.0.0.0', bits: 8, reason: 'an unspecified address' },
  { prefix: '10.0.0.0', bits: 8, reason: 'a private address' },
  { prefix: '100.64.0.0', bits: 10, reason: 'a shared (carrier-grade NAT) address' },
  { prefix: '127.0.0.0', bits: 8, reason: 'a loopback address' },
  { prefix: '169.254.0.0', bits: 16, reason: 'a link-local address (where cloud metadata services live)' },
  { prefix: '172.16.0.0', bits: 12, reason: 'a private address' },
  { prefix: '192.0.0.0', bits: 24, reason: 'a protocol-assignment address' },
  { prefix: '192.0.2.0', bits: 24, reason: 'a documentation address' },
  { prefix: '192.88.99.0', bits: 24, reason: 'a relay address' },
  { prefix: '192.168.0.0', bits: 16, reason: 'a private address' },
  { prefix: '198.18.0.0', bits: 15, reason: 'a benchmarking address' },
  { prefix: '198.51.100.0', bits: 24, reason: 'a documentation address' },
  { prefix: '203.0.113.0', bits: 24, reason: 'a documentation address' },
  { prefix: '224.0.0.0', bits: 4, reason: 'a multicast address' },
  { prefix: '240.0.0.0', bits: 4, reason: 'a reserved or broadcast address' },
  { prefix: '::', bits: 128, reason: 'an unspecified address' },
  { prefix: '::1', bits: 128, reason: 'a loopback address' },
  { prefix: '100::', bits: 64, reason: 'a discard address' },
  { prefix: '2001::', bits: 32, reason: 'a Teredo tunnel address' },
  { prefix: '2001:db8::', bits: 32, reason: 'a documentation address' },
  { prefix: 'fc00::', bits: 7, reason: 'a private (unique local) address' },
  { prefix: 'fe80::', bits: 10, reason: 'a link-local address' },
  { prefix: 'fec0::', bits: 10, reason: 'a site-local address' },
  { prefix: 'ff00::', bits: 8, reason: 'a multicast address' },
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

const PARSED = RANGES.map((range) => ({ ...range, bytes: ipBytes(range.prefix)! }));

/** IPv4 addresses carried inside IPv6 ones (mapped, compatible, NAT64, 6to4), checked as IPv4. */
function embeddedIpv4(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length !== 16) return null;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12); // ::ffff:a.b.c.d
  if (zeros(0, 12) && !zeros(12, 16)) return bytes.slice(12); // ::a.b.c.d (deprecated "compatible")
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return bytes.slice(12); // 64:ff9b::/96
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6); // 2002::/16 (6to4)
  return null;
}

/** Why an address may not be called ("a loopback address"), or null for a public one. */
export function forbiddenReason(address: string): string | null {
  const bytes = ipBytes(address);
  if (!bytes) return 'not an IP address';
  const inner = embeddedIpv4(bytes);
  if (inner) {
    const reason = forbiddenReason(Array.from(inner).join('.'));
    if (reason) return reason;
  }
  return PARSED.find((range) => within(bytes, range.bytes, range.bits))?.reason ?? null;
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
