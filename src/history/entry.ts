// One kept decision of the decision history (docs/api.md#decision-history): what was asked, what was
// answered and why, rule by rule. Built on the decision path only for the decisions kept; never a
// token value or secret.
import { randomUUID } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Action, Reason } from '../contracts/decision.js';

/** A rule's outcome as the check endpoint gives it (src/policy/evaluate.ts RuleOutcome). */
export interface KeptRule {
  rule: string;
  reason: Reason;
  result: 'pass' | 'fail' | 'skipped' | 'pending';
  detail?: string;
  source?: string;
}

export interface DecisionEntry {
  decisionId: string;
  /** Milliseconds since the epoch: when the decision was made. */
  at: number;
  accountId: string;
  /** The caller that asked (nginx-rtmp, auth-request, director, ...). */
  caller: string;
  action: Action;
  streamName: string;
  protocol: string;
  allowed: boolean;
  status: number;
  reason: Reason;
  /** The rule that decided a refusal (or a step after the policy that shaped the answer). */
  rule?: string;
  detail?: string;
  tokenId?: number;
  issuerId?: number;
  /** What was presented: none, token, self-signed JWT, issuer JWT, signed URL, invalid. */
  credential: string;
  /** As kept: truncated to history.ipv4Prefix / ipv6Prefix, and removed after history.addressSeconds. */
  clientIp?: string;
  country?: string;
  origin?: string;
  sessionId?: string;
  /** Every rule's outcome, as the check endpoint explains them (docs/api.md#decision-history). */
  rules: KeptRule[];
}

/** What /api/decisions filters by; every field optional, all given must match. */
export interface DecisionQuery {
  decisionId?: string;
  tokenId?: number;
  streamName?: string;
  clientIp?: string;
  reason?: Reason;
  allowed?: boolean;
  /** Milliseconds since the epoch, inclusive. */
  from?: number;
  /** Milliseconds since the epoch, exclusive. */
  to?: number;
  /** Where the previous page ended (its `next`), newest first. */
  cursor?: string;
  limit: number;
}

export interface DecisionPage {
  items: DecisionEntry[];
  /** The cursor of the next (older) page; absent on the last. */
  next?: string;
}

/**
 * A decision id: a UUID of version 7, whose first 48 bits are the decision's millisecond
 * (RFC 9562), so a history finds an entry by its time; the rest is random.
 */
export function decisionIdAt(ms: number): string {
  const u = randomUUID();
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7${u.slice(15)}`;
}

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The millisecond a decision id carries, or undefined for an id that is not a version 7 UUID. */
export function decisionIdTime(id: string): number | undefined {
  if (!V7.test(id)) return undefined;
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** An address cut to its first `v4` / `v6` bits (history.ipv4Prefix, ipv6Prefix): 203.0.113.77 at 24 is 203.0.113.0. */
export function truncateAddress(ip: string, v4: number, v6: number): string {
  if ((v4 >= 32 && !ip.includes(':')) || (v6 >= 128 && ip.includes(':'))) return ip;
  try {
    const a = ipaddr.parse(ip);
    const bits = a.kind() === 'ipv4' ? v4 : v6;
    const bytes = a.toByteArray();
    for (let i = 0; i < bytes.length; i++) {
      const keep = Math.max(0, Math.min(8, bits - i * 8));
      bytes[i] &= (0xff << (8 - keep)) & 0xff;
    }
    return ipaddr.fromByteArray(bytes).toString();
  } catch {
    return ip;
  }
}

/** What an address in a rule's detail shows as in the history: the entry's clientIp holds the client's, truncated and expiring. */
export const ADDRESS_PLACEHOLDER = '[address]';

/** Candidates for an address: dotted quads, and runs of hex digits and colons (with an IPv4 tail) holding two colons or more. */
const ADDRESS_LIKE = /(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f:]*:[0-9A-Fa-f.]*)(?![\w:])/g;

/**
 * A detail with every IP address in it replaced by ADDRESS_PLACEHOLDER (a CIDR keeps its prefix
 * length): a client's address (its own, a bound one, one a session was cut from) is kept only in
 * the entry's clientIp, which history.ipv4Prefix/ipv6Prefix truncate and history.addressSeconds
 * expire. Times such as 20:00:00 are not addresses and stay.
 */
export function maskAddresses(text: string): string {
  if (!/\d\.\d|:/.test(text)) return text;
  return text.replace(ADDRESS_LIKE, (m) => (ipaddr.IPv4.isValidFourPartDecimal(m) || (m.includes(':') && ipaddr.IPv6.isValid(m)) ? ADDRESS_PLACEHOLDER : m));
}

/** A history query's cursor that is not one this store made: answered 400 naming it. */
export class HistoryCursorInvalid extends Error {
  constructor() {
    super("cursor: not a cursor this history answered (pass the previous page's next as it is)");
    this.name = 'HistoryCursorInvalid';
  }
}
