// Token records and the rules for creating and updating them (pure: the clock and the random
// token value come in as arguments). Field syntax is checked by the request schemas; the rules
// here are the ones that need the whole token (exclusive fields, at least one stream, limits).
import type { SharingSettings } from './sharing.js';
import { createHash } from 'node:crypto';
import { FieldErrorList } from './errors.js';
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
  /** Stored and returned as the hosted API does; Streamgate does not act on them (docs/compatibility.md). */
  originCluster?: string;
  /** publish tokens only, stored and returned, not acted on */
  clip?: boolean;
  multisource?: boolean;
  lowLatencyRtmp?: boolean;
  displaySrtPassphrase?: boolean;
  drm?: boolean;
  priority?: number;
  geoCascade?: GeoCascade;
  restream?: RestreamTarget[];
  /** subscribe tokens only */
  tracking?: { trackingId: string };
  /** Streamgate extensions (docs/api.md#session-limits): live sessions at once (absent: unlimited), admissions ever (1: a one-time token). */
  maxConcurrentSessions?: number;
  maxUses?: number;
  /** Streamgate extension (docs/api.md#token-sharing): this token's override of its account's sharing policy. */
  sharing?: SharingSettings;
  /**
   * Cut sessions whose credential is refused (session_terminated) until `until` (docs/api.md#running-sessions):
   * from `clientIp` only when set. Internal: never answered; any update of the token clears them.
   */
  holds?: TokenHold[];
  rev: number;
}

export interface TokenHold {
  until: string;
  clientIp?: string;
}

export interface GeoCascade {
  isEnabled: boolean;
  clusters: string[];
}

export interface RestreamTarget {
  url?: string;
  key: string;
  label?: string;
}

/** Publish-token settings the hosted API has, with its defaults (multisource and lowLatencyRtmp are on). */
export const PUBLISH_SETTING_DEFAULTS = {
  subscribeRequiresAuth: false,
  record: false,
  enableThumbnails: false,
  clip: false,
  multisource: true,
  lowLatencyRtmp: true,
  displaySrtPassphrase: false,
  drm: false,
} as const;
type PublishFlag = keyof typeof PUBLISH_SETTING_DEFAULTS;
const PUBLISH_FLAGS = Object.keys(PUBLISH_SETTING_DEFAULTS) as PublishFlag[];

type GeoCascadeInput = { isEnabled?: boolean | null; clusters?: string[] | null } | null;
type RestreamInput = Array<{ url?: string | null; key: string; label?: string | null }> | null;

export type NewTokenRecord = Omit<TokenRecord, 'id' | 'rev'>;

export const tokenHash = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/**
 * A publish token whose streams can be viewed only with a subscribe token (docs/api.md#secured-streams).
 * Whether it is active or expired does not matter: revoking a publish token never opens its streams
 * (its segments and recordings outlive it); only `subscribeRequiresAuth: false` opens them.
 */
export const securesViewing = (t: Pick<TokenRecord, 'kind' | 'subscribeRequiresAuth'>): boolean =>
  t.kind === 'publish' && t.subscribeRequiresAuth === true;

/** Whether the token limits its sessions (maxConcurrentSessions, maxUses; docs/api.md#session-limits). */
export const hasLimits = (t: Pick<TokenRecord, 'maxConcurrentSessions' | 'maxUses'>): boolean => t.maxConcurrentSessions !== undefined || t.maxUses !== undefined;
export const kindName = (kind: TokenKind): string => (kind === 'publish' ? 'publish token' : 'subscribe token');

/** Validated create body (see http/management/schemas.ts). */
export interface CreateTokenInput {
  label: string;
  streams: Array<{ streamName: string; isRegex?: boolean }>;
  expires?: number | null;
  /** ISO 8601 date-time, instead of expires */
  expiresOn?: string | null;
  allowedOrigins?: string[] | null;
  allowedIpAddresses?: string[] | null;
  bindIpsOnUsage?: number | null;
  maxConcurrentSessions?: number | null;
  maxUses?: number | null;
  sharing?: SharingSettings | null;
  allowedCountries?: string[] | null;
  deniedCountries?: string[] | null;
  originCluster?: string | null;
  subscribeRequiresAuth?: boolean | null;
  record?: boolean | null;
  enableThumbnails?: boolean | null;
  clip?: boolean | null;
  multisource?: boolean | null;
  lowLatencyRtmp?: boolean | null;
  displaySrtPassphrase?: boolean | null;
  drm?: boolean | null;
  priority?: number | null;
  geoCascade?: GeoCascadeInput;
  restream?: RestreamInput;
  tracking?: { trackingId?: string | null } | null;
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
  /** 0 removes the limit. */
  maxConcurrentSessions?: number;
  maxUses?: number;
  /** Replaces the sharing override; {} removes it (null: not given). */
  sharing?: SharingSettings | null;
  updateAllowedCountries?: string[];
  updateDeniedCountries?: string[];
  updateOriginCluster?: string;
  subscribeRequiresAuth?: boolean;
  record?: boolean;
  enableThumbnails?: boolean;
  clip?: boolean;
  multisource?: boolean;
  lowLatencyRtmp?: boolean;
  displaySrtPassphrase?: boolean;
  drm?: boolean;
  priority?: number;
  updateGeoCascade?: GeoCascadeInput;
  updateRestream?: RestreamInput;
  expires?: number | null;
  expiresOn?: string;
  tracking?: { trackingId?: string | null } | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const unique = <T>(xs: T[], key: (x: T) => string = String): T[] => {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = key(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};
const streamKey = (s: StreamRule): string => `${s.isRegex ? 'r' : 'e'}:${s.streamName}`;
const normStreams = (xs: Array<{ streamName: string; isRegex?: boolean }>): StreamRule[] =>
  unique(xs.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex ?? false })), streamKey);
const normOrigins = (xs: string[]): string[] => unique(xs.map(canonicalOrigin));
const normCountries = (xs: string[]): string[] => unique(xs.map((c) => c.toUpperCase()));
const normGeoCascade = (g: NonNullable<GeoCascadeInput>): GeoCascade => ({ isEnabled: g.isEnabled ?? false, clusters: unique(g.clusters ?? []) });
const normRestream = (xs: NonNullable<RestreamInput>): RestreamTarget[] =>
  xs.map((r) => {
    const out: RestreamTarget = { key: r.key };
    if (r.url != null) out.url = r.url;
    if (r.label != null) out.label = r.label;
    return out;
  });

/**
 * An update's restream targets: an entry given without `url` (the hosted update schema allows it)
 * keeps the url of the token's target with the same key, so every record's target has the url the
 * hosted response schema requires (docs/compatibility.md#request-fields); without such a target it
 * is a 400.
 */
function updatedRestream(xs: NonNullable<RestreamInput>, current: RestreamTarget[], errs: FieldErrorList): RestreamTarget[] {
  const out = normRestream(xs);
  out.forEach((r, i) => {
    if (r.url !== undefined) return;
    const url = current.find((c) => c.key === r.key && c.url !== undefined)?.url;
    if (url !== undefined) r.url = url;
    else errs.add(`updateRestream.${i}.url`, 'required for a target the token does not have (no target with this key)');
  });
  return out;
}

/** An expiry from `expires` (seconds) or `expiresOn` (ISO date-time); the field to blame on a problem. */
function expiryOf(
  input: { expires?: number | null; expiresOn?: string | null },
  nowMs: number,
  errs: FieldErrorList,
): string | null | undefined {
  if (input.expires != null && input.expiresOn != null) {
    errs.add('expiresOn', 'give expires or expiresOn, not both');
    return undefined;
  }
  if (input.expires != null) return iso(nowMs + input.expires * 1000);
  if (input.expiresOn == null) return input.expires === null ? null : undefined;
  const ms = parseExpiresOn(input.expiresOn);
  if (Number.isNaN(ms)) errs.add('expiresOn', 'not a valid date-time');
  else if (ms <= nowMs) errs.add('expiresOn', 'must be in the future');
  else return iso(ms);
  return undefined;
}

/** ISO 8601 date-time as epoch ms; without a zone it is UTC. NaN when it is not one. */
export function parseExpiresOn(v: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(v)) return NaN;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(v) ? v : `${v}Z`;
  return Date.parse(zoned.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
}

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
  const errs = new FieldErrorList();
  const expiresOn = expiryOf(input, nowMs, errs);
  if (expiresOn) rec.expiresOn = expiresOn;
  if (input.bindIpsOnUsage != null && input.bindIpsOnUsage > 0) rec.bindIpsOnUsage = input.bindIpsOnUsage;
  if (input.maxConcurrentSessions != null && input.maxConcurrentSessions > 0) rec.maxConcurrentSessions = input.maxConcurrentSessions;
  if (input.maxUses != null && input.maxUses > 0) rec.maxUses = input.maxUses;
  if (input.sharing != null && Object.keys(input.sharing).length > 0) rec.sharing = input.sharing;
  if (input.originCluster) rec.originCluster = input.originCluster;
  if (kind === 'publish') {
    for (const f of PUBLISH_FLAGS) rec[f] = input[f] ?? PUBLISH_SETTING_DEFAULTS[f];
    if (input.priority != null) rec.priority = input.priority;
    if (input.geoCascade) rec.geoCascade = normGeoCascade(input.geoCascade);
    if (input.restream && input.restream.length > 0) rec.restream = normRestream(input.restream);
  } else if (input.tracking?.trackingId) {
    rec.tracking = { trackingId: input.tracking.trackingId };
  }
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
  const errs = new FieldErrorList();
  let clearBound = false;
  // Any update lifts the holds of cut sessions (docs/api.md#running-sessions).
  delete t.holds;
  for (const f of ['maxConcurrentSessions', 'maxUses'] as const) {
    const v = input[f];
    if (v === undefined) continue;
    if (v > 0) t[f] = v;
    else delete t[f];
  }
  // null: not given, as in every optional field; {} removes the override
  if (input.sharing != null) {
    if (Object.keys(input.sharing).length === 0) delete t.sharing;
    else t.sharing = input.sharing;
  }
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
  if (input.updateOriginCluster !== undefined) {
    if (input.updateOriginCluster) t.originCluster = input.updateOriginCluster;
    else delete t.originCluster;
  }
  if (t.kind === 'publish') {
    for (const f of PUBLISH_FLAGS) if (input[f] !== undefined) t[f] = input[f];
    if (input.priority !== undefined) t.priority = input.priority;
    if (input.updateGeoCascade) t.geoCascade = normGeoCascade(input.updateGeoCascade);
    if (input.updateRestream) {
      if (input.updateRestream.length > 0) t.restream = updatedRestream(input.updateRestream, current.restream ?? [], errs);
      else delete t.restream;
    }
  } else if (input.tracking !== undefined) {
    if (input.tracking?.trackingId) t.tracking = { trackingId: input.tracking.trackingId };
    else delete t.tracking;
  }
  const expiresOn = expiryOf(input, nowMs, errs);
  if (expiresOn === null) delete t.expiresOn;
  else if (expiresOn !== undefined) t.expiresOn = expiresOn;
  t.updatedOn = iso(nowMs);
  checkWhole(t, errs, {
    streams: input.removeTokenStreams ? 'removeTokenStreams' : 'addTokenStreams',
    bind: input.updateBindIpsOnUsage !== undefined ? 'updateBindIpsOnUsage' : 'updateAllowedIpAddresses',
    countries: input.updateDeniedCountries ? 'updateDeniedCountries' : 'updateAllowedCountries',
  });
  errs.throwIfAny();
  return { next: t, clearBound };
}

/** Account-wide viewer country defaults (GET /api/geo/account), for a record's effectiveSettings. */
export interface AccountGeoDefaults {
  allowedCountries: string[];
  deniedCountries: string[];
}

/** The account settings a record's effectiveSettings falls back to (docs/compatibility.md#records). */
export interface AccountDefaults extends AccountGeoDefaults {
  /** The account's default cluster (docs/api.md#clusters). */
  originCluster?: string;
  /** The account's geo cascade setting (`/api/account/geo_cascade`), when it set one. */
  geoCascade?: GeoCascade;
}

/**
 * The record as the API shows it: the fields of the hosted PublishTokenResponseV1 /
 * SubscribeTokenResponseV1 that are set (none of them is required by the hosted schema, so an unset
 * one is left out rather than sent as null), then Streamgate's own `boundIpAddresses` (when
 * binding) and `updatedOn`. docs/compatibility.md lists each field.
 */
export function tokenView(t: TokenRecord, boundIpAddresses: string[], accountGeo?: AccountDefaults): Record<string, unknown> {
  const ownCountries = t.allowedCountries.length > 0 || t.deniedCountries.length > 0;
  const effectiveCountries = ownCountries || !accountGeo ? t : accountGeo;
  // Unset fields the hosted schemas do not require are left out, never sent as null
  // (docs/compatibility.md#records): the Python client warns on a null in a non-optional field.
  const v: Record<string, unknown> = {
    id: t.id,
    label: t.label,
    name: t.label,
    token: t.token,
    addedOn: t.addedOn,
  };
  if (t.expiresOn !== undefined) v.expiresOn = t.expiresOn;
  v.isActive = t.isActive;
  v.streams = t.streams;
  v.allowedOrigins = t.allowedOrigins;
  v.allowedIpAddresses = t.allowedIpAddresses;
  if (t.bindIpsOnUsage) v.bindIpsOnUsage = t.bindIpsOnUsage;
  v.allowedCountries = t.allowedCountries;
  v.deniedCountries = t.deniedCountries;
  v.originCluster = t.originCluster ?? '';
  const effective: Record<string, unknown> = {
    originCluster: t.originCluster || accountGeo?.originCluster || 'auto',
    allowedCountries: effectiveCountries.allowedCountries,
    deniedCountries: effectiveCountries.deniedCountries,
  };
  if (t.kind === 'publish') {
    for (const f of PUBLISH_FLAGS) v[f] = t[f] ?? PUBLISH_SETTING_DEFAULTS[f];
    v.integrationId = 'None';
    if (t.geoCascade !== undefined) v.geoCascade = t.geoCascade;
    if (t.restream !== undefined) v.restream = t.restream;
    if (t.priority !== undefined) v.priority = t.priority;
    // A token that sets no geo cascade follows its account's (docs/compatibility.md#records).
    effective.geoCascade = t.geoCascade ?? accountGeo?.geoCascade ?? { isEnabled: false, clusters: [] };
  } else if (t.tracking !== undefined) {
    v.tracking = t.tracking;
  }
  v.effectiveSettings = effective;
  if (t.bindIpsOnUsage) v.boundIpAddresses = boundIpAddresses;
  if (t.maxConcurrentSessions !== undefined) v.maxConcurrentSessions = t.maxConcurrentSessions;
  if (t.maxUses !== undefined) v.maxUses = t.maxUses;
  if (t.sharing !== undefined) v.sharing = t.sharing;
  v.updatedOn = t.updatedOn;
  return v;
}

/** list_by_name's filterBy: the hosted ListFilterBy values, plus the Node client's `Token`. */
export type NameFilter = 'None' | 'TokenName' | 'StreamName' | 'TokenOrStreamName';

/**
 * Whether a token answers to list_by_name: `name` is found, case-insensitively, in the label
 * (TokenName) or in one of its exact stream names (StreamName). Stream patterns are not searched (the
 * hosted API leaves tokens with wildcard stream names out of these answers).
 */
export function matchesName(t: Pick<TokenRecord, 'label' | 'streams'>, name: string, filterBy: NameFilter): boolean {
  if (filterBy === 'None' || name === '') return true;
  const needle = name.toLowerCase();
  const inLabel = () => t.label.toLowerCase().includes(needle);
  const inStreams = () => t.streams.some((s) => !s.isRegex && s.streamName.toLowerCase().includes(needle));
  if (filterBy === 'TokenName') return inLabel();
  if (filterBy === 'StreamName') return inStreams();
  return inLabel() || inStreams();
}

/** The cluster a token is served from as list_by_cluster sees it: its originCluster, else its account's default cluster. */
export const effectiveCluster = (t: Pick<TokenRecord, 'originCluster'>, accountDefault = 'auto'): string => t.originCluster || accountDefault;
