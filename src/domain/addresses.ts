// Addresses as requests carry them: an IP in its normal form, the host of an Origin/Referer value,
// and the proxies whose forwarding headers are believed. Pure; callers, the HTTP layer and the
// session drivers read requests with them.
import ipaddr from 'ipaddr.js';

/** Addresses whose answer is remembered (the Map is emptied when full). */
const KNOWN_MAX = 4096;

export class TrustedProxies {
  private readonly ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  /** A single-address header (hooks.realIpHeader, lower-cased) believed instead of X-Forwarded-For; '' = none. */
  readonly realIpHeader: string;

  constructor(list: string[], realIpHeader = '') {
    this.realIpHeader = realIpHeader.toLowerCase();
    this.ranges = list.map((s) => {
      if (s.includes('/')) return ipaddr.parseCIDR(s);
      const a = ipaddr.process(s);
      return [a, a.kind() === 'ipv4' ? 32 : 128];
    });
  }

  /** Answers already given, by address: every request asks about its peer, and peers are few. */
  private readonly known = new Map<string, boolean>();

  has(ip: string | undefined): boolean {
    if (!ip) return false;
    const seen = this.known.get(ip);
    if (seen !== undefined) return seen;
    const a = ipaddr.process(ip);
    const trusted = this.ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net as never, bits));
    if (this.known.size >= KNOWN_MAX) this.known.clear();
    this.known.set(ip, trusted);
    return trusted;
  }
}

/**
 * The host of an Origin/Referer value, lower-cased: "https://A.example.com:8443/x" → "a.example.com".
 * A bare host is accepted as is. "null", empty or unparsable values give undefined.
 */
export function originHost(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (v === '' || v === 'null') return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    try {
      const host = new URL(v).hostname.toLowerCase();
      return host === '' ? undefined : host.replace(/^\[|\]$/g, '');
    } catch {
      return undefined;
    }
  }
  return /^[a-z0-9.-]+$/i.test(v) ? v.toLowerCase() : undefined;
}

/** IPv4-mapped IPv6 becomes IPv4; invalid input gives undefined. */
export function normaliseIp(value: string | undefined): string | undefined {
  if (!value) return undefined;
  // A decision reads two or three addresses (the client's, the peer's), the same ones request
  // after request: a lookup costs a small fraction of a parse
  // (docs/decision-path.md#what-the-decision-path-does-to-be-fast, "Less work per decision").
  const known = ipMemo.get(value);
  if (known !== undefined) return known === '' ? undefined : known;
  let out: string | undefined;
  try {
    out = ipaddr.process(value.trim()).toString(); // one parse (isValid + process parsed twice)
  } catch {
    out = undefined;
  }
  if (value.length <= 64) {
    if (ipMemo.size >= IP_MEMO_MAX) ipMemo.clear();
    ipMemo.set(value, out ?? '');
  }
  return out;
}
/** Address text → its normal form ('' for not an address); emptied when full (a Map: no LRU bookkeeping per hit). */
const ipMemo = new Map<string, string>();
const IP_MEMO_MAX = 4096;
