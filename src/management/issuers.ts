// Credential issuer management (docs/api.md#managing-issuers): list, read, create, update and
// delete an account's issuers, behind /api/issuers and `streamgate issuers`. The request schemas
// check each field's syntax; this checks what needs the account or the whole record: the policy
// token, the keys the algorithms need, inline JWKs, the JWKS URL guard. An answer never holds the secret.
import { randomBytes } from 'node:crypto';
import { ApiError, FieldErrorList, IssuerChanged, IssuerConflict } from '../errors.js';
import { isHmac, isSignedFormat, REVOKED_MAX, REVOKED_TEXT_MAX, signedKeyIds, type IssuerAlgorithm, type IssuerClaimMap, type IssuerRecord, type IssuerType, type RevokedIds, type SignedFormat, type SignedSettings } from '../domain/issuers.js';
import type { TokenKind } from '../domain/tokens.js';
import type { Config } from '../config/schema.js';
import type { IssuerPatch, NewIssuer, Store } from '../store/store.js';
import { compareAndSet } from '../store/failures.js';
import { publicJwks } from '../policy/issuer-jwt.js';
import { jwksUrlProblem } from '../enforce/issuer-keys.js';
import { signedKeysProblem } from '../policy/signed-keys.js';
import { signFor, signedRequest, SignProblem, verifySigned, type SignedFacts, type SignInput, type SignOutput } from '../policy/signed.js';
import type { SignedResult } from '../policy/signed-common.js';
import type { KeySources } from '../enforce/key-sources.js';
import type { Actor } from '../audit/actor.js';
import { ISSUER, type AuditLog } from '../audit/log.js';

/** The entries of a claim map, in the order the docs list them. */
export const CLAIM_ENTRIES = ['stream', 'permissions', 'action', 'canPublish', 'canSubscribe', 'address', 'viewerId'] as const satisfies ReadonlyArray<keyof IssuerClaimMap>;
type ClaimEntry = (typeof CLAIM_ENTRIES)[number];
// Every entry of the record's claim map is one of CLAIM_ENTRIES (a new entry fails to compile here).
const everyClaimEntry: [Exclude<keyof IssuerClaimMap, ClaimEntry>] extends [never] ? true : never = true;
void everyClaimEntry;

export const REVOKED_LISTS = ['jti', 'sub', 'kid'] as const satisfies ReadonlyArray<keyof RevokedIds>;

/** The tolerance on exp, nbf and iat an issuer gets when its create names none. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;
/** The claim naming the stream when the claim map names none. */
const DEFAULT_STREAM_CLAIM = 'sub';

/**
 * A create or update body as the request schemas give it. In an update an absent field is kept;
 * so is an absent claim map entry or revoked list (a claim entry set to null is removed; `stream`
 * goes back to `sub`). Null in `jwks`, `jwksUrl`, `secret`, `maxLifetimeSeconds` and `cookieName` is none.
 */
export interface IssuerInput {
  label?: string;
  type?: IssuerType;
  isActive?: boolean;
  policyTokenId?: number;
  issuer?: string | null;
  keyIds?: string[];
  audience?: string[];
  algorithms?: IssuerAlgorithm[];
  jwks?: Record<string, unknown> | null;
  jwksUrl?: string | null;
  secret?: string | null;
  clockSkewSeconds?: number;
  maxLifetimeSeconds?: number | null;
  cookieName?: string | null;
  claims?: { [E in ClaimEntry]?: string | null };
  revoked?: Partial<RevokedIds>;
  /** A signed-URL issuer's settings: the fields given (the request schema checked them for `type`); absent ones keep their value or default. */
  settings?: Record<string, unknown>;
  signingKey?: string | null;
  /** A key reference the secret is read from instead (docs/api.md#keys-from-files-and-the-environment); replaces a stored secret. */
  secretFrom?: string | null;
  /** A key reference the private key is read from instead; replaces a stored signingKey. */
  signingKeyFrom?: string | null;
}

/** What a create must name; the rest has defaults (docs/api.md#managing-issuers). A JWT issuer must also name `issuer` and `algorithms`. */
export type IssuerCreateInput = IssuerInput & Required<Pick<IssuerInput, 'label' | 'policyTokenId'>>;

/** An issuer as the API answers it: the record without its account, `hasSecret` and `hasSigningKey` instead of the keys. */
export type IssuerView = Omit<IssuerRecord, 'accountId' | 'secret' | 'signingKey'> & {
  /** The policy token's kind; null when the account has no such token (deleted): every credential is refused. */
  policyTokenKind: TokenKind | null;
  hasSecret: boolean;
  hasSigningKey: boolean;
};

/** A signed-URL issuer's settings when its create names none of them (docs/api.md#signed-url-issuers). */
export function defaultSettings(format: SignedFormat): SignedSettings {
  switch (format) {
    case 'akamai-edgeauth':
      return { format, algorithm: 'sha256', fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts', '__token__'], salt: null };
    case 'cloudfront':
      return { format, publicKeys: [], urls: [], signingKeyId: null, hashAlgorithm: 'SHA256' };
    case 'cat':
      return { format, publicKeys: [], secretKeyId: null, urls: [], queryParam: 'cat', signingKeyId: null };
    case 'wowza-securetoken':
      return { format, prefix: 'wowzatoken', algorithm: 'sha256', includeClientIp: false, requireEndTime: true };
    case 'nimble-wmsauth':
      return { format, maxValidMinutes: 1440 };
  }
}

/** The settings `given` makes of `current` (or the defaults): each field given replaces that field. */
function settingsOf(format: SignedFormat, current: SignedSettings | null, given: Record<string, unknown> | undefined): SignedSettings {
  const base = current ?? defaultSettings(format);
  return Object.assign({}, base, given ?? {}, { format }) as SignedSettings;
}

/** The fields only a JWT issuer has, with the value a signed-URL issuer keeps in each. */
const JWT_ONLY = ['algorithms', 'jwks', 'jwksUrl', 'keyIds', 'maxLifetimeSeconds', 'claims', 'cookieName'] as const;

/** The view, field by field: a field the record gains later is not answered until it is named here. */
export function issuerView(i: IssuerRecord, policyTokenKind: TokenKind | null): IssuerView {
  return {
    id: i.id,
    label: i.label,
    type: i.type,
    isActive: i.isActive,
    policyTokenId: i.policyTokenId,
    policyTokenKind,
    issuer: i.issuer,
    keyIds: i.keyIds,
    audience: i.audience,
    algorithms: i.algorithms,
    jwks: i.jwks,
    jwksUrl: i.jwksUrl,
    hasSecret: i.secret !== null && i.secret !== '' && i.secretFrom === null,
    hasSigningKey: i.signingKey !== null,
    clockSkewSeconds: i.clockSkewSeconds,
    maxLifetimeSeconds: i.maxLifetimeSeconds,
    claims: i.claims,
    cookieName: i.cookieName,
    revoked: i.revoked,
    settings: i.settings,
    secretFrom: i.secretFrom,
    signingKeyFrom: i.signingKeyFrom,
    addedOn: i.addedOn,
    updatedOn: i.updatedOn,
    rev: i.rev,
  };
}

/** What the checks take from the configuration. */
export interface IssuerLimits {
  /** Keys an inline JWK set may hold (config issuers.jwksMaxKeys). */
  jwksMaxKeys: number;
  /** Private hosts a JWKS URL may name (config issuers.allowPrivateJwksHosts). */
  allowPrivateJwksHosts: readonly string[];
  /** The viewer sessions' cookie (config sessions.http.cookieName), which no issuer's cookie may be. */
  viewerCookieName: string;
  /** Issuers one account may hold (config issuers.maxPerAccount). */
  maxPerAccount: number;
}

/** The limits from the configuration. */
export const issuerLimits = (c: Pick<Config, 'issuers' | 'sessions'>): IssuerLimits => ({
  jwksMaxKeys: c.issuers.jwksMaxKeys,
  allowPrivateJwksHosts: c.issuers.allowPrivateJwksHosts,
  viewerCookieName: c.sessions.http.cookieName,
  maxPerAccount: c.issuers.maxPerAccount,
});

/**
 * What an issuer reading its secret from a key reference stores as `secret`: 32 random bytes (hex)
 * that no one holds. This build never uses it (the reference's key replaces it, or none when it
 * cannot be read); a build that does not know references, sharing the store during a rolling
 * upgrade, verifies with it and so admits nothing, where an empty secret would admit anything
 * signed with an empty key.
 */
const placeholderSecret = (): string => randomBytes(32).toString('hex');

/** How often an update without a rev reads the issuer again when a concurrent write moved it. */
const UPDATE_ATTEMPTS = 10;

const HMAC_NAMES = 'HS256, HS384 and HS512';
const PUBLIC_KEY_NAMES = 'RS*, PS*, ES* and EdDSA';

/** The fields of a claim map given as an input's entries: null and absent entries are not read, `stream` defaults to `sub`. */
function claimMap(current: IssuerClaimMap | null, given: IssuerInput['claims']): IssuerClaimMap {
  const out: IssuerClaimMap = { stream: DEFAULT_STREAM_CLAIM };
  for (const e of CLAIM_ENTRIES) {
    const v = given && Object.hasOwn(given, e) ? given[e] : current?.[e];
    if (typeof v === 'string') out[e] = v;
  }
  return out;
}

function revokedIds(current: RevokedIds | null, given: IssuerInput['revoked']): RevokedIds {
  const pick = (k: keyof RevokedIds) => given?.[k] ?? current?.[k] ?? [];
  return { jti: pick('jti'), sub: pick('sub'), kid: pick('kid') };
}

const conflict = (e: IssuerConflict, type: IssuerType): ApiError => {
  if (type !== 'jwt') {
    const which = e.keyIds.length > 0 ? `key id ${e.keyIds.join(', ')}` : 'every credential of the format (one names no key id)';
    return new ApiError(409, `Another ${type} issuer of this account answers for ${which}: a credential must select one issuer, so an account's ${type} issuers share no key id`, { type, keyIds: [...e.keyIds] });
  }
  const message = `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}: a JWT must select one issuer, so no two issuers of the deployment share an iss and a key id (an issuer naming no key ids takes every key id of its iss)`;
  return new ApiError(409, message, { issuer: e.issuer, keyIds: [...e.keyIds] });
};

const changed = (id: number, expected: number, rev: number): ApiError =>
  new ApiError(409, `Issuer ${id} changed since rev ${expected}: it is at rev ${rev}; read it again and send its current rev`, { rev });

export class IssuerService {
  constructor(
    private readonly store: Store,
    private readonly limits: IssuerLimits,
    private readonly now: () => number = Date.now,
    /** Where key references are read (docs/api.md#keys-from-files-and-the-environment); without, a reference is refused. */
    private readonly keys?: KeySources,
    /** Every write's entry (docs/api.md#audit-log); none without. */
    private readonly audit?: AuditLog,
  ) {}

  /** The record with the keys its references name read (the stored record when it names none). */
  private async keyed(i: IssuerRecord): Promise<IssuerRecord> {
    return this.keys === undefined ? i : await this.keys.resolve(i);
  }

  /** The key a reference names, read now, or adds the field's problem (the reference's, never the key's). */
  private async referenced(accountId: string, field: string, ref: string, errors: FieldErrorList): Promise<string | null> {
    if (this.keys === undefined) {
      errors.add(field, 'key references are not read here: give the key itself');
      return null;
    }
    const r = await this.keys.check(accountId, ref);
    if ('problem' in r) {
      errors.add(field, r.problem);
      return null;
    }
    return r.value;
  }

  /**
   * A credential of a signed-URL issuer for the edge (docs/api.md#issuing-for-the-edge), signed
   * with its own keys for `path`, valid from now for `lifetimeSeconds`. A 400 when the issuer
   * cannot sign it (a JWT issuer, no signing key, a grant its format cannot express, disabled).
   */
  async sign(accountId: string, id: number, input: Omit<SignInput, 'now'>): Promise<SignOutput & { format: string }> {
    const i = await this.record(accountId, id);
    if (!i.isActive) throw new ApiError(400, `Issuer ${id} is disabled: its credentials would be refused; enable it first`);
    try {
      return Object.assign({ format: i.type }, signFor(await this.keyed(i), Object.assign({ now: Math.floor(this.now() / 1000) }, input)));
    } catch (e) {
      if (e instanceof SignProblem) throw new ApiError(400, `Cannot sign: ${e.message}`);
      throw e;
    }
  }

  /**
   * A signed-URL issuer's verification of a request, field by field, with the string that was
   * signed (keys and salts masked): the check endpoint's explanation. 400 for a JWT issuer.
   */
  async explainSigned(accountId: string, id: number, facts: SignedFacts): Promise<SignedResult> {
    const i = await this.record(accountId, id);
    if (i.type === 'jwt') throw ApiError.field('url', 'a jwt issuer verifies JWTs: give jwt');
    return verifySigned(await this.keyed(i), signedRequest(facts, facts.clientIp, facts.country), Math.floor(this.now() / 1000));
  }

  private notFound(id: number): ApiError {
    return ApiError.notFound('issuer', id, 'issuerId');
  }

  /** The kind of the account's token `id`, else null (another account's token too). */
  private async tokenKind(accountId: string, id: number): Promise<TokenKind | null> {
    if (await this.store.getToken(accountId, 'publish', id)) return 'publish';
    if (await this.store.getToken(accountId, 'subscribe', id)) return 'subscribe';
    return null;
  }

  private async view(i: IssuerRecord): Promise<IssuerView> {
    return issuerView(i, await this.tokenKind(i.accountId, i.policyTokenId));
  }

  /**
   * The problems of `next`, the record a write would store: the fields `given` are checked against
   * the account and the configuration, and the keys against the algorithms whatever was given (an
   * update of the algorithms alone may need a secret the issuer lacks).
   */
  private async problems(accountId: string, next: NewIssuer, given: IssuerInput): Promise<FieldErrorList> {
    const errors = new FieldErrorList();
    if (given.policyTokenId !== undefined && (await this.tokenKind(accountId, given.policyTokenId)) === null) {
      errors.add('policyTokenId', 'no such token in this account');
    }
    if (next.settings !== null) {
      for (const f of JWT_ONLY) if (given[f] !== undefined) errors.add(f, `only a jwt issuer has ${f}; a ${next.type} issuer's format is set in settings`);
      if (next.type !== 'cat') {
        if (given.issuer !== undefined && given.issuer !== null) errors.add('issuer', `only jwt and cat issuers check an iss; a ${next.type} credential carries none`);
        if (given.audience !== undefined && given.audience.length > 0) errors.add('audience', `only jwt and cat issuers check an aud; a ${next.type} credential carries none`);
      }
      if (given.secretFrom != null && given.secret != null) errors.add('secret', 'give the secret or secretFrom, not both');
      if (given.signingKeyFrom != null && given.signingKey != null) errors.add('signingKey', 'give the signingKey or signingKeyFrom, not both');
      if (!errors.empty) return errors;
      // the keys a reference names are checked as if given (read now; a reference that cannot be read is refused)
      const secret = next.secretFrom !== null ? await this.referenced(accountId, 'secretFrom', next.secretFrom, errors) : next.secret;
      const signingKey = next.signingKeyFrom !== null ? await this.referenced(accountId, 'signingKeyFrom', next.signingKeyFrom, errors) : next.signingKey;
      if (!errors.empty) return errors;
      const renamed = (field: string) => (field === 'secret' && next.secretFrom !== null ? 'secretFrom' : field === 'signingKey' && next.signingKeyFrom !== null ? 'signingKeyFrom' : field);
      const signingGiven = given.signingKey !== undefined || given.signingKeyFrom != null;
      for (const [field, problem] of signedKeysProblem(next.settings, secret, signingKey, signingGiven)) errors.add(renamed(field), problem);
      return errors;
    }
    if (given.settings !== undefined) errors.add('settings', 'only a signed-URL issuer (akamai-edgeauth, cloudfront, cat, wowza-securetoken, nimble-wmsauth) has settings');
    if (given.signingKey !== undefined && given.signingKey !== null) errors.add('signingKey', 'only a cloudfront or cat issuer signs with a private key');
    for (const f of ['secretFrom', 'signingKeyFrom'] as const) {
      if (given[f] != null) errors.add(f, 'only a signed-URL issuer reads its keys from a reference; a jwt issuer keeps its secret');
    }
    if (next.algorithms.length === 0) {
      errors.add('algorithms', 'required for a jwt issuer: the signature algorithms its JWTs may use');
      return errors;
    }
    if (given.jwks !== undefined && given.jwks !== null) {
      const set = publicJwks(given.jwks, this.limits.jwksMaxKeys);
      if ('problem' in set) errors.add('jwks', set.problem);
      else if (set.keys.length === 0) errors.add('jwks', 'holds no key that verifies signatures (a public RSA, EC or OKP key whose use, when given, is sig); give null for none');
    }
    if (given.jwksUrl !== undefined && given.jwksUrl !== null) {
      const p = jwksUrlProblem(given.jwksUrl, this.limits.allowPrivateJwksHosts);
      if (p !== null) errors.add('jwksUrl', p);
    }
    if (given.cookieName !== undefined && given.cookieName !== null && given.cookieName === this.limits.viewerCookieName) {
      errors.add('cookieName', `${given.cookieName} is the viewer sessions' own cookie (sessions.http.cookieName): choose another name`);
    }
    const hmac = next.algorithms.filter(isHmac);
    const publicKeyed = next.algorithms.filter((a) => !isHmac(a));
    const hasSecret = next.secret !== null && next.secret !== '';
    if (hmac.length > 0 && !hasSecret) errors.add('secret', `required for ${hmac.join(', ')}: the HMAC secret its JWTs are signed with (at least 16 characters; 32 bytes or more recommended)`);
    if (hmac.length === 0 && hasSecret) {
      errors.add('secret', `only ${HMAC_NAMES} use a secret and algorithms lists none of them: list one, or remove the secret (null)`);
    }
    if (publicKeyed.length > 0 && next.jwks === null && next.jwksUrl === null) {
      errors.add('jwks', `required for ${publicKeyed.join(', ')}, or jwksUrl: the public keys that verify its JWTs`);
    }
    if (publicKeyed.length === 0) {
      const unused = `public keys verify only ${PUBLIC_KEY_NAMES} and algorithms lists none of them: list one, or remove the keys (null)`;
      if (next.jwks !== null) errors.add('jwks', unused);
      if (next.jwksUrl !== null) errors.add('jwksUrl', unused);
    }
    return errors;
  }

  async list(accountId: string): Promise<IssuerView[]> {
    const all = await this.store.listIssuers(accountId);
    return Promise.all(all.map((i) => this.view(i)));
  }

  /** The stored record, secret included (never answered); 404 when not the account's. */
  private async record(accountId: string, id: number): Promise<IssuerRecord> {
    const i = await this.store.getIssuer(accountId, id);
    if (!i) throw this.notFound(id);
    return i;
  }

  async read(accountId: string, id: number): Promise<IssuerView> {
    return this.view(await this.record(accountId, id));
  }

  async create(accountId: string, input: IssuerCreateInput, by: Actor): Promise<IssuerView> {
    const type = input.type ?? 'jwt';
    const settings = isSignedFormat(type) ? settingsOf(type, null, input.settings) : null;
    if (type === 'jwt' && input.issuer === undefined) throw ApiError.field('issuer', 'required for a jwt issuer: the iss its JWTs carry, or null for none');
    const fields: NewIssuer = {
      label: input.label,
      type,
      isActive: input.isActive ?? true,
      policyTokenId: input.policyTokenId,
      issuer: input.issuer ?? null,
      keyIds: settings !== null ? signedKeyIds(settings) : (input.keyIds ?? []),
      audience: input.audience ?? [],
      algorithms: input.algorithms ?? [],
      jwks: (input.jwks ?? null) as IssuerRecord['jwks'],
      jwksUrl: input.jwksUrl ?? null,
      secret: input.secretFrom != null && settings !== null ? placeholderSecret() : (input.secret ?? null),
      clockSkewSeconds: input.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS,
      maxLifetimeSeconds: input.maxLifetimeSeconds ?? null,
      claims: claimMap(null, input.claims),
      cookieName: input.cookieName ?? null,
      revoked: revokedIds(null, input.revoked),
      settings,
      signingKey: input.signingKey ?? null,
      secretFrom: input.secretFrom ?? null,
      signingKeyFrom: input.signingKeyFrom ?? null,
    };
    (await this.problems(accountId, fields, input)).throwIfAny();
    const max = this.limits.maxPerAccount;
    if ((await this.store.listIssuers(accountId)).length >= max) {
      throw new ApiError(400, `Issuer limit reached: an account may hold at most ${max} issuers; delete one first`, { limit: max });
    }
    try {
      return await this.view(await this.store.createIssuer(accountId, fields, this.audit?.sealer(by, accountId, 'issuer', ISSUER)));
    } catch (e) {
      if (e instanceof IssuerConflict) throw conflict(e, type);
      throw e;
    }
  }

  /**
   * Sets the fields `input` gives, checked on the record they make. With `expectedRev` the issuer
   * must still be at that rev (else 409); without, a concurrent write makes it read and check again,
   * so what is stored is always a record that passed the checks.
   */
  async update(accountId: string, id: number, input: IssuerInput, by: Actor, expectedRev?: number): Promise<IssuerView> {
    const seal = this.audit?.sealer(by, accountId, 'issuer', ISSUER);
    if (Object.values(input).every((v) => v === undefined)) {
      throw new ApiError(400, 'No properties specified to update.');
    }
    const updated = await compareAndSet(`issuer ${id}`, expectedRev === undefined ? UPDATE_ATTEMPTS : 1, async () => {
      const cur = await this.record(accountId, id);
      if (expectedRev !== undefined && cur.rev !== expectedRev) throw changed(id, expectedRev, cur.rev);
      if (input.type !== undefined && input.type !== cur.type) throw ApiError.field('type', `is ${cur.type} and cannot change: create a ${input.type} issuer instead`);
      const patch = this.patchOf(cur, input);
      const next: NewIssuer = Object.assign({}, cur, patch);
      (await this.problems(accountId, next, input)).throwIfAny();
      try {
        const stored = await this.store.updateIssuer(accountId, id, patch, cur.rev, seal);
        if (!stored) throw this.notFound(id);
        return { done: stored };
      } catch (e) {
        if (e instanceof IssuerConflict) throw conflict(e, cur.type);
        if (!(e instanceof IssuerChanged)) throw e;
        if (expectedRev !== undefined) throw changed(id, expectedRev, e.rev);
        return 'retry';
      }
    });
    return this.view(updated);
  }

  /** The store patch of an update: the top-level fields given, the claim map and revoked lists merged into the current ones. */
  private patchOf(cur: IssuerRecord, input: IssuerInput): IssuerPatch {
    const patch: IssuerPatch = {};
    const set = <K extends keyof IssuerPatch>(k: K, v: IssuerPatch[K] | undefined) => {
      if (v !== undefined) patch[k] = v;
    };
    set('label', input.label);
    set('isActive', input.isActive);
    set('policyTokenId', input.policyTokenId);
    set('issuer', input.issuer);
    set('keyIds', input.keyIds);
    set('audience', input.audience);
    set('algorithms', input.algorithms);
    set('jwks', input.jwks as IssuerRecord['jwks'] | undefined);
    set('jwksUrl', input.jwksUrl);
    set('secret', input.secret);
    set('clockSkewSeconds', input.clockSkewSeconds);
    set('maxLifetimeSeconds', input.maxLifetimeSeconds);
    set('cookieName', input.cookieName);
    if (input.claims !== undefined) patch.claims = claimMap(cur.claims, input.claims);
    if (input.revoked !== undefined) patch.revoked = revokedIds(cur.revoked, input.revoked);
    if (cur.settings !== null && isSignedFormat(cur.type)) {
      if (input.settings !== undefined) patch.settings = settingsOf(cur.type, cur.settings, input.settings);
      patch.keyIds = signedKeyIds(patch.settings ?? cur.settings);
      set('signingKey', input.signingKey);
      set('secretFrom', input.secretFrom);
      set('signingKeyFrom', input.signingKeyFrom);
      // a key given replaces its reference, and a reference the key stored
      if (input.secret != null) patch.secretFrom = null;
      if (input.secretFrom != null) patch.secret = placeholderSecret();
      // the reference removed and no secret given: none (the placeholder is no one's key, and the checks say one is needed)
      if (input.secretFrom === null && cur.secretFrom !== null && input.secret === undefined) patch.secret = null;
      if (input.signingKey != null) patch.signingKeyFrom = null;
      if (input.signingKeyFrom != null) patch.signingKey = null;
    }
    return patch;
  }

  /**
   * Token sharing's `disable` for a credential issuer's subject (docs/api.md#token-sharing): adds
   * `value` to the issuer's revoked `list`, as an update would (audited, the issuer's rev moved, so
   * every instance refuses the subject's credentials at their next decision). True once listed
   * (already, or now); false when the list is full, the value too long, or the issuer gone.
   */
  async revoke(accountId: string, id: number, list: 'sub' | 'jti', value: string, by: Actor): Promise<boolean> {
    if (value.length > REVOKED_TEXT_MAX) return false;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const cur = await this.store.getIssuer(accountId, id);
      if (!cur) return false;
      const ids = cur.revoked[list];
      if (ids.includes(value)) return true;
      if (ids.length >= REVOKED_MAX) return false;
      try {
        await this.update(accountId, id, { revoked: { [list]: [...ids, value] } }, by, cur.rev);
        return true;
      } catch (e) {
        // changed meanwhile: read it again
        if (!(e instanceof ApiError && e.status === 409)) throw e;
      }
    }
    return false;
  }

  /** Deletes the issuer and answers it as it was: its `(iss, key ids)` may be declared again at once. */
  async remove(accountId: string, id: number, by: Actor): Promise<IssuerView> {
    const i = await this.record(accountId, id);
    const view = await this.view(i);
    if (!(await this.store.deleteIssuer(accountId, id, this.audit?.sealer(by, accountId, 'issuer', ISSUER)))) throw this.notFound(id);
    return view;
  }
}
