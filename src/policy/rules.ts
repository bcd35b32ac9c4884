// A token's rules compiled once per token version: stream matchers (RE2), IPv4 CIDR ranges as
// integers, origin patterns. Pure; the enforcer caches the result by token id and rev.
import RE2 from 're2';
import ipaddr from 'ipaddr.js';
import { compileStreamPattern, originMatches } from '../domain/matchers.js';
import type { TokenRecord } from '../domain/tokens.js';

export interface CidrRange {
  net: number;
  mask: number;
}

export interface CompiledRules {
  streams: (name: string) => boolean;
  ips: CidrRange[];
  origins: string[];
}

export function parseCidrs(rules: string[]): CidrRange[] {
  return rules.map((r) => {
    const [addr, bits] = r.includes('/') ? ipaddr.IPv4.parseCIDR(r) : [ipaddr.IPv4.parse(r), 32];
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return { net: (ipv4ToInt(addr.toString()) & mask) >>> 0, mask };
  });
}

export function ipv4ToInt(ip: string): number {
  const p = ip.split('.');
  return ((Number(p[0]) << 24) | (Number(p[1]) << 16) | (Number(p[2]) << 8) | Number(p[3])) >>> 0;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** True when `clientIp` is an IPv4 address inside one of the ranges; an IPv6 client never is. */
export function ipInRanges(clientIp: string | undefined, ranges: CidrRange[]): boolean {
  if (!clientIp || !IPV4.test(clientIp)) return false;
  const n = ipv4ToInt(clientIp);
  return ranges.some((r) => ((n & r.mask) >>> 0) === r.net);
}

export function originAllowed(origin: string | undefined, rules: string[]): boolean {
  return origin !== undefined && rules.some((r) => originMatches(r, origin));
}

/**
 * One matcher for a list of stream rules: exact names in a Set, every pattern in one RE2
 * alternation (each pattern was validated alone, so none can break out of its group).
 */
export function compileStreams(streams: TokenRecord['streams']): (name: string) => boolean {
  const exact = new Set(streams.filter((s) => !s.isRegex).map((s) => s.streamName));
  const patterns = [...new Set(streams.filter((s) => s.isRegex).map((s) => s.streamName))];
  const matchers = combinePatterns(patterns);
  if (matchers.length === 1) {
    const [combined] = matchers;
    return (name) => exact.has(name) || combined.test(name);
  }
  return (name) => exact.has(name) || matchers.some((re) => re.test(name));
}

/**
 * One RE2 alternation of the patterns when RE2 takes it, else one matcher per pattern: patterns
 * valid alone can fail together (a group name used in two of them, or RE2's program size limit).
 */
function combinePatterns(patterns: string[]): RE2[] {
  if (patterns.length > 1) {
    try {
      return [new RE2(`^(?:${patterns.map((p) => `(?:${p})`).join('|')})$`, 'u')];
    } catch {
      /* fall back to one matcher per pattern */
    }
  }
  return patterns.map(compileStreamPattern);
}

/** A token's rules; `streams` may be a matcher already compiled from the same stream rules. */
export function compileRules(
  t: Pick<TokenRecord, 'streams' | 'allowedIpAddresses' | 'allowedOrigins'>,
  streams: CompiledRules['streams'] = compileStreams(t.streams),
): CompiledRules {
  return { streams, ips: parseCidrs(t.allowedIpAddresses), origins: t.allowedOrigins };
}
