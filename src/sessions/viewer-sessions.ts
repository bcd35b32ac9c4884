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
import { randomBytes } from 'node:crypto';
import { serialize } from 'cookie';
import { decodeJwt } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { AccessRequest, Decision, Reason } from '../policy/types.js';
import type { Session, Store } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';
import type { TokenLookup } from '../enforce/lookup.js';
import { hashOf } from '../enforce/credential.js';
import { credentialKey, mintCredential, readCredential, valueTagFromHash, type ViewerClaims } from './viewer-credential.js';
import { copyWith } from '../domain/objects.js';

/** Registry touches in flight at once during a revalidation round. */
const TOUCH_BATCH = 64;

/** Verified credentials kept (about 300 bytes each). */
const VERIFIED_MAX = 100_000;

/** The caller whose viewer sessions these are (the registry's `caller`). */
export const HTTP_VIEWER_CALLER = 'auth-request';

/** A credential check: allowed (maybe with a refreshed credential), or why not. */
export type CredentialCheck =
  | { ok: true; tokenId: number; accountId: string; trackingId?: string; refresh?: string }
  /** `reason` undefined: the credential does not speak for this request (another stream or token): decide in full. */
  | {
      ok: false;
      reason?: Reason;
      /**
       * The viewer session this credential was for, when the request also carries the token it was
       * granted on: the same viewer asking again (a new address, an expired credential), whose
       * old session ends before the new one is counted.
       */
      previous?: string;
    };

/** What a check knows of the request. */
export interface CredentialRequest {
  action: 'publish' | 'subscribe';
  streamName: string;
  accountId?: string;
  clientIp?: string;
  /** The token (or JWT) the request also carries, if any. */
  presented?: string;
}

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

const stateOf = (t: TokenRecord, used: number): TokenState => ({
  accountId: t.accountId,
  deleted: false,
  active: t.isActive,
  tag: valueTagFromHash(hashOf(t.token)), // the SHA-256 the decision path remembers
  rev: t.rev,
  expiresOn: t.expiresOn !== undefined ? Date.parse(t.expiresOn) : undefined,
  trackingId: t.tracking?.trackingId,
  used,
});

/** The `exp` of a JWT the decision has verified, else undefined. */
function jwtExpiry(jwt: string): number | undefined {
  try {
    const exp = decodeJwt(jwt).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? Math.floor(exp) : undefined;
  } catch {
    return undefined;
  }
}

/** The claims a token-changing write leaves a credential with: refused as a full decision would refuse it. */
function tokenProblem(t: TokenState, claims: ViewerClaims, now: number): Reason | undefined {
  if (t.deleted || t.tag !== claims.v) return 'token_invalid';
  if (!t.active) return 'token_disabled';
  if (t.expiresOn !== undefined && t.expiresOn <= now) return 'token_expired';
  return undefined;
}

export class ViewerSessions {
  private signing?: ReturnType<typeof credentialKey>;
  private readonly tokens = new Map<number, TokenState>();
  private readonly versions = new Map<string, number>();
  private readonly viewers = new Map<string, ViewerState>();
  /**
   * Credentials whose signature was checked, by value: a viewer presents the same one on every
   * request until it is refreshed, and a lookup costs a fraction of the HMAC (~4.5 µs). Only
   * signed values enter, so a flood of forged ones cannot fill it.
   */
  private readonly verified = new LRUCache<string, ViewerClaims>({ max: VERIFIED_MAX });
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
    private readonly secrets: { hookSecret: string; dataDir: string },
    private readonly store: Store,
    private readonly lookup: TokenLookup,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The signing key, made (or read from dataDir) at first use. */
  private get key(): Buffer {
    this.signing ??= credentialKey({ secret: this.cfg.secret, hookSecret: this.secrets.hookSecret, dataDir: this.secrets.dataDir });
    return this.signing.key;
  }

  /** Where the signing key comes from (configWarnings names a key no other instance shares). */
  get keySource(): ReturnType<typeof credentialKey>['source'] {
    void this.key;
    return this.signing!.source;
  }

  get cookieName(): string {
    return this.cfg.cookieName;
  }

  /** A new viewer session id (the registry's callerSessionId). */
  newSessionId(): string {
    return randomBytes(16).toString('base64url');
  }

  /** valueTag of a presented token, from the SHA-256 the decision path already remembers. */
  private tagOf(presented: string): string {
    return valueTagFromHash(hashOf(presented));
  }

  /** Mints a credential, remembering its expiry for the Set-Cookie that follows. */
  private mint(claims: ViewerClaims): string {
    const value = mintCredential(this.key, claims);
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
    const e = this.minted?.value === credential ? this.minted.e : readCredential(this.key, credential)?.e;
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
   * or undefined when the token record is not at hand (the next request is decided in full again).
   */
  issue(d: Decision, access: AccessRequest, sid: string, presented: string): string | undefined {
    if (!d.allowed || d.tokenId === undefined || d.accountId === undefined) return undefined;
    const now = this.now();
    const entry = d.selfSigned ? this.lookup.peekEntryById(d.tokenId) : this.lookup.peekEntryByHash(hashOf(presented));
    const record = entry?.token;
    if (!record || record.id !== d.tokenId) return undefined;
    const state = stateOf(record, now);
    this.tokens.set(record.id, state);
    if (!this.versions.has(record.accountId)) this.versions.set(record.accountId, entry.ver);
    const repeat = this.repeatKey(presented, access);
    const known = this.viewers.get(sid);
    if (known !== undefined) known.seen = now;
    else this.viewers.set(sid, { tokenId: record.id, accountId: record.accountId, repeat, seen: now, touched: now });
    this.repeats.set(repeat, sid);
    const bind =
      this.cfg.bindAddress === 'always' ||
      (this.cfg.bindAddress === 'limited' && (d.limits !== undefined || (record.bindIpsOnUsage ?? 0) > 0));
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
    };
    if (d.selfSigned) {
      // a self-signed JWT (verified by the decision) bounds its credential by its own exp too
      const exp = jwtExpiry(presented);
      if (exp !== undefined) {
        claims.m = exp;
        claims.e = Math.min(claims.e, exp);
      }
    }
    if (bind && access.clientIp !== undefined) claims.i = access.clientIp;
    return this.mint(claims);
  }

  private expiry(now: number, t: TokenState): number {
    const e = Math.floor(now / 1000) + this.cfg.credentialSeconds;
    return t.expiresOn === undefined ? e : Math.min(e, Math.floor(t.expiresOn / 1000));
  }

  /** Whether `stream` is the granted one or, with renditionSeparators, one of its renditions. */
  private covers(granted: string, stream: string): boolean {
    if (granted === stream) return true;
    for (const sep of this.cfg.renditionSeparators) if (stream.length > granted.length + sep.length && stream.startsWith(granted + sep)) return true;
    return false;
  }

  /** Checks a presented credential for a request, in memory (a token unknown here is read once). */
  check(value: string, req: CredentialRequest): CredentialCheck | Promise<CredentialCheck> {
    let claims = this.verified.get(value);
    if (claims === undefined) {
      claims = readCredential(this.key, value);
      if (!claims) return { ok: false, reason: 'credential_invalid' };
      this.verified.set(value, claims);
    }
    const now = this.now();
    const previous = req.presented !== undefined && this.tagOf(req.presented) === claims.p ? claims.s : undefined;
    if (claims.e * 1000 <= now) return { ok: false, reason: 'credential_expired', previous };
    // Another stream, account, action or token: this credential says nothing about the request.
    if (claims.c !== req.action || !this.covers(claims.n, req.streamName)) return { ok: false };
    if (req.accountId !== undefined && req.accountId !== claims.a) return { ok: false };
    if (req.presented !== undefined && previous === undefined) return { ok: false };
    if (claims.i !== undefined && claims.i !== req.clientIp) return { ok: false, reason: 'credential_address', previous };
    const t = this.tokens.get(claims.t);
    if (t === undefined) return this.load(claims).then((loaded) => this.settle(claims, loaded, this.now(), previous));
    return this.settle(claims, t, now, previous);
  }

  private settle(claims: ViewerClaims, t: TokenState | undefined, now: number, previous: string | undefined): CredentialCheck {
    // Unknown here and the store not answering: the credential was granted at most
    // credentialSeconds ago by an instance that decided in full; its signature is what is left.
    if (t !== undefined) {
      const problem = tokenProblem(t, claims, now);
      if (problem) return { ok: false, reason: problem };
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
    // Refreshed past half its life, while the token record is the one it was granted on.
    if (t !== undefined && t.rev === claims.r && (claims.e * 1000 - now) * 2 < this.cfg.credentialSeconds * 1000) {
      const e = Math.min(this.expiry(now, t), claims.m ?? Number.MAX_SAFE_INTEGER);
      if (e > claims.e) out.refresh = this.mint(copyWith(claims, { e }));
    }
    return out;
  }

  private async load(claims: ViewerClaims): Promise<TokenState | undefined> {
    try {
      const r = await this.lookup.timed(this.store.findTokenById(claims.t));
      const now = this.now();
      const t: TokenState =
        r === null || r.accountId !== claims.a
          ? { accountId: claims.a, deleted: true, active: false, tag: '', rev: -1, used: now }
          : stateOf(r, now);
      this.tokens.set(claims.t, t);
      return t;
    } catch {
      return undefined;
    }
  }

  /** A token change made through this instance: its credentials follow at once. */
  tokenChanged(id: number, after: TokenRecord | null): void {
    const t = this.tokens.get(id);
    if (t === undefined) return;
    this.tokens.set(id, after === null ? copyWith(t, { deleted: true, active: false }) : stateOf(after, t.used));
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
      await Promise.all(
        due.slice(i, i + TOUCH_BATCH).map(async ([sid, v]) => {
          const seen = v.seen;
          const s = await this.store.touchSession(HTTP_VIEWER_CALLER, sid, this.cfg.idleSeconds, new Date(seen).toISOString());
          v.touched = seen;
          if (s?.endedReason !== undefined) v.ended = s.endedReason === 'done' || s.endedReason === 'expired' ? 'session_ended' : 'session_terminated';
          // null: not registered yet (queued) or lapsed while presented elsewhere; the next admission after idleSeconds counts anew
        }),
      );
    }
    for (const [id, t] of this.tokens) if (now - t.used > idleMs + this.cfg.credentialSeconds * 1000) this.tokens.delete(id);
  }

  private async followVersions(): Promise<void> {
    const accounts = new Set<string>();
    for (const t of this.tokens.values()) accounts.add(t.accountId);
    for (const a of [...this.versions.keys()]) if (!accounts.has(a)) this.versions.delete(a);
    for (const accountId of accounts) {
      const ver = await this.store.accountVersion(accountId);
      if (this.versions.get(accountId) === ver) continue;
      for (const [id, t] of this.tokens) {
        if (t.accountId !== accountId) continue;
        const r = await this.store.findTokenById(id);
        this.tokens.set(id, r === null || r.accountId !== accountId ? copyWith(t, { deleted: true, active: false }) : stateOf(r, t.used));
      }
      this.versions.set(accountId, ver);
    }
  }
}
