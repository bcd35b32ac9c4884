// Credential issuers (docs/api.md#credential-issuers): an account's declaration that JWTs signed by
// someone else (its identity provider, its video platform) are credentials here, how to verify
// them, and which of its tokens (the policy token) supplies the rules. A credential verified by an
// issuer can only narrow its policy token, never widen it. Pure: records, the selection rule and
// the uniqueness rule; verification is in src/policy/issuer-jwt.ts, storage in src/store/issuers.ts.

/** Signature algorithms an issuer may allow. `none` is never one; HMAC needs a secret, the others public keys. */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'] as const;
export type IssuerAlgorithm = (typeof ISSUER_ALGORITHMS)[number];
export const isHmac = (alg: string): boolean => alg.startsWith('HS');

/**
 * Where the claims a decision needs are in a verified JWT. Each is a claim path: a top-level claim
 * name (`sub`, `video_id`, `aws:channel-arn`) or a dotted path into objects (`video.room`).
 */
export interface IssuerClaimMap {
  /** The stream the credential names (default `sub`). Ignored when `permissions` is set. */
  stream: string;
  /**
   * A MediaMTX-style permissions array (`[{ "action": "publish"|"read"|…, "path": "<name>"|"~<regexp>"|"" }]`,
   * or a JSON string holding one): the credential allows the stream and action one entry allows.
   */
  permissions?: string;
  /** A claim holding the action word (`publish`, `subscribe`; `read`/`play` read as subscribe). */
  action?: string;
  /** Claims whose value must be `true` for a publish / a subscribe (LiveKit `video.canPublish`, `video.canSubscribe`). */
  canPublish?: string;
  canSubscribe?: string;
  /** A claim holding the client address (or CIDR list) the request must come from. */
  address?: string;
  /** A claim naming the viewer (sessions, analytics), e.g. LiveKit `sub`, IVS `aws:viewer-id`. */
  viewerId?: string;
}

/** The most ids a revocation list holds, and the longest id. */
export const REVOKED_MAX = 1000;
export const REVOKED_TEXT_MAX = 1024;

/** Identifiers refused even when the signature holds: by `jti`, by `sub`, by key id. */
export interface RevokedIds {
  jti: string[];
  sub: string[];
  kid: string[];
}

/**
 * Signed-URL and signed-cookie formats an issuer may verify besides JWTs
 * (docs/api.md#signed-url-issuers), by the vendor's name for them.
 */
export const SIGNED_FORMATS = ['akamai-edgeauth', 'cloudfront', 'cat', 'wowza-securetoken', 'nimble-wmsauth'] as const;
export type SignedFormat = (typeof SIGNED_FORMATS)[number];
export const ISSUER_TYPES = ['jwt', ...SIGNED_FORMATS] as const;
export type IssuerType = (typeof ISSUER_TYPES)[number];
export const isSignedFormat = (t: string): t is SignedFormat => (SIGNED_FORMATS as readonly string[]).includes(t);

/** A public key by the id credentials name it with (a CloudFront key-pair id, a CAT kid): PEM or base64 SPKI. */
export interface NamedPublicKey {
  id: string;
  key: string;
}

/**
 * A signed-URL issuer's settings, by format (docs/api.md#signed-url-issuers). Its HMAC key, shared
 * secret or password is the record's `secret`; a private key it signs with, its `signingKey`.
 */
export type SignedSettings =
  | {
      format: 'akamai-edgeauth';
      algorithm: 'sha256' | 'sha1' | 'md5';
      fieldDelimiter: string;
      aclDelimiter: string;
      escapeEarly: boolean;
      /** Query parameters and cookies the token may arrive in, in order. */
      names: string[];
      salt: string | null;
    }
  | {
      format: 'cloudfront';
      publicKeys: NamedPublicKey[];
      /** The addresses viewers request through (the distribution's domain, alternate domains). */
      urls: string[];
      /** The public key's id /sign signs for (its private key is the signingKey), and the hash. */
      signingKeyId: string | null;
      hashAlgorithm: 'SHA1' | 'SHA256';
    }
  | {
      format: 'cat';
      /** ES256 public keys by kid; the HS256 key is the secret (hex), named by secretKeyId. */
      publicKeys: NamedPublicKey[];
      secretKeyId: string | null;
      urls: string[];
      queryParam: string;
      /** The kid /sign signs with: secretKeyId (HS256) or a public key's id whose private key is the signingKey (ES256). */
      signingKeyId: string | null;
    }
  | {
      format: 'wowza-securetoken';
      prefix: string;
      algorithm: 'sha256' | 'sha384' | 'sha512';
      includeClientIp: boolean;
      requireEndTime: boolean;
    }
  | {
      format: 'nimble-wmsauth';
      maxValidMinutes: number;
    };

/**
 * The key ids a signed-URL issuer answers for within its account: CloudFront's key-pair ids and
 * CAT's kids; empty for the formats whose credentials name no key (one such issuer per format and
 * account). What `keyIds` holds for these types.
 */
export function signedKeyIds(s: SignedSettings): string[] {
  if (s.format === 'cloudfront') return s.publicKeys.map((k) => k.id);
  if (s.format === 'cat') return [...s.publicKeys.map((k) => k.id), ...(s.secretKeyId !== null ? [s.secretKeyId] : [])];
  return [];
}

/** What the store keeps for an issuer. `rev` increases on every write. */
export interface IssuerRecord {
  id: number;
  accountId: string;
  label: string;
  type: IssuerType;
  isActive: boolean;
  /** The publish or subscribe token of the same account whose rules a credential narrows. */
  policyTokenId: number;
  /** The `iss` its JWTs carry; null: they carry none (Mux, Cloudflare, IVS). */
  issuer: string | null;
  /** The key ids (`kid`, header or payload) it answers for; empty: any (the only issuer of its `iss`). */
  keyIds: string[];
  /** `aud` must be one of these; empty: not checked. */
  audience: string[];
  algorithms: IssuerAlgorithm[];
  /** Keys: public JWKs inline, and/or a JWKS URL; an HMAC secret (never answered). */
  jwks: { keys: Array<Record<string, unknown>> } | null;
  jwksUrl: string | null;
  secret: string | null;
  clockSkewSeconds: number;
  /** A credential's `exp` at most this far after its `iat` (or after now, without `iat`); null: the policy token's own expiry bounds it. */
  maxLifetimeSeconds: number | null;
  claims: IssuerClaimMap;
  /** A cookie the credential may arrive in (auth_request), besides the Authorization header and query. */
  cookieName: string | null;
  revoked: RevokedIds;
  /** A signed-URL issuer's settings; null for `jwt`. */
  settings: SignedSettings | null;
  /** A private key (PEM) /sign signs with, CloudFront's or CAT's ES256; never answered. */
  signingKey: string | null;
  /** Where the secret is read from instead of `secret` (a key reference: `env:NAME`, `file:name`); null: `secret`. */
  secretFrom: string | null;
  /** Where the private key is read from instead of `signingKey` (a key reference); null: `signingKey`. */
  signingKeyFrom: string | null;
  addedOn: string;
  updatedOn: string;
  rev: number;
}

/** The selector of a presented JWT: its `iss` (null without one) and key id (header `kid`, else payload `kid`; null without one). */
export interface JwtSelector {
  iss: string | null;
  kid: string | null;
  /** selectorKey(this), when the reader computed it already (a remembered peek). */
  key?: string;
}

/** The cache key of a selector: unambiguous whatever the strings hold (`iss` null and the string "null" differ). */
export const selectorKey = (sel: JwtSelector): string => JSON.stringify([sel.iss, sel.kid]);

/**
 * The issuer a JWT with `sel` belongs to among `candidates` (the issuers whose `issuer` is
 * `sel.iss`): the one naming its key id, else the one naming no key ids; undefined when none
 * claims it. Uniqueness (overlapping) makes the answer single.
 */
export function selectIssuer<T extends Pick<IssuerRecord, 'issuer' | 'keyIds'> & { type?: IssuerType }>(candidates: readonly T[], sel: JwtSelector): T | undefined {
  let any: T | undefined;
  for (const c of candidates) {
    if (c.issuer !== sel.iss || (c.type !== undefined && c.type !== 'jwt')) continue;
    if (c.keyIds.length === 0) any = c;
    else if (sel.kid !== null && c.keyIds.includes(sel.kid)) return c;
  }
  return any;
}

/**
 * Whether two issuers could both claim one JWT: the same `issuer` and either names no key ids or
 * they share one. `(iss, kid)` is unique across the deployment: a write making two overlap is refused.
 */
export function overlapping(a: Pick<IssuerRecord, 'issuer' | 'keyIds'> & Partial<Pick<IssuerRecord, 'type' | 'accountId'>>, b: Pick<IssuerRecord, 'issuer' | 'keyIds'> & Partial<Pick<IssuerRecord, 'type' | 'accountId'>>): boolean {
  const ta = a.type ?? 'jwt';
  if (ta !== (b.type ?? 'jwt')) return false;
  // a signed-URL issuer is selected within its account (by format and key id), a JWT's across the deployment (by iss and kid)
  if (ta !== 'jwt') return a.accountId === b.accountId && (a.keyIds.length === 0 || b.keyIds.length === 0 || a.keyIds.some((k) => b.keyIds.includes(k)));
  if (a.issuer !== b.issuer) return false;
  if (a.keyIds.length === 0 || b.keyIds.length === 0) return true;
  return a.keyIds.some((k) => b.keyIds.includes(k));
}

/** A key reference (docs/api.md#keys-from-files-and-the-environment): an environment variable's or a key file's name. */
export interface KeyRef {
  source: 'env' | 'file';
  name: string;
}

const ENV_NAME = /^[A-Za-z0-9_]{1,100}$/;
/** A file name in the account's key directory: no separator, not hidden, so it names nothing outside it. */
const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

/** The reference `ref` names, or what is wrong with its syntax. */
export function parseKeyRef(ref: string): KeyRef | { problem: string } {
  const colon = ref.indexOf(':');
  const source = ref.slice(0, colon);
  const name = ref.slice(colon + 1);
  if (colon < 0 || (source !== 'env' && source !== 'file')) return { problem: 'a key reference is env:NAME or file:name' };
  if (source === 'env' && !ENV_NAME.test(name)) return { problem: 'env:NAME takes letters, digits and _ (at most 100)' };
  if (source === 'file' && !FILE_NAME.test(name)) return { problem: 'file:name takes a file name of letters, digits, _, - and . (not first), at most 100, no directory' };
  return { source, name };
}

/** What is wrong with a key reference's syntax, or null. */
export function keyRefProblem(ref: string): string | null {
  const r = parseKeyRef(ref);
  return 'problem' in r ? r.problem : null;
}
