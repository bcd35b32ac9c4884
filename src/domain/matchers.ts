// Pure parsers and matchers for token rules: stream names (RE2, full match), IPv4/CIDR lists,
// origins with *.wildcards, ISO country codes. Each parse function returns a problem text or null.
import RE2 from 're2';
import ipaddr from 'ipaddr.js';
import { MAX_PATTERN_COST, patternCost } from './pattern-cost.js';

export const MAX_NAME = 128;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** JSON can carry strings that are not valid Unicode (lone surrogates); names must be valid text. */
export const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/**
 * Compiles a stream pattern as a case-sensitive full match. Throws on syntax RE2 refuses. The
 * pattern is compiled alone first: `a)|(.*` is invalid alone and must not escape the wrapper.
 */
export function compileStreamPattern(pattern: string): RE2 {
  void new RE2(pattern, 'u');
  return new RE2(`^(?:${pattern})$`, 'u');
}

export { MAX_PATTERN_COST, patternCost } from './pattern-cost.js';

/**
 * The cost half of a stream pattern's check: counted from the syntax, cheap and deterministic, so it
 * runs first and a pattern over the cap is never compiled.
 */
export function patternCostProblem(pattern: string): string | null {
  const cost = patternCost(pattern);
  if (cost > MAX_PATTERN_COST) {
    return `too large for the RE2 engine: Unicode classes (\\pL), case-insensitive classes and counted repetitions ({400}) compile into a program too big to build on every change (cost ${cost} instructions, at most ${MAX_PATTERN_COST}); use + or *, fewer repetitions or an ASCII class such as [a-z]`;
  }
  return null;
}

/** The compile half: whether RE2 builds the pattern, alone and wrapped (its cost at the cap: docs/api.md#validating-a-writes-patterns). */
export function patternCompileProblem(pattern: string): string | null {
  try {
    compileStreamPattern(pattern);
    return null;
  } catch (e) {
    const why = (e as Error).message;
    return `not a valid regular expression for the RE2 engine (no backreferences or look-around): ${why}`;
  }
}

/** Both halves, synchronously (the HTTP API runs the compile half on worker threads instead). */
export function streamPatternProblem(pattern: string): string | null {
  return patternCostProblem(pattern) ?? patternCompileProblem(pattern);
}

/** IPv4 address or IPv4 CIDR block with no host bits beyond the prefix. */
export function ipRuleProblem(rule: string): string | null {
  const m = /^(\d{1,3}(?:\.\d{1,3}){3})(?:\/(\d{1,2}))?$/.exec(rule);
  if (!m) {
    if (rule.includes(':')) return `'${rule}': IPv6 is not supported; use IPv4 addresses or CIDR blocks`;
    if (rule.includes('-')) return `'${rule}': address ranges are not supported; use CIDR blocks`;
    if (rule.includes('*')) return `'${rule}': wildcards are not supported; use CIDR blocks`;
    return `'${rule}': not an IPv4 address or CIDR block`;
  }
  if (!ipaddr.IPv4.isValidFourPartDecimal(m[1])) return `'${rule}': not a valid IPv4 address`;
  if (m[2] === undefined) return null;
  const prefix = Number(m[2]);
  if (prefix > 32) return `'${rule}': prefix length must be 0..32`;
  const net = ipaddr.IPv4.networkAddressFromCIDR(rule);
  if (net.toString() !== m[1]) return `'${rule}': host bits set beyond the /${prefix} prefix (did you mean ${net.toString()}/${prefix}?)`;
  return null;
}

/** A host name or *.host name, no scheme, port or path. Returns the canonical (lower-case) form. */
export function originRuleProblem(rule: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rule)) return `'${rule}': give the host name only, without a scheme`;
  if (rule.includes('/')) return `'${rule}': give the host name only, without a path`;
  if (rule.includes(':')) return `'${rule}': give the host name only, without a port`;
  const host = rule.startsWith('*.') ? rule.slice(2) : rule;
  if (host.includes('*')) return `'${rule}': a wildcard is allowed only as a leading '*.' (e.g. *.example.com)`;
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
  if (host.length === 0 || host.length > 253 || !host.split('.').every((l) => label.test(l))) {
    return `'${rule}': not a valid host name`;
  }
  return null;
}

export const canonicalOrigin = (rule: string): string => rule.toLowerCase();

/** True when `host` (already lower-cased) is allowed by one canonical origin rule. */
export function originMatches(rule: string, host: string): boolean {
  if (rule.startsWith('*.')) return host.endsWith(rule.slice(1)) && host.length > rule.length - 1;
  return host === rule;
}

const COUNTRY_CODES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
    'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
    'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
    'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG ' +
    'UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK'
  ).split(' '),
);

export function countryProblem(code: string): string | null {
  return COUNTRY_CODES.has(code.toUpperCase())
    ? null
    : `'${code}': not an ISO 3166-1 alpha-2 country code (two letters, e.g. US)`;
}
