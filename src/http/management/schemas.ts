// Request schemas of the management API. The same zod schemas validate requests and generate
// /api/openapi.json. Field syntax lives here; whole-token rules live in domain/tokens.ts.
import { z } from 'zod';
import { text } from '../text.js';
import {
  MAX_NAME,
  countryProblem,
  ipRuleProblem,
  originRuleProblem,
} from '../../domain/matchers.js';
import { normaliseIp } from '../../domain/addresses.js';
import { MAX_LIST, parseExpiresOn, type TokenKind, type UpdateTokenInput } from '../../domain/tokens.js';
import { copyWith } from '../../domain/objects.js';
import { SHARING_ACTIONS } from '../../domain/sharing.js';

const checked = (problem: (s: string) => string | null) =>
  z.string().superRefine((s, ctx) => {
    const p = problem(s);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const label = text(1, MAX_NAME);
const count = z.number().int().min(0).max(2147483647);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_LIST);
/** Lists accept null as "not given" (the hosted clients send null for unset lists). */
const optList = <T extends z.ZodType>(item: T) => list(item).nullable().optional();

/**
 * Where a stream pattern is checked: the service passes its worker pool (a promise when a compile is
 * due); `{ problem: streamPatternProblem }` checks synchronously.
 */
export interface PatternCheck {
  problem(pattern: string): string | null | Promise<string | null>;
}

/** Adds a pattern's problem as an issue; asynchronous only when the pattern had to be compiled. */
export function patternIssue(check: PatternCheck, pattern: string, ctx: z.RefinementCtx, path?: PropertyKey[]): void | Promise<void> {
  const add = (p: string | null) => {
    if (p) ctx.addIssue({ code: 'custom', message: p, ...(path ? { path } : {}) });
  };
  const p = check.problem(pattern);
  if (p instanceof Promise) return p.then(add);
  add(p);
}

const streamEntry = (check: PatternCheck) =>
  z
    .strictObject({
      streamName: text(1, MAX_NAME).meta({ description: 'exact name, or an RE2 pattern when isRegex' }),
      isRegex: z.boolean().optional().meta({ description: 'default false; a regex must match the whole name' }),
    })
    .superRefine((s, ctx) => {
      if (s.isRegex && typeof s.streamName === 'string') return patternIssue(check, s.streamName, ctx, ['streamName']);
    });

const origins = optList(checked(originRuleProblem)).meta({ description: 'host names or *.wildcards; empty = any' });
const ips = optList(checked(ipRuleProblem)).meta({ description: 'IPv4 addresses or CIDR blocks; empty = any' });
const countries = optList(checked(countryProblem)).meta({ description: 'ISO 3166-1 alpha-2 codes' });
const tracking = z.strictObject({ trackingId: text(1, MAX_NAME).nullable().optional().meta({ description: 'null: no tracking id' }) });
const flag = () => z.boolean().nullable().optional();
const int32 = z.number().int().min(-2147483648).max(2147483647);
const cluster = text(0, MAX_NAME);
const geoCascade = z
  .strictObject({ isEnabled: z.boolean().nullable().optional(), clusters: optList(text(1, MAX_NAME)) })
  .nullable()
  .optional()
  .meta({ description: 'stored and returned; Streamgate does not cascade (docs/compatibility.md)' });
const restreamEntry = (urlRequired: boolean) =>
  z.strictObject({
    url: urlRequired ? text(1, 2048) : text(1, 2048).nullable().optional(),
    key: text(5, 512),
    label: text(0, 2048).nullable().optional(),
  });
const restream = (urlRequired: boolean) =>
  z.array(restreamEntry(urlRequired)).max(10).nullable().optional().meta({ description: 'stored and returned; Streamgate does not restream' });

/** ISO 8601 date-time; without a zone it is read as UTC. */
export const isoDateTime = z
  .string()
  .max(64)
  .refine((v) => !Number.isNaN(parseExpiresOn(v)), 'expected an ISO 8601 date-time such as 2026-12-31T23:59:59Z');

/** The settings the hosted API stores on publish tokens that Streamgate keeps and returns. */
const publishSettings = {
  subscribeRequiresAuth: flag(),
  record: flag(),
  enableThumbnails: flag(),
  clip: flag(),
  multisource: flag(),
  lowLatencyRtmp: flag(),
  displaySrtPassphrase: flag(),
  drm: flag(),
  priority: int32.nullable().optional(),
};

/** A token-sharing policy, or a token's override of it (docs/api.md#token-sharing): every setting optional. */
export const sharingSettings = z
  .strictObject({
    enabled: z.boolean().optional(),
    windowSeconds: z.number().int().min(60).max(604_800).optional().meta({ description: 'the sliding window, seconds (60 to 7 days; default 3600)' }),
    maxAddresses: z.number().int().min(0).max(1000).optional().meta({ description: 'distinct client addresses (0: not counted; default 0)' }),
    maxNetworks: z.number().int().min(0).max(1000).optional().meta({ description: 'distinct /24 (IPv4) or /48 (IPv6) networks (0: not counted; default 6)' }),
    maxAsns: z.number().int().min(0).max(1000).optional().meta({ description: 'distinct autonomous systems (0: not counted; default 3)' }),
    maxCountries: z.number().int().min(0).max(250).optional().meta({ description: 'distinct countries (0: not counted; default 2)' }),
    travelKmh: z.number().int().min(0).max(100_000).optional().meta({ description: 'impossible travel above this speed, km/h (0: not looked at; default 1000)' }),
    travelMinKm: z.number().int().min(0).max(20_000).optional().meta({ description: '...between uses at least this far apart, km (default 500)' }),
    action: z.enum(SHARING_ACTIONS).optional().meta({ description: 'notify (a TokenSharing webhook), limit (the newest device wins), disable (the token); default notify' }),
  })
  .meta({ description: 'Streamgate: token-sharing detection (docs/api.md#token-sharing)' });

/** The token schemas whose stream patterns `check` validates. */
export function tokenSchemas(check: PatternCheck) {
  const entry = streamEntry(check);
  const commonCreate = {
    label,
    streams: z.array(entry).min(1).max(MAX_LIST),
    expires: z.number().int().min(1).max(2147483647).nullable().optional().meta({ description: 'seconds until expiry; absent = never' }),
    expiresOn: isoDateTime.nullable().optional().meta({ description: 'instead of expires: the expiry as an ISO 8601 date-time' }),
    allowedOrigins: origins,
    allowedIpAddresses: ips,
    bindIpsOnUsage: count.nullable().optional().meta({ description: 'bind to the first N client addresses' }),
    maxConcurrentSessions: count.nullable().optional().meta({ description: 'Streamgate: live sessions at once (absent or 0: unlimited)' }),
    maxUses: count.nullable().optional().meta({ description: 'Streamgate: sessions ever admitted (1: a one-time token; absent or 0: unlimited)' }),
    sharing: sharingSettings.nullable().optional().meta({ description: "Streamgate: this token's override of its account's sharing policy" }),
    allowedCountries: countries,
    deniedCountries: countries,
    originCluster: cluster.nullable().optional().meta({ description: 'stored and returned' }),
  };
  const commonUpdate = {
    label: label.optional(),
    isActive: z.boolean().optional(),
    refreshToken: z.boolean().optional().meta({ description: 'true: a new token value; the old one stops working' }),
    addTokenStreams: list(entry).optional(),
    removeTokenStreams: list(z.union([text(1, MAX_NAME), entry])).optional(),
    updateAllowedOrigins: origins,
    updateAllowedIpAddresses: ips,
    updateBindIpsOnUsage: count.nullable().optional(),
    maxConcurrentSessions: count.nullable().optional().meta({ description: 'Streamgate: live sessions at once; 0 removes the limit' }),
    maxUses: count.nullable().optional().meta({ description: 'Streamgate: sessions ever admitted; 0 removes the limit' }),
    sharing: sharingSettings.nullable().optional().meta({ description: "Streamgate: replaces this token's sharing override; {} removes it" }),
    updateAllowedCountries: countries,
    updateDeniedCountries: countries,
    updateOriginCluster: cluster.nullable().optional(),
    allowedOrigins: origins.meta({ description: 'alias of updateAllowedOrigins' }),
    allowedIpAddresses: ips.meta({ description: 'alias of updateAllowedIpAddresses' }),
    bindIpsOnUsage: count.nullable().optional().meta({ description: 'alias of updateBindIpsOnUsage' }),
    allowedCountries: countries.meta({ description: 'alias of updateAllowedCountries' }),
    deniedCountries: countries.meta({ description: 'alias of updateDeniedCountries' }),
    originCluster: cluster.nullable().optional().meta({ description: 'alias of updateOriginCluster' }),
    expires: z.number().int().min(1).max(2147483647).nullable().optional().meta({ description: 'seconds from now; null = never expires' }),
    expiresOn: isoDateTime.nullable().optional().meta({ description: 'instead of expires: the new expiry as an ISO 8601 date-time' }),
  };
  const create = {
    publish: z.strictObject(Object.assign({}, commonCreate, publishSettings, { geoCascade, restream: restream(true) })),
    subscribe: z.strictObject(copyWith(commonCreate, { tracking: tracking.nullable().optional() })),
  };
  const update = {
    publish: z.strictObject(
      Object.assign({}, commonUpdate, publishSettings, {
        updateGeoCascade: geoCascade,
        updateRestream: restream(false),
        geoCascade: geoCascade.meta({ description: 'alias of updateGeoCascade' }),
        restream: restream(false).meta({ description: 'alias of updateRestream; [] removes every entry' }),
      }),
    ),
    subscribe: z.strictObject(copyWith(commonUpdate, {
      tracking: tracking.nullable().optional().meta({ description: 'null (or a null trackingId) removes the tracking id' }),
    })),
  };
  return {
    create: (kind: TokenKind) => create[kind],
    update: (kind: TokenKind) => update[kind],
  };
}

const ALIASES = [
  ['allowedOrigins', 'updateAllowedOrigins'],
  ['allowedIpAddresses', 'updateAllowedIpAddresses'],
  ['bindIpsOnUsage', 'updateBindIpsOnUsage'],
  ['allowedCountries', 'updateAllowedCountries'],
  ['deniedCountries', 'updateDeniedCountries'],
  ['originCluster', 'updateOriginCluster'],
  ['geoCascade', 'updateGeoCascade'],
  ['restream', 'updateRestream'],
] as const;

/**
 * Folds the un-prefixed aliases into the update* names and drops nulls (null = not given, except
 * `expires` and `tracking`, where null clears). Returns the problems of fields given twice.
 */
export function normalizeUpdate(body: Record<string, unknown>): { input: UpdateTokenInput; errors: Record<string, string[]> } {
  const out: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || (v === null && k !== 'expires' && k !== 'tracking')) continue;
    out[k] = v;
  }
  for (const [alias, name] of ALIASES) {
    if (alias in out) {
      if (name in out) errors[alias] = [`give either ${alias} or ${name}, not both`];
      else out[name] = out[alias];
      delete out[alias];
    }
  }
  return { input: out as UpdateTokenInput, errors };
}


/** A query boolean as the hosted clients spell it: true/false in any case (Python sends True/False), 1/0. */
export const queryBool = z
  .union([z.boolean(), z.string().regex(/^(true|false|1|0)$/i, 'expected true or false (also True/False, 1/0)')])
  .transform((v) => (typeof v === 'boolean' ? v : v === '1' || v.toLowerCase() === 'true'));

export const listQuerySchema = z.object({
  sortBy: z
    .string()
    .regex(/^(name|addedon)$/i, 'expected Name or AddedOn')
    .transform((v) => (v.toLowerCase() === 'name' ? ('Name' as const) : ('AddedOn' as const)))
    .default('Name'),
  page: z.coerce.number().int().min(1).max(2147483647).default(1),
  itemsOnPage: z.coerce.number().int().min(1).max(100).default(25),
  isDescending: queryBool.default(false),
});

const FILTERS = { none: 'None', tokenname: 'TokenName', token: 'TokenName', streamname: 'StreamName', tokenorstreamname: 'TokenOrStreamName' } as const;

export const listByNameQuerySchema = listQuerySchema.extend({
  name: text(0, MAX_NAME).meta({ description: 'searched case-insensitively in labels and exact stream names' }),
  filterBy: z
    .string()
    .refine((v) => Object.hasOwn(FILTERS, v.toLowerCase()), 'expected None, TokenName (or Token), StreamName or TokenOrStreamName')
    .transform((v) => FILTERS[v.toLowerCase() as keyof typeof FILTERS])
    .default('TokenOrStreamName'),
});

export const listByClusterQuerySchema = listQuerySchema.extend({
  cluster: text(1, MAX_NAME).meta({ description: 'an origin cluster id; tokens without one are in `auto`' }),
});

export const idParamsSchema = z.object({
  id: z.string().regex(/^[1-9][0-9]{0,14}$/, 'expected a positive integer id').transform(Number),
});

export const disableSchema = z.strictObject({
  tokenIds: z.array(z.number().int().min(1)).min(1).max(MAX_LIST),
});

export const activeQuerySchema = z.object({
  streamId: z.string().min(3).max(300).regex(/^[^/]+\/.+$/, 'expected <accountId>/<streamName>'),
});

export const checkBodySchema = z.strictObject({
  streamName: text(1, MAX_NAME),
  clientIp: z.string().max(64).refine((s) => normaliseIp(s) !== undefined, 'not an IP address').optional(),
  origin: z.string().max(2048).optional().meta({ description: 'an Origin/Referer value or a bare host' }),
  country: z.string().regex(/^[A-Za-z]{2}$/, 'expected an ISO 3166-1 alpha-2 code').optional(),
  protocol: z.string().min(1).max(32).optional().meta({ description: 'default webrtc; rtmp for RTMP rules' }),
});

export const checkOut = z.object({
  allowed: z.boolean(),
  status: z.number().int(),
  reason: z.string(),
  message: z.string(),
  rules: z.array(
    z.object({
      rule: z.string(),
      reason: z.string(),
      // pending: settled at admission (session limits), never in a dry run
      result: z.enum(['pass', 'fail', 'skipped', 'pending']),
      detail: z.string().optional(),
      // the country rule's: whose lists applied (the token's own, a publish token's, the account default; docs/api.md#country)
      source: z.string().optional(),
    }),
  ),
});

// ---- accounts ----

/** An account's name: stored without the white space around it, unique but for case (docs/api.md#account-names). */
const accountName = text(1, MAX_NAME)
  .refine((s) => s.trim() !== '', 'must not be blank')
  .meta({ description: 'unique: no two accounts have names equal but for case and the white space around them (409 otherwise)' });
export const createAccountSchema = z.strictObject({ name: accountName });
export const updateAccountSchema = z.strictObject({
  secureViewer: z.boolean().optional(),
  name: accountName.optional(),
  ipRulesOnRtmp: z
    .boolean()
    .optional()
    .meta({ description: "false: RTMP, RTSP and SRT skip the tokens' allowedIpAddresses and bindIpsOnUsage, as on the hosted platform (default true)" }),
});
export const accountIdParamsSchema = z.object({ accountId: z.string().min(1).max(64) });

// ---- response shapes (documentation only) ----
// Unset fields are left out of records, never null (docs/compatibility.md#records).

const streamOut = z.object({ streamName: z.string(), isRegex: z.boolean() });
const countriesOut = z.array(z.string());
const geoCascadeOut = z.object({ isEnabled: z.boolean(), clusters: z.array(z.string()) });
const tokenOutCommon = {
  id: z.number().int(),
  label: z.string(),
  name: z.string().meta({ description: 'the label (the hosted API\'s deprecated name for it)' }),
  token: z.string(),
  addedOn: z.string(),
  expiresOn: z.string().optional().meta({ description: 'absent: never expires' }),
  isActive: z.boolean(),
  streams: z.array(streamOut),
  allowedOrigins: z.array(z.string()),
  allowedIpAddresses: z.array(z.string()),
  bindIpsOnUsage: z.number().int().optional().meta({ description: 'absent: no binding' }),
  allowedCountries: countriesOut,
  deniedCountries: countriesOut,
  originCluster: z.string().meta({ description: 'stored and returned; empty when not set' }),
  boundIpAddresses: z.array(z.string()).optional().meta({ description: 'Streamgate: the addresses bound so far (when bindIpsOnUsage > 0)' }),
  maxConcurrentSessions: z.number().int().optional().meta({ description: 'Streamgate: live sessions at once (when limited)' }),
  maxUses: z.number().int().optional().meta({ description: 'Streamgate: sessions ever admitted (when limited)' }),
  sharing: sharingSettings.optional().meta({ description: "Streamgate: the token's sharing override (absent when none)" }),
  updatedOn: z.string().meta({ description: 'Streamgate: the last change' }),
};
const effectiveOut = {
  originCluster: z.string(),
  allowedCountries: countriesOut.meta({ description: "the token's own lists, else the account's defaults" }),
  deniedCountries: countriesOut,
};
export const publishTokenOut = z.object(copyWith(tokenOutCommon, {
  subscribeRequiresAuth: z.boolean(),
  record: z.boolean(),
  enableThumbnails: z.boolean(),
  clip: z.boolean(),
  multisource: z.boolean(),
  lowLatencyRtmp: z.boolean(),
  displaySrtPassphrase: z.boolean(),
  drm: z.boolean(),
  integrationId: z.literal('None'),
  geoCascade: geoCascadeOut.optional().meta({ description: 'absent when not set' }),
  restream: z.array(z.object({ url: z.string().optional(), key: z.string(), label: z.string().optional() })).optional().meta({ description: 'absent when none' }),
  priority: z.number().int().optional().meta({ description: 'absent when not set' }),
  effectiveSettings: z.object(copyWith(effectiveOut, { geoCascade: geoCascadeOut })),
}));
export const subscribeTokenOut = z.object(copyWith(tokenOutCommon, {
  tracking: z.object({ trackingId: z.string() }).optional().meta({ description: 'absent when none' }),
  effectiveSettings: z.object(effectiveOut),
}));
export const tokenOut = (kind: TokenKind) => (kind === 'publish' ? publishTokenOut : subscribeTokenOut);
export const accountOut = z.object({
  id: z.string(),
  name: z.string(),
  createdOn: z.string(),
  secureViewer: z.boolean(),
  apiSecret: z.string().optional(),
});
