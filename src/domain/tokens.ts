// Token records and the rules for creating and updating them (pure: the clock and the random
// token value come in as arguments). Field syntax is checked by the request schemas; the rules
// here are the ones that need the whole token (exclusive fields, at least one stream, limits).
import { createHash } from 'node:crypto';
import { FieldErrorList } from '../errors.js';
import { canonicalOrigin } from './matchers.js';

export type TokenKind = 'publish' | 'subscribe';
export const MAX_LIST = 100;

export interface StreamRule {
  streamName: string;
  isRegex: boolean;
}

/** What the store keeps for a token. `rev` increases on every write (optimistic concurrency). */
export interface TokenRecord {
  id: number;
  kind: TokenKind;
  accountId: string;
  label: string;
  token: string;
  addedOn: string;
  updatedOn: string;
  expiresOn?: string;
  isActive: boolean;
  streams: StreamRule[];
  allowedOrigins: string[];
  allowedIpAddresses: string[];
  bindIpsOnUsage?: number;
  allowedCountries: string[];
  deniedCountries: string[];
  /** publish tokens only */
  subscribeRequiresAuth?: boolean;
  record?: boolean;
  enableThumbnails?: boolean;
  /** subscribe tokens only */
  tracking?: { trackingId: string };
  rev: number;
}

export type NewTokenRecord = Omit<TokenRecord, 'id' | 'rev'>;

export const tokenHash = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** A publish token whose streams can be viewed only with a subscribe token (CONTRACT 5.3). */
export const securesViewing = (t: Pick<TokenRecord, 'kind' | 'isActive' | 'subscribeRequiresAuth'>): boolean =>
  t.kind === 'publish' && t.isActive && t.subscribeRequiresAuth === true;

export const kindName = (kind: TokenKind): string => (kind === 'publish' ? 'publish token' : 'subscribe token');

/** Validated create body (see http/management/schemas.ts). */
export interface CreateTokenInput {
  label: string;
  streams: Array<{ streamName: string; isRegex?: boolean }>;
  expires?: number | null;
  allowedOrigins?: string[] | null;
  allowedIpAddresses?: string[] | null;
  bindIpsOnUsage?: number | null;
  allowedCountries?: string[] | null;
  deniedCountries?: string[] | null;
  subscribeRequiresAuth?: boolean;
  record?: boolean;
  enableThumbnails?: boolean;
  tracking?: { trackingId: string } | null;
}

/** Validated update body, aliases already folded into the update* names. */
export interface UpdateTokenInput {
  label?: string;
  isActive?: boolean;
  refreshToken?: boolean;
  addTokenStreams?: Array<{ streamName: string; isRegex?: boolean }>;
  removeTokenStreams?: Array<string | { streamName: string; isRegex?: boolean }>;
  updateAllowedOrigins?: string[];
  updateAllowedIpAddresses?: string[];
  updateBindIpsOnUsage?: number;
  updateAllowedCountries?: string[];
  updateDeniedCountries?: string[];
  subscribeRequiresAuth?: boolean;
  record?: boolean;
  enableThumbnails?: boolean;
  expires?: number | null;
  tracking?: { trackingId: string } | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const unique = <T>(xs: T[], key: (x: T) => string = String): T[] => {
  const seen = new Set<string>();
  return xs.filter((x) => (seen.has(key(x)) ? false : (seen.add(key(x)), true)));
};
const streamKey = (s: StreamRule): string => `${s.isRegex ? 'r' : 'e'}:${s.streamName}`;
const normStreams = (xs: Array<{ streamName: string; isRegex?: boolean }>): StreamRule[] =>
  unique(xs.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex ?? false })), streamKey);
const normOrigins = (xs: string[]): string[] => unique(xs.map(canonicalOrigin));
const normCountries = (xs: string[]): string[] => unique(xs.map((c) => c.toUpperCase()));

/** The rules that look at the whole token; `names` says which request field to blame. */
function checkWhole(
  t: Pick<TokenRecord, 'streams' | 'allowedIpAddresses' | 'bindIpsOnUsage' | 'allowedCountries' | 'deniedCountries'>,
  errs: FieldErrorList,
  names: { streams: string; bind: string; countries: string },
): void {
  if (t.streams.length === 0) errs.add(names.streams, 'a token must keep at least one stream');
  if (t.streams.length > MAX_LIST) errs.add(names.streams, `a token holds at most ${MAX_LIST} streams`);
  if ((t.bindIpsOnUsage ?? 0) > 0 && t.allowedIpAddresses.length > 0) {
    errs.add(names.bind, 'bindIpsOnUsage cannot be combined with a non-empty allowedIpAddresses');
  }
  if (t.allowedCountries.length > 0 && t.deniedCountries.length > 0) {
    errs.add(names.countries, 'give allowedCountries or deniedCountries, not both');
  }
}

export function newTokenRecord(
  kind: TokenKind,
  accountId: string,
  input: CreateTokenInput,
  tokenValue: string,
  nowMs: number,
): NewTokenRecord {
  const rec: NewTokenRecord = {
    kind,
    accountId,
    label: input.label,
    token: tokenValue,
    addedOn: iso(nowMs),
    updatedOn: iso(nowMs),
    isActive: true,
    streams: normStreams(input.streams),
    allowedOrigins: normOrigins(input.allowedOrigins ?? []),
    allowedIpAddresses: unique(input.allowedIpAddresses ?? []),
    allowedCountries: normCountries(input.allowedCountries ?? []),
    deniedCountries: normCountries(input.deniedCountries ?? []),
  };
  if (input.expires != null) rec.expiresOn = iso(nowMs + input.expires * 1000);
  if (input.bindIpsOnUsage != null && input.bindIpsOnUsage > 0) rec.bindIpsOnUsage = input.bindIpsOnUsage;
  if (kind === 'publish') {
    rec.subscribeRequiresAuth = input.subscribeRequiresAuth ?? false;
    rec.record = input.record ?? false;
    rec.enableThumbnails = input.enableThumbnails ?? false;
  } else if (input.tracking) {
    rec.tracking = { trackingId: input.tracking.trackingId };
  }
  const errs = new FieldErrorList();
  checkWhole(rec, errs, { streams: 'streams', bind: 'bindIpsOnUsage', countries: 'deniedCountries' });
  errs.throwIfAny();
  return rec;
}

export interface UpdateOutcome {
  next: TokenRecord;
  /** The bound addresses must be forgotten (token refreshed, IP rules changed). */
  clearBound: boolean;
}

/**
 * Applies an update to the current record. Pure: may run more than once (optimistic retries).
 * Throws ApiError(400) naming the field when the result would break a rule.
 */
export function applyTokenUpdate(
  current: TokenRecord,
  input: UpdateTokenInput,
  nowMs: number,
  newTokenValue: () => string,
): UpdateOutcome {
  const t: TokenRecord = structuredClone(current);
  let clearBound = false;
  if (input.label !== undefined) t.label = input.label;
  if (input.isActive !== undefined) t.isActive = input.isActive;
  if (input.refreshToken) {
    t.token = newTokenValue();
    clearBound = true;
  }
  if (input.removeTokenStreams) {
    for (const r of input.removeTokenStreams) {
      t.streams = t.streams.filter((s) =>
        typeof r === 'string' ? s.streamName !== r : !(s.streamName === r.streamName && s.isRegex === (r.isRegex ?? false)),
      );
    }
  }
  if (input.addTokenStreams) t.streams = normStreams([...t.streams, ...input.addTokenStreams]);
  if (input.updateAllowedOrigins) t.allowedOrigins = normOrigins(input.updateAllowedOrigins);
  if (input.updateAllowedIpAddresses) {
    const next = unique(input.updateAllowedIpAddresses);
    if (next.join(',') !== t.allowedIpAddresses.join(',')) clearBound = true;
    t.allowedIpAddresses = next;
  }
  if (input.updateBindIpsOnUsage !== undefined) {
    // Giving bindIpsOnUsage at all (even the same number) starts binding afresh: the documented
    // way to forget the bound addresses without changing the limit.
    clearBound = true;
    if (input.updateBindIpsOnUsage > 0) t.bindIpsOnUsage = input.updateBindIpsOnUsage;
    else delete t.bindIpsOnUsage;
  }
  if (input.updateAllowedCountries) t.allowedCountries = normCountries(input.updateAllowedCountries);
  if (input.updateDeniedCountries) t.deniedCountries = normCountries(input.updateDeniedCountries);
  if (t.kind === 'publish') {
    if (input.subscribeRequiresAuth !== undefined) t.subscribeRequiresAuth = input.subscribeRequiresAuth;
    if (input.record !== undefined) t.record = input.record;
    if (input.enableThumbnails !== undefined) t.enableThumbnails = input.enableThumbnails;
  } else if (input.tracking !== undefined) {
    if (input.tracking === null) delete t.tracking;
    else t.tracking = { trackingId: input.tracking.trackingId };
  }
  if (input.expires !== undefined) {
    if (input.expires === null) delete t.expiresOn;
    else t.expiresOn = iso(nowMs + input.expires * 1000);
  }
  t.updatedOn = iso(nowMs);
  const errs = new FieldErrorList();
  checkWhole(t, errs, {
    streams: input.removeTokenStreams ? 'removeTokenStreams' : 'addTokenStreams',
    bind: input.updateBindIpsOnUsage !== undefined ? 'updateBindIpsOnUsage' : 'updateAllowedIpAddresses',
    countries: input.updateDeniedCountries ? 'updateDeniedCountries' : 'updateAllowedCountries',
  });
  errs.throwIfAny();
  return { next: t, clearBound };
}

/** The record as the API shows it (hosted field order; unset fields omitted). */
export function tokenView(t: TokenRecord, boundIpAddresses: string[]): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: t.id,
    label: t.label,
    token: t.token,
    addedOn: t.addedOn,
    expiresOn: t.expiresOn,
    isActive: t.isActive,
    streams: t.streams,
    allowedOrigins: t.allowedOrigins,
    allowedIpAddresses: t.allowedIpAddresses,
    bindIpsOnUsage: t.bindIpsOnUsage,
    boundIpAddresses: t.bindIpsOnUsage ? boundIpAddresses : undefined,
    allowedCountries: t.allowedCountries,
    deniedCountries: t.deniedCountries,
  };
  if (t.kind === 'publish') {
    v.subscribeRequiresAuth = t.subscribeRequiresAuth ?? false;
    v.record = t.record ?? false;
    v.enableThumbnails = t.enableThumbnails ?? false;
  } else {
    v.tracking = t.tracking;
  }
  v.updatedOn = t.updatedOn;
  for (const k of Object.keys(v)) if (v[k] === undefined) delete v[k];
  return v;
}
