// HTTP viewer sessions (docs/callers.md#http-viewer-sessions): behind auth_request / forwardAuth /
// ext_authz, one full decision per viewer, then a signed credential checked in memory on every
// playlist and segment. What a check reads is this instance's own state:
// - each granted token's standing (active, deleted, refreshed, expiry), kept current by this
//   instance's own token changes at once and, for changes made elsewhere, by reading each
//   account's version every sessions.http.revalidateSeconds (its tokens are re-read on a change);
// - each viewer session's last presentation here: the registry's record is touched with it in one
//   batch per period, which is also how a cut made on another instance reaches this one, and a
//   session not presented for sessions.http.idleSeconds is over.
// With the store away nothing here fails: the state stays as it was last read.
// A credential never admits a request the full decision would refuse on the same token: it is
// bound to the viewer's address whenever an address or country rule applied to the grant, and
// each check holds its stream and address to the token's current rules (docs/callers.md#http-viewer-sessions).
import { createHash } from 'node:crypto';
import { serialize } from 'cookie';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { AccessRequest, Decision, Reason } from '../policy/types.js';
import { type Session, type Store, touchSessions } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';
import { hashOf, type AccountEntry, type TokenLookup } from '../enforce/lookup.js';
import { mintCredential, readCredential, valueTagFromHash, type ViewerClaims } from './viewer-credential.js';
import type { CredentialKeys } from './credential-keys.js';
import type { CredentialCheck, CredentialRequest, ViewerSessionRef } from '../contracts/viewer-credential.js';
import { RenditionGuard } from './rendition-guard.js';
import { copyWith } from '../domain/objects.js';
import { hasCountryLists } from '../domain/viewer-rules.js';
import { ipInRanges, originAllowed, type CidrRange } from '../policy/rules.js';
import { peekSelfSigned } from '../policy/self-signed.js';
import RE2 from 're2';
import { HTTP_VIEWER_CALLER } from '../domain/store-rules.js';
import { newSessionId } from '../domain/session-ids.js';

/**
 * Registry touches per store call during a revalidation round (one call at a time): on Redis one
 * script per account for them all, each live index written once for the batch.
 */
const TOUCH_BATCH = 256;

/** Verified credentials kept (about 300 bytes each). */
const VERIFIED_MAX = 100_000;

/** Seconds a credential's issue time may lie ahead of this instance's clock (another instance's clock). */
export const CLOCK_SLACK_S = 30;

/** Answers a token state remembers per stream name and per address before starting over. */
const MEMO_MAX = 1024;

/** The caller whose viewer sessions these are (the registry's `caller`). */
export { HTTP_VIEWER_CALLER };

interface TokenState {
  accountId: string;
  deleted: boolean;
  active: boolean;
  tag: string;
  rev: number;
  expiresOn?: number;
  trackingId?: string;
  /** Last time a credential of this token was granted or presented here (ms): idle entries are dropped. */
  used: number;
  /** Its stream rules (a credential's stream must still be one of them), its address ranges and own country lists. */
  streams: (name: string) => boolean;
  ips: CidrRange[];
  /** Its allowedOrigins. */
  origins: string[];
  countries?: { allowed: readonly string[]; denied: readonly string[] };
  /** A subscribe token without country lists: its viewers are held to the publish side's or the account's. */
  inherits: boolean;
  /** Answers already computed for this state: stream name → covered, address → passes the address and country rules. */
  named: Map<string, boolean>;
  placed: Map<string, boolean>;
}

interface ViewerState {
  tokenId: number;
  accountId: string;
  /** Its key among cookie-less repeats (token, address, stream), when granted here. */
  repeat?: string;
  /** Last presentation here (ms), and the one last written to the registry. */
  seen: number;
  touched: number;
  ended?: 'session_terminated' | 'session_ended';
}

const NOTHING = (): boolean => false;

/** A token no longer there: nothing of it holds. */
const goneState = (accountId: string, used: number): TokenState => ({
  accountId,
  deleted: true,
  active: false,
  tag: '',
  rev: -1,
  used,
  streams: NOTHING,
  ips: [],
  origins: [],
  inherits: false,
  named: new Map(),
  placed: new Map(),
});

/** The `exp`, address and origin lists of a self-signed JWT the decision has verified. */
function jwtRules(jwt: string): { exp?: number; ips: string[]; origins: string[] } {
  const p = peekSelfSigned(jwt);
  if ('problem' in p) return { ips: [], origins: [] };
  const exp = p.claims.exp;
  return { exp: typeof exp === 'number' && Number.isFinite(exp) ? Math.floor(exp) : undefined, ips: p.claims.allowedIpAddresses, origins: p.claims.allowedOrigins };
}

/**
 * What of the account's country rules a credential depends on when its token inherits them (docs/api.md#country):
 * the defaults and every publish token's lists with its streams, hashed. A credential granted
 * under one fingerprint is refreshed only while the account keeps it.
 */
function geoFingerprint(e: AccountEntry | undefined): string {
  if (e === undefined) return '?';
  if (e.geo === undefined) return '';
  // an entry's content never changes (a new version is a new entry): hashed once per entry
  let f = fingerprints.get(e);
  if (f === undefined) {
    const parts = [e.geo.defaults?.lists ?? [], e.geo.tokens.map((g) => [g.token.id, g.token.streams, g.alone.lists])];
    f = createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
    fingerprints.set(e, f);
  }
  return f;
}
const fingerprints = new WeakMap<AccountEntry, string>();

/** Whether a country passes lists as evaluate() applies them (src/policy/evaluate.ts, countryCheck). */
function countryPasses(l: { allowed: readonly string[]; denied: readonly string[] }, c: string | undefined): boolean {
  if (l.allowed.length > 0) return c !== undefined && l.allowed.includes(c);
  return c === undefined || !l.denied.includes(c);
}

function remember<K>(m: Map<K, boolean>, k: K, v: boolean): boolean {
  if (m.size >= MEMO_MAX) m.clear();
  m.set(k, v);
  return v;
}

/** The claims a token-changing write leaves a credential with: refused as a full decision would refuse it. */
function tokenProblem(t: TokenState, claims: ViewerClaims, now: number): Reason | undefined {
  if (t.deleted || t.tag !== claims.v) return 'token_invalid';
  if (!t.active) return 'token_disabled';
  if (t.expiresOn !== undefined && t.expiresOn <= now) return 'token_expired';
  return undefined;
}

export class ViewerSessions {
  private readonly tokens = new Map<number, TokenState>();
  private readonly versions = new Map<string, number>();
  private readonly viewers = new Map<string, ViewerState>();
  /**
   * Credentials whose signature was checked, by value: a viewer presents the same one on every
   * request until it is refreshed, and a lookup costs a fraction of the HMAC
   * (docs/decision-path.md#http-viewer-sessions). Only
   * signed values enter, so a flood of forged ones cannot fill it.
   */
  private readonly verified = new LRUCache<string, { claims: ViewerClaims; key: string }>({ max: VERIFIED_MAX });
  /** Each account's country-rule fingerprint as last read here (geoFingerprint). */
  private readonly geo = new Map<string, string>();
  private readonly renditions: RenditionGuard;
  private readonly renditionPattern: RE2;
  /** The longest life a check accepts (seconds): sessions.http.maxCredentialSeconds, else credentialSeconds plus clock slack. */
  private readonly capS: number;
  /** When the keys were last read because a credential matched none (ms): at most once a second. */
  private keysReadAt = 0;
  /**
   * The viewer session of a token, address and stream, for clients that send the token on every
   * request and no cookie (a proxy without the Set-Cookie lines, a player without a cookie jar):
   * their repeats are the same viewer, not a new session each.
   */
  private readonly repeats = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private running = false;
  /** The last credential minted and its expiry (setCookie reads it). */
  private minted?: { value: string; e: number };
  private warned = false;

  constructor(
    private readonly cfg: Config['sessions']['http'],
    private readonly keys: CredentialKeys,
    private readonly store: Store,
    private readonly lookup: TokenLookup,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    /** The country of an address (the geo database), for the country rules a check re-applies. */
    private readonly countryOf: (ip: string) => string | undefined = () => undefined,
  ) {
    this.capS = cfg.maxCredentialSeconds > 0 ? cfg.maxCredentialSeconds : cfg.credentialSeconds + CLOCK_SLACK_S;
    this.renditionPattern = new RE2(cfg.renditionPattern, 'u');
    this.renditions = new RenditionGuard(store, lookup);
  }

  /** Where the signing key comes from: sessions.http.secret, or the keys kept in the store. */
  get keySource(): CredentialKeys['source'] {
    return this.keys.source;
  }

  /** How long the previous key is accepted after a rotation (ms): one credential life after every instance has picked it up. */
  static previousKeyMs(cfg: Config['sessions']['http']): number {
    const cap = cfg.maxCredentialSeconds > 0 ? cfg.maxCredentialSeconds : cfg.credentialSeconds + CLOCK_SLACK_S;
    return (cap + cfg.revalidateSeconds) * 1000;
  }

  /** A token record's state as checks read it. */
  private stateOf(t: TokenRecord, used: number): TokenState {
    const rules = this.lookup.rulesOf(t);
    return {
      accountId: t.accountId,
      deleted: false,
      active: t.isActive,
      tag: valueTagFromHash(hashOf(t.token)), // the SHA-256 the decision path remembers
      rev: t.rev,
      expiresOn: t.expiresOn !== undefined ? Date.parse(t.expiresOn) : undefined,
      trackingId: t.tracking?.trackingId,
      used,
      streams: rules.streams,
      ips: rules.ips,
      origins: rules.origins,
      countries: hasCountryLists(t) ? { allowed: t.allowedCountries, denied: t.deniedCountries } : undefined,
      inherits: t.kind === 'subscribe' && !hasCountryLists(t),
      named: new Map(),
      placed: new Map(),
    };
  }

  get cookieName(): string {
    return this.cfg.cookieName;
  }

  /** A new viewer session id (the registry's callerSessionId). */
  newSessionId(): string {
    // a registry id too: the session is registered under it (registryIdFor)
    return newSessionId();
  }

  /** valueTag of a presented token, from the SHA-256 the decision path already remembers. */
  private tagOf(presented: string): string {
    return valueTagFromHash(hashOf(presented));
  }

  /**
   * Mints a credential, remembering its expiry for the Set-Cookie that follows. It is not put in
   * the verified cache: a full decision mints one per request that carries the token, and most of
   * those values are never presented back; the first check of one verifies it once (verify()).
   */
  private mint(claims: ViewerClaims): string {
    const value = mintCredential(this.keys.signing.key, claims);
    this.minted = { value, e: claims.e };
    return value;
  }

  private repeatKey(presented: string, access: Pick<AccessRequest, 'action' | 'streamName' | 'accountId' | 'clientIp'>): string {
    // the token by its SHA-256 (as the token cache and the store key it), never its value
    return `${hashOf(presented)}\n${access.action}\n${access.accountId ?? ''}\n${access.streamName}\n${access.clientIp ?? ''}`;
  }

  /**
   * The live viewer session this instance granted to the same token, address and stream, if any:
   * a request that carries the token but no credential is that viewer again (its full decision
   * starts no second session). Undefined when there is none, or it ended or went idle.
   */
  repeatOf(presented: string, access: AccessRequest): string | undefined {
    const sid = this.repeats.get(this.repeatKey(presented, access));
    if (sid === undefined) return undefined;
    const v = this.viewers.get(sid);
    if (v === undefined || v.ended !== undefined || this.now() - v.seen > this.cfg.idleSeconds * 1000) return undefined;
    return sid;
  }

  /** The Set-Cookie value carrying `credential`, living as long as it does. */
  setCookie(credential: string): string {
    // the credential this instance just minted (the usual case) needs no second reading
    const e = this.minted?.value === credential ? this.minted.e : this.verified.get(credential)?.claims.e;
    const maxAge = e !== undefined ? Math.max(1, e - Math.floor(this.now() / 1000)) : this.cfg.credentialSeconds;
    return serialize(this.cfg.cookieName, credential, {
      path: this.cfg.cookiePath,
      maxAge,
      httpOnly: true,
      secure: this.cfg.cookieSecure,
      sameSite: this.cfg.cookieSameSite.toLowerCase() as 'lax' | 'strict' | 'none',
    });
  }

  /**
   * After a full decision allowed `access` (with viewer session `sid`): the credential it grants,
   * or undefined when the token record is not at hand or the credential is an issuer JWT (the next
   * request is decided in full again).
   */
  issue(d: Decision, access: AccessRequest, sid: string, presented: string): string | undefined {
    if (!d.allowed || d.tokenId === undefined || d.accountId === undefined) return undefined;
    const now = this.now();
    const entry = d.selfSigned || d.issuerId !== undefined ? this.lookup.peekEntryById(d.tokenId) : this.lookup.peekEntryByHash(hashOf(presented));
    const record = entry?.token;
    if (!record || record.id !== d.tokenId) return undefined;
    // The state of this revision when this instance holds it already (a record's content changes
    // only with its revision): its memos stay warm, and a full decision allocates nothing for it.
    const held = this.tokens.get(record.id);
    const state = held !== undefined && !held.deleted && held.rev === record.rev && held.accountId === record.accountId ? held : this.stateOf(record, now);
    state.used = now;
    this.tokens.set(record.id, state);
    if (!this.versions.has(record.accountId)) this.versions.set(record.accountId, entry.ver);
    const repeat = this.repeatKey(presented, access);
    const known = this.viewers.get(sid);
    if (known !== undefined) known.seen = now;
    else this.viewers.set(sid, { tokenId: record.id, accountId: record.accountId, repeat, seen: now, touched: now });
    this.repeats.set(repeat, sid);
    // An issuer's JWT gets no credential: each request carrying it is decided in full (its issuer's
    // revocations apply at once; the memo of verified JWTs makes that a hash, not a signature), and
    // is this viewer again (the repeat above), so it starts no second session. A signed URL, cookie
    // set or CAT does get one, as a token does (docs/api.md#signed-url-issuers): its segments would
    // otherwise each be a full decision, and the credential ends no later than the grant.
    if (d.issuerId !== undefined && d.signedUrl !== true) return undefined;
    if (d.signedEach === true) return undefined;
    const jwt = d.selfSigned ? jwtRules(presented) : undefined;
    // The country lists the viewer inherits (a publish token's, the account's defaults), as the
    // decision read them: an account entry this instance does not hold counts as having some.
    const account = state.inherits ? this.lookup.accountAt(record.accountId, entry.ver) : undefined;
    const fingerprint = state.inherits ? geoFingerprint(account) : undefined;
    if (account !== undefined) this.geo.set(record.accountId, fingerprint!);
    // An address or country rule judged this grant: the credential holds only from that address,
    // whatever bindAddress says (a credential never outvotes the token's rules).
    // A signed URL, cookie set or CAT is a grant to one viewer (often bound to its address at the
    // edge, which the origin may not see): its credential holds only from the address it was decided for.
    const ruled = state.ips.length > 0 || (jwt?.ips.length ?? 0) > 0 || state.countries !== undefined || (fingerprint !== undefined && fingerprint !== '') || d.signedUrl === true;
    const bind =
      ruled ||
      this.cfg.bindAddress === 'always' ||
      (this.cfg.bindAddress === 'limited' && (d.limits !== undefined || (record.bindIpsOnUsage ?? 0) > 0));
    const nowS = Math.floor(now / 1000);
    const claims: ViewerClaims = {
      s: sid,
      t: record.id,
      a: record.accountId,
      p: this.tagOf(presented),
      v: state.tag,
      r: record.rev,
      c: access.action,
      n: d.streamName,
      e: this.expiry(now, state),
      b: nowS,
    };
    if (fingerprint !== undefined) claims.g = fingerprint;
    // An origin rule judged this grant: the credential holds only from that origin (the decision
    // passed, so the request named one).
    if (state.origins.length > 0 || (jwt?.origins.length ?? 0) > 0) {
      if (access.origin === undefined) return undefined;
      claims.o = access.origin;
    }
    if (jwt?.exp !== undefined) {
      // a self-signed JWT (verified by the decision) bounds its credential by its own exp too
      claims.m = jwt.exp;
      claims.e = Math.min(claims.e, jwt.exp);
    }
    // A signed credential's is never refreshed: it ends within sessions.http.credentialSeconds and by
    // the grant's expiry (the decision's expiresOn), and the next request presenting the signed
    // credential is decided in full again, so the issuer's revocations reach the viewer by then.
    if (d.signedUrl === true) {
      if (d.expiresOn !== undefined) claims.e = Math.min(claims.e, Math.floor(Date.parse(d.expiresOn) / 1000));
      claims.m = claims.e;
    }
    if (bind && access.clientIp !== undefined) claims.i = access.clientIp;
    // a rule-bound grant to a client without an address: nothing to bind to, no credential
    else if (ruled) return undefined;
    return this.mint(claims);
  }

  private expiry(now: number, t: TokenState): number {
    const e = Math.floor(now / 1000) + this.cfg.credentialSeconds;
    return t.expiresOn === undefined ? e : Math.min(e, Math.floor(t.expiresOn / 1000));
  }

  /**
   * Whether a credential for `granted` may speak for `stream`: the same name, or with
   * renditionSeparators a rendition `<granted><sep><suffix>` whose suffix matches renditionPattern
   * (what the name alone tells; RenditionGuard then asks whether another token secures it).
   */
  private renditionOf(granted: string, stream: string): boolean {
    for (const sep of this.cfg.renditionSeparators) {
      if (stream.length > granted.length + sep.length && stream.startsWith(granted) && stream.startsWith(sep, granted.length)) {
        if (this.renditionPattern.test(stream.slice(granted.length + sep.length))) return true;
      }
    }
    return false;
  }

  /** The claims of a credential whose signature holds with a key accepted now, else undefined. */
  private verify(value: string, now: number): ViewerClaims | undefined {
    const known = this.verified.get(value);
    if (known !== undefined) {
      if (this.keys.accepts(known.key, now)) return known.claims;
      this.verified.delete(value); // signed with a key rotated out
      return undefined;
    }
    for (const k of this.keys.verifying(now)) {
      const claims = readCredential(k.key, value);
      if (claims) {
        this.verified.set(value, { claims, key: k.id });
        return claims;
      }
    }
    return undefined;
  }

  /** Checks a presented credential for a request, in memory (a token unknown here is read once). */
  check(value: string, req: CredentialRequest): CredentialCheck | Promise<CredentialCheck> {
    const now = this.now();
    const claims = this.verify(value, now);
    if (!claims) {
      // Maybe signed with a key another instance rotated to: the keys are read again, at most once a second.
      if (this.keys.source === 'store' && now - this.keysReadAt >= 1000) {
        this.keysReadAt = now;
        return this.keys.reload().then(
          (changed) => (changed ? this.check(value, req) : { ok: false, reason: 'credential_invalid' }),
          () => ({ ok: false, reason: 'credential_invalid' }),
        );
      }
      return { ok: false, reason: 'credential_invalid' };
    }
    const nowS = Math.floor(now / 1000);
    // Never longer-lived than this instance would grant, whatever the signature says.
    if (claims.e - claims.b > this.capS || claims.b > nowS + CLOCK_SLACK_S || claims.e - nowS > this.capS || nowS - claims.b > this.capS) {
      return { ok: false, reason: 'credential_invalid' };
    }
    const previous = req.presented !== undefined && this.tagOf(req.presented) === claims.p ? { sessionId: claims.s, accountId: claims.a } : undefined;
    if (claims.e * 1000 <= now) return { ok: false, reason: 'credential_expired', previous };
    // Another stream, account, action or token: this credential says nothing about the request.
    if (claims.c !== req.action) return { ok: false };
    const rendition = claims.n !== req.streamName;
    if (rendition && !this.renditionOf(claims.n, req.streamName)) return { ok: false };
    if (req.accountId !== undefined && req.accountId !== claims.a) return { ok: false };
    if (req.presented !== undefined && previous === undefined) return { ok: false };
    if (claims.i !== undefined && claims.i !== req.clientIp) return { ok: false, reason: 'credential_address', previous };
    const go = (): CredentialCheck | Promise<CredentialCheck> => {
      const t = this.tokens.get(claims.t);
      if (t === undefined) return this.load(claims).then((loaded) => this.judge(claims, loaded, req, this.now(), previous));
      return this.judge(claims, t, req, now, previous);
    };
    if (!rendition) return go();
    // A rendition another token secures is not this credential's to open: decided in full.
    const covered = this.renditions.covers(claims.a, claims.n, req.streamName);
    if (covered === true) return go();
    if (covered === false) return { ok: false };
    return covered.then((yes) => (yes ? go() : { ok: false }));
  }

  /** The token's current rules for the credential's stream and the request's address: the reason a full decision would refuse, if any. */
  private ruleProblem(claims: ViewerClaims, t: TokenState, req: CredentialRequest): Reason | undefined {
    const named = t.named.get(claims.n) ?? remember(t.named, claims.n, t.streams(claims.n));
    if (!named) return 'stream_not_allowed';
    if (t.ips.length > 0 && !ipInRanges(req.clientIp, t.ips)) return 'ip_not_allowed';
    // Origins: the credential holds only from the origin its grant was judged from, and the token's
    // current list is applied again once it may have changed (another revision, or none bound).
    if (claims.o !== undefined || t.origins.length > 0) {
      const origin = req.origin?.();
      if (claims.o !== undefined && origin !== claims.o) return 'origin_not_allowed';
      if (t.origins.length > 0 && (claims.o === undefined || t.rev !== claims.r)) {
        const key = `o\n${origin ?? ''}`;
        if (!(t.placed.get(key) ?? remember(t.placed, key, originAllowed(origin, t.origins)))) return 'origin_not_allowed';
      }
    }
    // The token's own country lists: bound at the grant, so read again only when they may have
    // changed since (another revision) or the credential is bound to no address.
    if (t.countries !== undefined && (t.rev !== claims.r || claims.i === undefined)) {
      const trusted = req.country?.();
      const key = `${req.clientIp ?? ''}\n${trusted ?? ''}`;
      let ok = t.placed.get(key);
      if (ok === undefined) {
        const c = trusted ?? (req.clientIp !== undefined ? this.countryOf(req.clientIp) : undefined);
        ok = remember(t.placed, key, countryPasses(t.countries, c));
      }
      if (!ok) return 'country_not_allowed';
    }
    return undefined;
  }

  private judge(claims: ViewerClaims, t: TokenState | undefined, req: CredentialRequest, now: number, previous: ViewerSessionRef | undefined): CredentialCheck {
    // Unknown here and the store not answering: the credential was granted at most
    // credentialSeconds ago by an instance that decided in full; its signature is what is left.
    if (t !== undefined) {
      const problem = tokenProblem(t, claims, now) ?? this.ruleProblem(claims, t, req);
      if (problem) return { ok: false, reason: problem, previous };
      t.used = now;
    }
    let v = this.viewers.get(claims.s);
    if (v === undefined) {
      // a viewer another instance admitted: its presentations here are counted from now
      v = { tokenId: claims.t, accountId: claims.a, seen: now, touched: 0 };
      this.viewers.set(claims.s, v);
    } else if (v.ended === undefined && now - v.seen > this.cfg.idleSeconds * 1000) {
      v.ended = 'session_ended';
    }
    if (v.ended) return { ok: false, reason: v.ended, previous };
    v.seen = now;
    const out: CredentialCheck = { ok: true, tokenId: claims.t, accountId: claims.a, trackingId: t?.trackingId };
    // Refreshed past half its life, while the token record is the one it was granted on and the
    // country lists it inherited are the ones it was granted under.
    if (
      t !== undefined &&
      t.rev === claims.r &&
      (claims.g === undefined || claims.g === this.geo.get(claims.a)) &&
      (claims.e * 1000 - now) * 2 < this.cfg.credentialSeconds * 1000
    ) {
      const e = Math.min(this.expiry(now, t), claims.m ?? Number.MAX_SAFE_INTEGER);
      if (e > claims.e) out.refresh = this.mint(copyWith(claims, { e, b: Math.floor(now / 1000) }));
    }
    return out;
  }

  private async load(claims: ViewerClaims): Promise<TokenState | undefined> {
    try {
      const r = await this.lookup.timed(this.store.findTokenById(claims.t));
      const now = this.now();
      const t = r === null || r.accountId !== claims.a ? goneState(claims.a, now) : this.stateOf(r, now);
      this.tokens.set(claims.t, t);
      if (t.inherits && !this.geo.has(claims.a)) this.geo.set(claims.a, geoFingerprint(await this.lookup.account(claims.a)));
      return t;
    } catch {
      return this.tokens.get(claims.t);
    }
  }

  /** A token change made through this instance: its credentials follow at once. */
  tokenChanged(id: number, after: TokenRecord | null, accountId?: string): void {
    // a publish token's change can secure a rendition: the account's answers are worked out again
    if (accountId !== undefined) this.renditions.forget(accountId);
    const t = this.tokens.get(id);
    if (t === undefined) return;
    this.tokens.set(id, after === null ? goneState(t.accountId, t.used) : this.stateOf(after, t.used));
  }

  /** The viewer asked again with its token, replacing its session `sid`: that one is over here. */
  replaced(sid: string): void {
    const v = this.viewers.get(sid);
    if (v) v.ended = 'session_ended';
  }

  /** A viewer session Streamgate ended (a cut, a stream stop, a token trigger): its credential is refused here at once. */
  sessionEnded(s: Session): void {
    if (s.caller !== HTTP_VIEWER_CALLER) return;
    const v = this.viewers.get(s.sessionId);
    const ended = s.endedReason === 'done' || s.endedReason === 'expired' ? 'session_ended' : 'session_terminated';
    if (v) v.ended = ended;
    else if (s.tokenId !== undefined) this.viewers.set(s.sessionId, { tokenId: s.tokenId, accountId: s.accountId, seen: this.now(), touched: 0, ended });
  }

  /** Every revalidateSeconds (at most idleSeconds / 3): the registry touched, token changes made elsewhere read. */
  start(): void {
    if (this.timer) return;
    const ms = Math.max(250, Math.min(this.cfg.revalidateSeconds * 1000, Math.floor((this.cfg.idleSeconds * 1000) / 3)));
    this.timer = setInterval(() => void this.revalidate(), ms);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: touch the registry with the presentations since the last, then follow account versions. */
  async revalidate(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.touchAll();
      await this.followVersions();
      // a rotation made elsewhere (the CLI, another instance) is picked up within one period
      if (this.keys.source === 'store' && (await this.keys.reload())) this.logger.info('viewer sessions: credential keys rotated');
      if (this.warned) this.logger.info('viewer sessions: the store answers again');
      this.warned = false;
    } catch (e) {
      if (!this.warned) this.logger.warn({ err: (e as Error).message }, 'viewer sessions: revalidation failed; credentials are checked on the last known state');
      this.warned = true;
    } finally {
      this.running = false;
    }
  }

  private async touchAll(): Promise<void> {
    const now = this.now();
    const idleMs = this.cfg.idleSeconds * 1000;
    const due: Array<[string, ViewerState]> = [];
    for (const [sid, v] of this.viewers) {
      // over: forgotten once no credential of it can still be valid
      if (v.ended !== undefined || now - v.seen > idleMs) {
        if (now - v.seen > idleMs + this.cfg.credentialSeconds * 1000) {
          this.viewers.delete(sid);
          if (v.repeat !== undefined && this.repeats.get(v.repeat) === sid) this.repeats.delete(v.repeat);
        }
        else if (v.ended === undefined) v.ended = 'session_ended';
        continue;
      }
      if (v.seen > v.touched) due.push([sid, v]);
    }
    // TOUCH_BATCH at a time: tens of thousands of viewers fit in one period on a remote store
    for (let i = 0; i < due.length; i += TOUCH_BATCH) {
      const batch = due.slice(i, i + TOUCH_BATCH).map(([sid, v]) => ({ sid, v, seen: v.seen }));
      const answers = await touchSessions(
        this.store,
        HTTP_VIEWER_CALLER,
        batch.map((b) => ({ sessionId: b.sid, at: new Date(b.seen).toISOString(), accountId: b.v.accountId })),
        this.cfg.idleSeconds,
      );
      batch.forEach(({ v, seen }, k) => {
        const s = answers[k];
        v.touched = seen;
        if (s?.endedReason !== undefined) v.ended = s.endedReason === 'done' || s.endedReason === 'expired' ? 'session_ended' : 'session_terminated';
        // null: not registered yet (queued) or lapsed while presented elsewhere; the next admission after idleSeconds counts anew
      });
    }
    for (const [id, t] of this.tokens) if (now - t.used > idleMs + this.cfg.credentialSeconds * 1000) this.tokens.delete(id);
  }

  private async followVersions(): Promise<void> {
    const accounts = new Set<string>();
    for (const t of this.tokens.values()) accounts.add(t.accountId);
    for (const a of [...this.versions.keys()]) {
      if (accounts.has(a)) continue;
      this.versions.delete(a);
      this.geo.delete(a);
    }
    for (const accountId of accounts) {
      const ver = await this.store.accountVersion(accountId);
      if (this.versions.get(accountId) === ver) continue;
      for (const [id, t] of this.tokens) {
        if (t.accountId !== accountId) continue;
        const r = await this.store.findTokenById(id);
        this.tokens.set(id, r === null || r.accountId !== accountId ? goneState(accountId, t.used) : this.stateOf(r, t.used));
      }
      if (this.geo.has(accountId)) this.geo.set(accountId, geoFingerprint(await this.lookup.account(accountId)));
      this.renditions.forget(accountId);
      this.versions.set(accountId, ver);
    }
  }
}
