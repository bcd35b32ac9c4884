// /api/issuers: an account's credential issuers (docs/api.md#managing-issuers), a Streamgate
// extension. The schemas here check each field's syntax (the CLI parses with them too); the issuer
// service checks what needs the account or the whole record.
import { z } from 'zod';
import type { Request } from 'express';
import { ApiError, FieldErrorList } from '../../errors.js';
import { ISSUER_ALGORITHMS, ISSUER_TYPES, isSignedFormat, keyRefProblem, REVOKED_MAX, REVOKED_TEXT_MAX, selectIssuer, type IssuerType, type SignedFormat } from '../../domain/issuers.js';
import { normaliseIp, originHost } from '../../domain/addresses.js';
import type { Enforcer } from '../../admission/pipeline.js';
import { wellFormed } from '../../domain/matchers.js';
import { MAX_KID_LENGTH, peekIssuerJwt } from '../../policy/issuer-jwt.js';
import { MAX_JWT_LENGTH } from '../../policy/self-signed.js';
import { DEFAULT_CLOCK_SKEW_SECONDS, type IssuerService } from '../../management/issuers.js';
import { encodeSigned, type SignedFacts } from '../../policy/signed.js';
import { route, type RouteSpec } from '../route.js';
import { text } from '../text.js';
import { checkBodySchema, checkOut, idParamsSchema } from './schemas.js';

/** The bounds of an issuer's fields (docs/api.md#managing-issuers). */
export const ISSUER_BOUNDS = {
  label: 100,
  iss: 1024,
  keyIds: 20,
  audience: 20,
  audienceText: 1024,
  secretMin: 16,
  secretMax: 1024,
  jwksUrl: 2048,
  clockSkewSeconds: 300,
  maxLifetimeSeconds: 31_536_000,
  cookieName: 64,
  claimPath: 200,
  revoked: REVOKED_MAX,
  revokedText: REVOKED_TEXT_MAX,
} as const;

/** An RFC 6265 cookie-name: an RFC 2616 token, no separators, controls or spaces. */
const COOKIE_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const unique = (xs: readonly string[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  xs.forEach((x, i) => {
    if (seen.has(x)) ctx.addIssue({ code: 'custom', path: [i], message: 'given twice' });
    seen.add(x);
  });
};

const label = text(1, ISSUER_BOUNDS.label);
const policyTokenId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).meta({ description: 'a publish or subscribe token of this account: its rules decide, the credential can only narrow them' });
const iss = text(1, ISSUER_BOUNDS.iss).nullable().meta({ description: 'the iss its JWTs carry; null: JWTs without iss (Mux, IVS, Cloudflare)' });
const keyIds = z
  .array(text(1, MAX_KID_LENGTH))
  .max(ISSUER_BOUNDS.keyIds)
  .superRefine(unique)
  .meta({ description: `the key ids (kid) it answers for, at most ${ISSUER_BOUNDS.keyIds}; empty: any, as the only issuer of its iss (default)` });
const audience = z.array(text(1, ISSUER_BOUNDS.audienceText)).max(ISSUER_BOUNDS.audience).meta({ description: 'aud must be one of these; empty: not checked (default)' });
const algorithm = z.enum(ISSUER_ALGORITHMS, {
  error: (i) =>
    typeof i.input === 'string' && i.input.trim().toLowerCase() === 'none'
      ? "none is never accepted: an issuer's JWTs must be signed"
      : `expected one of ${ISSUER_ALGORITHMS.join(', ')}`,
});
const algorithms = z
  .array(algorithm)
  .min(1)
  .max(ISSUER_ALGORITHMS.length)
  .superRefine(unique)
  .meta({ description: 'the signature algorithms accepted; HS* need secret, the others jwks or jwksUrl; never none' });
const jwks = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: 'public keys inline, {"keys": [JWK, …]}: at most issuers.jwksMaxKeys, no symmetric (oct) key, no private key members; null: none' });
const jwksUrl = text(1, ISSUER_BOUNDS.jwksUrl).nullable().meta({ description: 'a JWKS URL: https://, public unless issuers.allowPrivateJwksHosts names its host; null: none' });
const secret = z
  .string()
  .min(ISSUER_BOUNDS.secretMin, `at least ${ISSUER_BOUNDS.secretMin} characters (32 bytes or more recommended)`)
  .max(ISSUER_BOUNDS.secretMax)
  .refine(wellFormed, 'not valid Unicode text (lone surrogate)')
  .nullable()
  .meta({ description: 'the HMAC secret of HS* (its UTF-8 bytes); write-only: answers say hasSecret; null removes it' });
const clockSkewSeconds = z.number().int().min(0).max(ISSUER_BOUNDS.clockSkewSeconds);
const maxLifetimeSeconds = z
  .number()
  .int()
  .min(1)
  .max(ISSUER_BOUNDS.maxLifetimeSeconds)
  .nullable()
  .meta({ description: 'exp at most this long after iat (after now, without iat); null: the policy token bounds it (default)' });
const cookieName = text(1, ISSUER_BOUNDS.cookieName)
  .regex(COOKIE_TOKEN, "a cookie name (an RFC 6265 token): letters, digits and !#$%&'*+-.^_`|~")
  .nullable()
  .meta({ description: 'a cookie the credential may arrive in (auth_request); null: none (default)' });
const claimPath = text(1, ISSUER_BOUNDS.claimPath).nullable().optional();
const claims = z
  .strictObject({
    stream: claimPath.meta({ description: 'the stream the credential is for (default sub)' }),
    permissions: claimPath.meta({ description: 'MediaMTX-style permissions' }),
    action: claimPath.meta({ description: 'the action word' }),
    canPublish: claimPath,
    canSubscribe: claimPath,
    address: claimPath.meta({ description: 'the client address or CIDR list' }),
    viewerId: claimPath,
  })
  .meta({ description: 'the claim map: each entry a claim name or dotted path; null or absent: not read (stream: sub)' });
const revokedList = z.array(text(1, ISSUER_BOUNDS.revokedText)).max(ISSUER_BOUNDS.revoked);
const revoked = z
  .strictObject({ jti: revokedList.optional(), sub: revokedList.optional(), kid: revokedList.optional() })
  .meta({ description: `JWTs carrying one of these are refused; at most ${ISSUER_BOUNDS.revoked} of each` });

// ---- signed-URL issuers' settings, by format (docs/api.md#signed-url-issuers) -------------------

const keyId = text(1, 128).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');
const publicKeys = z
  .array(z.strictObject({ id: keyId, key: text(1, 4096).meta({ description: 'PEM, or base64 DER SubjectPublicKeyInfo' }) }))
  .max(10)
  .meta({ description: 'public keys by the id credentials name them with, at most 10' });
const viewerUrls = z.array(text(1, 255)).max(10).meta({ description: 'the addresses viewers request through (scheme and host: https://d111111abcdef8.cloudfront.net), at most 10' });
const paramName = text(1, 64).regex(COOKIE_TOKEN, "a parameter or cookie name: letters, digits and !#$%&'*+-.^_`|~");

/** Each format's settings: every field optional (absent: kept, or the default on a create). */
export const SETTINGS_SCHEMAS: Record<SignedFormat, z.ZodType<Record<string, unknown>>> = {
  'akamai-edgeauth': z.strictObject({
    algorithm: z.enum(['sha256', 'sha1', 'md5']).optional().meta({ description: 'default sha256' }),
    fieldDelimiter: text(1, 1).optional().meta({ description: 'default ~' }),
    aclDelimiter: text(1, 1).optional().meta({ description: 'default !' }),
    escapeEarly: z.boolean().optional().meta({ description: "Akamai's escape token input; default false" }),
    names: z.array(paramName).min(1).max(4).optional().meta({ description: 'query parameters and cookies the token arrives in; default hdnts, __token__' }),
    salt: text(1, 256).nullable().optional(),
  }),
  cloudfront: z.strictObject({
    publicKeys: publicKeys.optional(),
    urls: viewerUrls.optional(),
    signingKeyId: keyId.nullable().optional().meta({ description: 'the key pair /sign signs for; its private key is signingKey' }),
    hashAlgorithm: z.enum(['SHA1', 'SHA256']).optional().meta({ description: 'what /sign signs with; default SHA256 (Hash-Algorithm=SHA256)' }),
  }),
  cat: z.strictObject({
    publicKeys: publicKeys.optional().meta({ description: 'ES256 (P-256) public keys by kid' }),
    secretKeyId: keyId.nullable().optional().meta({ description: 'the kid of the HS256 key, which is the secret (hex)' }),
    urls: viewerUrls.optional(),
    queryParam: paramName.optional().meta({ description: 'the query parameter a token may arrive in; default cat' }),
    signingKeyId: keyId.nullable().optional().meta({ description: 'the kid /sign signs with: secretKeyId, or a public key whose private key is signingKey' }),
  }),
  'wowza-securetoken': z.strictObject({
    prefix: text(1, 32).regex(/^[A-Za-z0-9_]+$/, 'letters, digits and _').optional().meta({ description: 'default wowzatoken' }),
    algorithm: z.enum(['sha256', 'sha384', 'sha512']).optional().meta({ description: 'default sha256' }),
    includeClientIp: z.boolean().optional().meta({ description: 'the client address is hashed; default false' }),
    requireEndTime: z.boolean().optional().meta({ description: 'refuse a hash without an endtime; default true' }),
  }),
  'nimble-wmsauth': z.strictObject({
    maxValidMinutes: z.number().int().min(1).max(525_600).optional().meta({ description: 'the longest validminutes accepted; default 1440' }),
  }),
};

const settings = z
  .record(z.string(), z.unknown())
  .meta({ description: "a signed-URL issuer's format settings (docs/api.md#signed-url-issuers); the fields depend on type" });
const signingKey = text(1, 8192)
  .nullable()
  .meta({ description: 'cloudfront and cat (ES256): the private key (PEM) /sign signs with; write-only: answers say hasSigningKey; null removes it' });
const keyRef = (what: string) =>
  text(1, 105)
    .refine((v) => keyRefProblem(v) === null, 'a key reference is env:NAME (letters, digits, _) or file:name (a file name, no directory)')
    .nullable()
    .meta({ description: `a signed-URL issuer: where ${what} is read from instead of being stored, env:NAME or file:name (docs/api.md#keys-from-files-and-the-environment); replaces a stored one; null: none` });
const secretFrom = keyRef('the secret');
const signingKeyFrom = keyRef('the private key');

/**
 * The settings of a body checked against its type's schema: the parsed settings, or a 400 naming
 * each field (settings.<field>). A jwt issuer has none.
 */
export function parseSettings(type: IssuerType, raw: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  if (!isSignedFormat(type)) throw ApiError.field('settings', 'only a signed-URL issuer (akamai-edgeauth, cloudfront, cat, wowza-securetoken, nimble-wmsauth) has settings');
  const r = SETTINGS_SCHEMAS[type].safeParse(raw);
  if (r.success) return r.data;
  const errors = new FieldErrorList();
  for (const i of r.error.issues) errors.add(['settings', ...i.path.map(String)].join('.'), i.message);
  errors.throwIfAny();
  return undefined;
}

/** The create and update bodies. */
export const issuerSchemas = {
  create: z.strictObject({
    label,
    type: z.enum(ISSUER_TYPES).optional().meta({ description: 'jwt (default), or a signed-URL format: akamai-edgeauth, cloudfront, cat, wowza-securetoken, nimble-wmsauth' }),
    isActive: z.boolean().optional().meta({ description: 'default true; false refuses every JWT of the issuer' }),
    policyTokenId,
    issuer: iss.optional().meta({ description: 'jwt: required, the iss its JWTs carry (null: none); cat: the iss its tokens must carry' }),
    keyIds: keyIds.optional(),
    audience: audience.optional(),
    algorithms: algorithms.optional().meta({ description: 'jwt: required' }),
    jwks: jwks.optional(),
    jwksUrl: jwksUrl.optional(),
    secret: secret.optional(),
    settings: settings.optional(),
    signingKey: signingKey.optional(),
    secretFrom: secretFrom.optional(),
    signingKeyFrom: signingKeyFrom.optional(),
    clockSkewSeconds: clockSkewSeconds.optional().meta({ description: `tolerance on exp, nbf and iat (0 to ${ISSUER_BOUNDS.clockSkewSeconds}; default ${DEFAULT_CLOCK_SKEW_SECONDS})` }),
    maxLifetimeSeconds: maxLifetimeSeconds.optional(),
    cookieName: cookieName.optional(),
    claims: claims.optional(),
    revoked: revoked.optional(),
  }),
  update: z.strictObject({
    rev: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'the rev the update was made from: another is a 409 (also If-Match)' }),
    label: label.optional(),
    type: z.enum(ISSUER_TYPES).optional().meta({ description: 'cannot change; given, it must be the issuer\'s' }),
    isActive: z.boolean().optional(),
    policyTokenId: policyTokenId.optional(),
    issuer: iss.optional(),
    keyIds: keyIds.optional(),
    audience: audience.optional(),
    algorithms: algorithms.optional(),
    jwks: jwks.optional(),
    jwksUrl: jwksUrl.optional(),
    secret: secret.optional().meta({ description: 'absent: kept; null: removed' }),
    settings: settings.optional().meta({ description: 'fields given replace those of the settings; absent ones are kept' }),
    signingKey: signingKey.optional(),
    secretFrom: secretFrom.optional(),
    signingKeyFrom: signingKeyFrom.optional(),
    clockSkewSeconds: clockSkewSeconds.optional(),
    maxLifetimeSeconds: maxLifetimeSeconds.optional(),
    cookieName: cookieName.optional(),
    claims: claims.optional().meta({ description: 'entries given replace those of the map, null removes one (stream: back to sub), absent ones are kept' }),
    revoked: revoked.optional().meta({ description: 'each list given replaces that list; absent ones are kept' }),
  }),
};

const claimsOut = z.object({
  stream: z.string(),
  permissions: z.string().optional(),
  action: z.string().optional(),
  canPublish: z.string().optional(),
  canSubscribe: z.string().optional(),
  address: z.string().optional(),
  viewerId: z.string().optional(),
});
const issuerOut = z.object({
  id: z.number().int(),
  label: z.string(),
  type: z.enum(ISSUER_TYPES),
  isActive: z.boolean(),
  policyTokenId: z.number().int(),
  policyTokenKind: z
    .enum(['publish', 'subscribe'])
    .nullable()
    .meta({ description: 'null: the account has no such token (deleted); every JWT of the issuer is refused until policyTokenId names one' }),
  issuer: z.string().nullable(),
  keyIds: z.array(z.string()),
  audience: z.array(z.string()),
  algorithms: z.array(z.enum(ISSUER_ALGORITHMS)),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).nullable(),
  jwksUrl: z.string().nullable(),
  hasSecret: z.boolean().meta({ description: 'whether it has an HMAC secret; the secret itself is never answered' }),
  clockSkewSeconds: z.number().int(),
  maxLifetimeSeconds: z.number().int().nullable(),
  claims: claimsOut,
  cookieName: z.string().nullable(),
  revoked: z.object({ jti: z.array(z.string()), sub: z.array(z.string()), kid: z.array(z.string()) }),
  settings: z.record(z.string(), z.unknown()).nullable().meta({ description: "a signed-URL issuer's settings, every field; null for jwt" }),
  hasSigningKey: z.boolean().meta({ description: 'whether it has a private key to sign with; the key itself is never answered' }),
  secretFrom: z.string().nullable().meta({ description: 'the key reference the secret is read from; null: none (hasSecret tells of a stored one)' }),
  signingKeyFrom: z.string().nullable().meta({ description: 'the key reference the private key is read from; null: none' }),
  addedOn: z.string(),
  updatedOn: z.string(),
  rev: z.number().int().meta({ description: 'moves on every write; send it back (rev or If-Match) to update only what you read' }),
});

/** The rev an If-Match header names (`"3"`, `3`, `W/"3"`); undefined without one or for `*`. */
export function ifMatchRev(req: Pick<Request, 'get'>): number | undefined {
  const h = req.get('if-match');
  if (h === undefined || h.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?([1-9][0-9]{0,14})"?\s*$/.exec(h);
  if (!m) throw ApiError.field('If-Match', 'expected the rev of the issuer as read, e.g. "3"');
  return Number(m[1]);
}

/**
 * A probe of one of the issuer's credentials: the token check's fields, the action (default: the
 * policy token's kind), and the credential: a JWT issuer's JWT, or a signed-URL issuer's request
 * (its URL, Cookie header and CTA-Common-Access-Token header, as the viewer sent them).
 */
const issuerCheckBody = checkBodySchema.extend({
  jwt: z.string().min(1).max(MAX_JWT_LENGTH).optional().meta({ description: 'jwt issuers: a JWT this issuer claims (by its iss and kid); it is verified, never stored or logged' }),
  url: text(1, 16384).optional().meta({ description: 'signed-URL issuers: the URL as the viewer requested it (https://cdn.example.com/hls/cam1/index.m3u8?…, or its path and query)' }),
  cookie: text(1, 16384).optional().meta({ description: 'signed-URL issuers: the Cookie header the viewer sent (CloudFront-*, hdnts, …)' }),
  cat: text(1, 8192).optional().meta({ description: 'cat issuers: the CTA-Common-Access-Token header' }),
  method: z.string().regex(/^[A-Z]{1,16}$/, 'an HTTP method in capitals').optional().meta({ description: 'the viewer request\'s method (default GET)' }),
  action: z.enum(['publish', 'subscribe']).optional().meta({ description: "default: the policy token's kind" }),
});

/** The check's answer for a signed-URL issuer: the rules, and the credential field by field with the string that was signed. */
const issuerCheckOut = checkOut.extend({
  credential: z
    .object({
      issuerId: z.number().int(),
      format: z.string(),
      verified: z.boolean(),
      problem: z.string().optional(),
      fields: z.array(z.object({ name: z.string(), value: z.string(), check: z.string().optional(), ok: z.boolean().optional() })),
      signed: z.string().optional().meta({ description: 'what was signed (keys and secrets masked): compare it with what your signer signs' }),
    })
    .optional(),
});

/** What /sign is asked for: the path the grant covers, its lifetime, and optionally the viewer's address and an id. */
const issuerSignBody = z.strictObject({
  path: text(1, 2048)
    .regex(/^\/[^\s?#]*$/, 'a path starting with / (no query), e.g. /hls/ACCT/cam1/* or /hls/ACCT/cam1/index.m3u8')
    // a * elsewhere means something else in each format (EdgeAuth and CloudFront match it anywhere, a CAT and WMSAuth only as a prefix)
    .refine((p) => !p.slice(0, -1).includes('*'), 'a * only at the end (everything under the path): formats read a * elsewhere differently')
    .meta({ description: 'the path the grant covers as viewers request it; a trailing * covers everything under it' }),
  lifetimeSeconds: z.number().int().min(1).max(31_536_000).optional().meta({ description: 'default 3600' }),
  clientIp: z.string().max(64).refine((s) => normaliseIp(s) !== undefined, 'not an IP address').optional().meta({ description: 'binds the credential to this viewer address' }),
  id: text(1, 64).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces').optional().meta({ description: "a viewer or session id it carries (EdgeAuth id, a CAT's sub, a WMSAuth id), which revoked.jti can refuse" }),
});

const issuerSignOut = z.object({
  format: z.string(),
  expiresAt: z.string().meta({ description: 'when the credential expires (ISO 8601)' }),
  query: z.array(z.tuple([z.string(), z.string()])).optional().meta({ description: 'query parameters to append to the viewer URLs, in order' }),
  queryString: z.string().optional().meta({ description: 'the same as one string (name=value&…), to append after ? or &' }),
  cookies: z.record(z.string(), z.string()).optional().meta({ description: 'cookies to set for the viewer' }),
  headers: z.record(z.string(), z.string()).optional().meta({ description: 'request headers the viewer or the CDN sends' }),
  url: z.string().optional().meta({ description: 'the signed URL, for a grant of one URL' }),
});

/** The path and raw query of a URL as a viewer requested it: a full URL, or a path with its query. */
function pathAndQuery(url: string): { path: string; query: string } {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const noFragment = rest.split('#')[0]!;
  const q = noFragment.indexOf('?');
  const path = q < 0 ? noFragment : noFragment.slice(0, q);
  return { path: path === '' ? '/' : path, query: q < 0 ? '' : noFragment.slice(q + 1) };
}

export function issuerRoutes(issuers: IssuerService, enforcer: Enforcer): RouteSpec[] {
  const tag = 'Issuers';
  return [
    route({
      method: 'get',
      path: '/api/issuers',
      summary: "The account's credential issuers, by id (never a secret)",
      tag,
      auth: 'apiSecret',
      response: z.array(issuerOut),
      handler: ({ account }) => issuers.list(account.id),
    }),
    route({
      method: 'post',
      path: '/api/issuers',
      summary: 'Declare a credential issuer: whose JWTs are credentials here, how they are verified, and the token whose rules they narrow',
      tag,
      auth: 'apiSecret',
      body: issuerSchemas.create,
      response: issuerOut,
      status: 201,
      handler: ({ account, body, actor }) => issuers.create(account.id, Object.assign({}, body, { settings: parseSettings(body.type ?? 'jwt', body.settings) }), actor),
    }),
    route({
      method: 'get',
      path: '/api/issuers/:id',
      summary: 'Read a credential issuer (never its secret)',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: issuerOut,
      handler: ({ account, params }) => issuers.read(account.id, params.id),
    }),
    route({
      method: 'put',
      path: '/api/issuers/:id',
      summary: 'Change the fields given (absent: kept); with rev or If-Match, only if the issuer is still at that rev',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      body: issuerSchemas.update,
      response: issuerOut,
      handler: async ({ account, params, body, req, actor }) => {
        const { rev, ...input } = body;
        const header = ifMatchRev(req);
        if (rev !== undefined && header !== undefined && rev !== header) throw ApiError.field('rev', `${rev} differs from If-Match (${header}): give one rev`);
        if (input.settings !== undefined) input.settings = parseSettings((await issuers.read(account.id, params.id)).type, input.settings);
        return issuers.update(account.id, params.id, input, actor, rev ?? header);
      },
    }),
    route({
      method: 'post',
      path: '/api/issuers/:id/check',
      summary: "Dry run: every rule for one of the issuer's JWTs against a probe, and which claim decided, binding nothing",
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      body: issuerCheckBody,
      response: issuerCheckOut,
      handler: async ({ account, params, body }) => {
        const issuer = await issuers.read(account.id, params.id);
        const action = body.action ?? issuer.policyTokenKind ?? 'subscribe';
        const clientIp = normaliseIp(body.clientIp);
        const country = body.country?.toUpperCase();
        if (issuer.type !== 'jwt') {
          if (body.jwt !== undefined) throw ApiError.field('jwt', `a ${issuer.type} issuer verifies signed URLs, cookies or tokens: give url, cookie or cat`);
          if (body.url === undefined && body.cookie === undefined && body.cat === undefined) throw ApiError.field('url', 'give what the viewer presented: url (its signed URL, or the URL it requested), cookie, or cat');
          const facts: SignedFacts = { method: body.method ?? 'GET', ...pathAndQuery(body.url ?? '/'), cookie: body.cookie ?? '' };
          if (body.cat !== undefined) facts.cat = body.cat;
          if (clientIp !== undefined) facts.clientIp = clientIp;
          if (country !== undefined) facts.country = country;
          const explained = await issuers.explainSigned(account.id, params.id, facts);
          const probe = { action, streamName: body.streamName, accountId: account.id, signed: encodeSigned(account.id, facts), clientIp, origin: originHost(body.origin), country, protocol: (body.protocol ?? 'hls').toLowerCase() };
          const { decision, rules } = await enforcer.admit(probe, 'explain', 'check');
          const credential = {
            issuerId: issuer.id,
            format: issuer.type,
            verified: explained.ok,
            ...(explained.ok ? {} : { problem: explained.problem }),
            fields: explained.fields,
            ...(explained.signed !== undefined ? { signed: explained.signed } : {}),
          };
          return { allowed: decision.allowed, status: decision.status, reason: decision.reason, message: decision.message, rules, credential };
        }
        if (body.jwt === undefined) throw ApiError.field('jwt', 'required for a jwt issuer: the JWT to check');
        // Only this issuer's JWTs: a JWT another issuer (perhaps of another account) claims is never explained here.
        const sel = peekIssuerJwt(body.jwt);
        if ('problem' in sel) throw ApiError.field('jwt', sel.problem);
        if (selectIssuer([issuer], sel) === undefined) throw ApiError.field('jwt', "its iss and kid are not this issuer's");
        const probe = {
          action,
          streamName: body.streamName,
          accountId: account.id,
          token: body.jwt,
          clientIp,
          origin: originHost(body.origin),
          country,
          protocol: (body.protocol ?? 'webrtc').toLowerCase(),
        };
        const { decision, rules } = await enforcer.admit(probe, 'explain', 'check');
        return { allowed: decision.allowed, status: decision.status, reason: decision.reason, message: decision.message, rules };
      },
    }),
    route({
      method: 'post',
      path: '/api/issuers/:id/sign',
      summary: "Issue for the edge: a signed URL, cookie set or token in the issuer's own format, for a path and a lifetime",
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      body: issuerSignBody,
      response: issuerSignOut,
      handler: async ({ account, params, body }) => {
        const clientIp = normaliseIp(body.clientIp);
        const out = await issuers.sign(account.id, params.id, {
          path: body.path,
          lifetimeSeconds: body.lifetimeSeconds ?? 3600,
          ...(clientIp !== undefined ? { clientIp } : {}),
          ...(body.id !== undefined ? { id: body.id } : {}),
        });
        const { expiresAt, ...rest } = out;
        const queryString = rest.query?.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        return Object.assign(rest, { expiresAt: new Date(expiresAt * 1000).toISOString() }, queryString !== undefined ? { queryString } : {});
      },
    }),
    route({
      method: 'delete',
      path: '/api/issuers/:id',
      summary: 'Delete a credential issuer; answers it as it was',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: issuerOut,
      handler: ({ account, params, actor }) => issuers.remove(account.id, params.id, actor),
    }),
  ];
}
