// Keeps webhook deliveries from being aimed at the operator's own network (SSRF): one verdict on
// addresses, shared by the create/update validation and by the delivery client at connect time.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export const MAX_URL_LENGTH = 2048;

/** The lookup shape resolveProblem needs; dns.promises.lookup satisfies it, tests inject their own. */
export type LookupAll = (hostname: string, options: { all: true }) => Promise<dns.LookupAddress[]>;

// ipaddr.js range names → the words a 400 shows. Everything not named here (documentation,
// benchmarking, AS112, AMT, teredo, ORCHID...) is "reserved": none of it is a real webhook receiver.
const V4_KIND: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
};
const V6_KIND: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
};
// IPv6 forms whose packets end up at an IPv4 address, so that address is what must be judged.
const EMBEDS_V4: Record<string, string> = {
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
};

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function v4Kind(a: ipaddr.IPv4): string | null {
  const range = a.range();
  if (range === 'unicast') return null;
  if (range === 'linkLocal' && a.toString() === '169.254.169.254') return 'cloud metadata';
  return V4_KIND[range] ?? 'reserved';
}

function embeddedV4(a: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const p = a.parts;
  const from = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === 'ipv4Mapped' || range === 'rfc6145') return from(p[6], p[7]);
  // Only the well-known /96 has a fixed place for the IPv4 part; the local-use 64:ff9b:1::/48
  // depends on the operator's prefix length, so it cannot be judged and is refused.
  if (range === 'rfc6052') return a.match(NAT64_WELL_KNOWN) ? from(p[6], p[7]) : null;
  if (range === '6to4') return from(p[1], p[2]);
  return null;
}

// ipaddr.js reads "0177.0.0.1", "0x7f.1" and "2130706433" the way inet_aton does, but a few
// spellings it and the WHATWG URL parser disagree on; an address two parsers read differently is
// refused rather than guessed at.
function parseAddress(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const s = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (!ipaddr.isValid(s)) return null;
  const a = ipaddr.parse(s);
  if (a.kind() === 'ipv4' && net.isIP(s) === 0) {
    let whatwg: string | undefined;
    try {
      whatwg = new URL(`http://${s}/`).hostname;
    } catch {
      whatwg = undefined;
    }
    if (whatwg !== a.toString()) return null;
  }
  return a;
}

/**
 * Null when `ip` is a public unicast address, else a short reason naming the address, e.g.
 * "private address (10.0.0.5)" or "private address (::ffff:a00:5, IPv4-mapped 10.0.0.5)".
 * Unusual IPv4 spellings are judged by the address they denote.
 */
export function addressProblem(ip: string): string | null {
  const a = parseAddress(ip.trim());
  if (a === null) return 'not an IP address';
  if (a instanceof ipaddr.IPv4) {
    const kind = v4Kind(a);
    return kind === null ? null : `${kind} address (${a.toString()})`;
  }
  const v6 = a as ipaddr.IPv6;
  const range = v6.range();
  if (range in EMBEDS_V4) {
    const v4 = embeddedV4(v6, range);
    if (v4 === null) return `reserved address (${v6.toString()})`;
    const kind = v4Kind(v4);
    return kind === null ? null : `${kind} address (${v6.toString()}, ${EMBEDS_V4[range]} ${v4.toString()})`;
  }
  if (range !== 'unicast') return `${V6_KIND[range] ?? 'reserved'} address (${v6.toString()})`;
  // ipaddr.js calls everything it has no name for "unicast", including the deprecated
  // IPv4-compatible ::a.b.c.d and unallocated space; only 2000::/3 is routed on the Internet.
  if (!v6.match(GLOBAL_UNICAST_V6)) return `reserved address (${v6.toString()})`;
  return null;
}

const withArticle = (reason: string): string => (/^[aeiou]/i.test(reason) ? `an ${reason}` : `a ${reason}`);

/** "resolves to a private address (10.0.0.5)": the form both the URL rule and delivery use. */
export const resolvesTo = (reason: string): string => `resolves to ${withArticle(reason)}`;

/**
 * The `url` rule at create/update, as a 400 message, or null when acceptable. A DNS name is not
 * resolved here (see resolveProblem); an IP literal is judged at once unless allowPrivate.
 */
export function urlProblem(raw: string, allowPrivate: boolean): string | null {
  if (typeof raw !== 'string' || raw === '') return 'must be a URL';
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a valid URL';
  }
  if (url.protocol !== 'https:') return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not contain a username or password';
  if (url.hostname === '') return 'must have a host';
  if (allowPrivate) return null;
  // WHATWG has already rewritten every numeric IPv4 spelling to dotted decimal, so a host that
  // is not a bracketed v6 or a plain v4 here is a DNS name.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(host) === 0) return null;
  const problem = addressProblem(host);
  return problem === null ? null : resolvesTo(problem);
}

/**
 * Resolves a DNS name and judges every address it has; one bad address refuses the name, since
 * the connection may use any of them. A name that does not resolve (yet) is accepted: the
 * delivery client checks again when it connects.
 */
export async function resolveProblem(
  hostname: string,
  allowPrivate: boolean,
  lookup: LookupAll = dns.promises.lookup,
): Promise<string | null> {
  if (allowPrivate) return null;
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (net.isIP(host) !== 0) {
    const problem = addressProblem(host);
    return problem === null ? null : resolvesTo(problem);
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    // ENOTFOUND, EAI_AGAIN, ENODATA...: every such failure is re-checked at delivery time,
    // where nothing can connect without passing addressProblem.
    return null;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address);
    if (problem !== null) return resolvesTo(problem);
  }
  return null;
}
