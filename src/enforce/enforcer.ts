// The Enforcer: the one entry point every adapter calls. Resolves the credential (cache, then
// store), asks the pure policy, performs bind on usage atomically, and counts and logs the decision.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { tokenHash, type TokenRecord } from '../domain/tokens.js';
import type { Store } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { decision, type AccessRequest, type Decision, type ViewerCountries } from '../policy/types.js';
import { evaluate, type Credential, type Evaluation, type RuleOutcome } from '../policy/evaluate.js';
import { looksLikeJwt, peekSelfSigned, signatureValid } from '../policy/self-signed.js';
import { hasCountryLists } from '../domain/viewer-rules.js';
import { TokenLookup, StoreUnavailable, securedBy, type AccountEntry } from './lookup.js';
import type { GeoLookup } from './geo.js';

export interface DecisionResult extends Decision {
  decisionId: string;
}

export interface Explanation {
  decision: Decision;
  rules: RuleOutcome[];
}

const MAX_TOKEN_LENGTH = 8192;
const MAX_STALE_RETRIES = 3;

interface Resolved {
  cred: Credential;
  /** False when the record came from the cache without the version check (optimistic path). */
  verified: boolean;
  hash?: string;
  /** The account version the token's record is current at (read by this decision when verified). */
  ver: number;
}

/** The token whose rules apply to a resolved credential (a JWT's parent), if any. */
const tokenOf = (c: Credential): TokenRecord | undefined => (c.type === 'token' ? c.token : c.type === 'jwt' ? c.parent : undefined);

/** A viewer whose own (subscribe) token sets no country lists: held to the publish side's and the account's. */
const inheritsCountries = (t: TokenRecord): boolean => t.kind === 'subscribe' && !hasCountryLists(t);

export class Enforcer {
  readonly lookup: TokenLookup;
  /** Addresses this instance saw bound, per token: lets allow-cached admit them while the store is down. */
  private readonly knownBound = new LRUCache<number, Set<string>>({ max: 10000 });

  constructor(
    private readonly store: Store,
    private readonly cfg: Config['enforcement'],
    private readonly geo: GeoLookup,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.lookup = new TokenLookup(store, cfg);
  }

  /** Decides an access request. Never throws for bad tokens or an unreachable store. */
  async decide(request: AccessRequest, adapter: string): Promise<DecisionResult> {
    const started = process.hrtime.bigint();
    // A token decides its account; a token-less request belongs to the account it names, else the default.
    const req = request.token ? request : { ...request, accountId: this.accountOf(request) };
    let ev: Evaluation;
    try {
      ev = await this.decideWithStore(req);
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
      this.metrics.storeErrors.inc();
      ev = this.cfg.onStoreError === 'allow-cached' ? await this.decideFromCache(req) : this.unavailable(req);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const d: DecisionResult = { ...ev.decision, decisionId: randomUUID() };
    const result = d.allowed ? 'allow' : 'deny';
    this.metrics.decided(req.action, adapter, result, d.reason, seconds);
    if (this.logger.isLevelEnabled('info')) this.logger.info(
      {
        decisionId: d.decisionId,
        adapter,
        action: req.action,
        allowed: d.allowed,
        reason: d.reason,
        // Why, for the operator: the failed check's detail (never a token value or secret).
        detail: d.allowed ? undefined : ev.rules.find((r) => r.result === 'fail')?.detail,
        tokenId: d.tokenId,
        accountId: d.accountId,
        streamName: req.streamName,
        protocol: req.protocol,
        clientIp: req.clientIp,
        ms: seconds * 1000,
      },
      'decision',
    );
    return d;
  }

  /** Every rule's outcome for a probe of one token, binding nothing (the check endpoint). */
  async explain(token: TokenRecord, req: AccessRequest): Promise<Explanation> {
    let viewer: ViewerCountries | undefined;
    if (req.action === 'subscribe' && inheritsCountries(token)) {
      viewer = await this.lookup.viewerCountries(await this.lookup.account(token.accountId), req.streamName, this.now());
    }
    const ev = evaluate(req, { type: 'token', token }, this.context(req, false, viewer));
    const bindRule = ev.rules.find((r) => r.result === 'pending');
    if (bindRule && ev.bind) {
      const bound = await this.store.boundAddresses(token.accountId, token.id);
      const limit = token.bindIpsOnUsage ?? 0;
      if (bound.includes(ev.bind.address)) Object.assign(bindRule, { result: 'pass', detail: `${ev.bind.address} is bound` });
      else if (bound.length < limit) Object.assign(bindRule, { result: 'pass', detail: `would bind ${ev.bind.address} (${bound.length} of ${limit} bound)` });
      else {
        Object.assign(bindRule, { result: 'fail', detail: `all ${limit} slot(s) are bound to other addresses` });
        return { decision: decision('ip_not_allowed', fieldsOf(ev.decision)), rules: ev.rules };
      }
    }
    return { decision: ev.decision, rules: ev.rules };
  }

  private context(req: AccessRequest, secured: boolean, viewerCountries: ViewerCountries | undefined) {
    let country: string | undefined | null = null;
    return {
      now: this.now(),
      secured,
      viewerCountries,
      rtmpIpFilters: this.cfg.rtmpIpFilters,
      rulesOf: this.lookup.rulesOf,
      countryOf: () => {
        if (country === null) country = req.country ?? (req.clientIp ? this.geo.countryOf(req.clientIp) : undefined);
        return country;
      },
    };
  }

  /** The configured default account, else the one created on first start (so a fresh install has open streams). */
  defaultAccountId: string | undefined;

  private accountOf(req: AccessRequest): string | undefined {
    return req.accountId || this.cfg.defaultAccountId || this.defaultAccountId || undefined;
  }

  private async decideWithStore(req: AccessRequest): Promise<Evaluation> {
    let fresh = false;
    for (let attempt = 0; attempt <= MAX_STALE_RETRIES; attempt++) {
      const r = await this.resolve(req, fresh);
      let secured = false;
      let viewer: ViewerCountries | undefined;
      if (req.action === 'subscribe') {
        let account: AccountEntry | undefined;
        const token = tokenOf(r.cred);
        if (r.cred.type === 'none') {
          // decide() already resolved the account of a token-less request (named or default)
          if (req.accountId === undefined) secured = true;
          else {
            account = await this.lookup.account(req.accountId);
            secured = securedBy(account, req.streamName);
            if (secured) account = undefined; // refused for want of a token: no country rule runs
          }
        } else if (token !== undefined && inheritsCountries(token)) {
          // The version this decision read with the token tells whether the cached account entry is current.
          account = this.lookup.accountAt(token.accountId, r.ver);
          if (!r.verified && (account === undefined || account.geo !== undefined)) {
            // An unchecked cached copy (bind on usage) decides alone only while its account is known
            // to have no country rules; otherwise read the version first.
            fresh = true;
            continue;
          }
          if (account === undefined) account = await this.lookup.loadAccountAt(token.accountId, r.ver);
        }
        if (account !== undefined && account.geo !== undefined) {
          const v = this.lookup.viewerCountries(account, req.streamName, this.now());
          viewer = v instanceof Promise ? await v : v;
        }
      }
      const ev = evaluate(req, r.cred, this.context(req, secured, viewer));
      if (!r.verified && (!ev.decision.allowed || !ev.bind)) {
        // decided on an unchecked cached copy: only a bind (which checks the version) may confirm it
        fresh = true;
        continue;
      }
      if (!ev.bind) return ev;
      const result = await this.lookup.timed(this.store.bindAddress(ev.bind.token, ev.bind.address));
      const rule = ev.rules.find((x) => x.result === 'pending')!;
      if (result === 'bound' || result === 'already') {
        Object.assign(rule, { result: 'pass', detail: result === 'bound' ? `bound ${ev.bind.address}` : `${ev.bind.address} is bound` });
        this.remember(ev.bind.token.id, ev.bind.address);
        return ev;
      }
      if (result === 'full') {
        Object.assign(rule, { result: 'fail', detail: 'every slot is bound to another address' });
        return { ...ev, decision: decision('ip_not_allowed', fieldsOf(ev.decision)), bind: undefined };
      }
      this.lookup.forget(ev.bind.token, r.hash); // 'stale': the token changed since we read it
      fresh = true;
    }
    throw new StoreUnavailable(new Error('token kept changing while binding'));
  }

  private async resolve(req: AccessRequest, fresh: boolean): Promise<Resolved> {
    const value = req.token;
    if (value === undefined || value === '') return { cred: { type: 'none' }, verified: true, ver: 0 };
    if (value.length > MAX_TOKEN_LENGTH) return { cred: { type: 'invalid', detail: 'token too long' }, verified: true, ver: 0 };
    if (looksLikeJwt(value)) {
      const peek = peekSelfSigned(value);
      if ('problem' in peek) return { cred: { type: 'invalid', detail: peek.problem }, verified: true, ver: 0 };
      const cached = fresh ? undefined : this.lookup.peekEntryById(peek.claims.tokenId);
      const optimistic = cached !== undefined && (cached.token.bindIpsOnUsage ?? 0) > 0;
      const entry = optimistic ? cached : await this.lookup.entryById(peek.claims.tokenId);
      if (!entry) return { cred: { type: 'invalid', detail: 'unknown parent token' }, verified: true, ver: 0 };
      const parent = entry.token;
      if (!(await signatureValid(value, parent.token))) {
        return { cred: { type: 'invalid', detail: 'bad signature' }, verified: !optimistic, ver: entry.ver };
      }
      return { cred: { type: 'jwt', parent, claims: peek.claims }, verified: !optimistic, ver: entry.ver };
    }
    const hash = tokenHash(value);
    const cached = fresh ? undefined : this.lookup.peekEntryByHash(hash);
    if (cached && (cached.token.bindIpsOnUsage ?? 0) > 0) {
      this.metrics.cacheLookup('hit');
      return { cred: { type: 'token', token: cached.token }, verified: false, hash, ver: cached.ver };
    }
    const before = this.lookup.stats.hits;
    const entry = await this.lookup.entryByHash(hash);
    this.metrics.cacheLookup(this.lookup.stats.hits > before ? 'hit' : 'miss');
    return entry
      ? { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver }
      : { cred: { type: 'invalid', detail: 'unknown token' }, verified: true, hash, ver: 0 };
  }

  /** allow-cached: decide from what this instance holds; anything it cannot vouch for is denied. */
  private async decideFromCache(req: AccessRequest): Promise<Evaluation> {
    let cred: Credential = { type: 'none' };
    if (req.token) {
      if (looksLikeJwt(req.token)) {
        const peek = peekSelfSigned(req.token);
        const parent = 'problem' in peek ? undefined : this.lookup.peekById(peek.claims.tokenId);
        if (!parent || 'problem' in peek) return this.unavailable(req);
        cred = (await signatureValid(req.token, parent.token))
          ? { type: 'jwt', parent, claims: peek.claims }
          : { type: 'invalid', detail: 'bad signature' };
      } else {
        const t = this.lookup.peekByHash(tokenHash(req.token));
        if (!t) return this.unavailable(req);
        cred = { type: 'token', token: t };
      }
    }
    const secured =
      cred.type === 'none' && req.action === 'subscribe' ? req.accountId === undefined || this.lookup.securedCached(req.accountId, req.streamName) : false;
    let viewer: ViewerCountries | undefined;
    if (req.action === 'subscribe' && !secured) {
      // The country lists from this instance's account entry; when it cannot tell them, nothing is admitted.
      const token = tokenOf(cred);
      const accountId = cred.type === 'none' ? req.accountId : token !== undefined && inheritsCountries(token) ? token.accountId : undefined;
      if (accountId !== undefined) {
        const account = this.lookup.cachedAccount(accountId);
        const v = account === undefined ? null : this.lookup.viewerCountriesCached(account, req.streamName, this.now());
        if (v === null) return this.unavailable(req);
        viewer = v;
      }
    }
    const ev = evaluate(req, cred, this.context(req, secured, viewer));
    if (!ev.bind) return ev;
    if (this.knownBound.get(ev.bind.token.id)?.has(ev.bind.address)) {
      Object.assign(ev.rules.find((x) => x.result === 'pending')!, { result: 'pass', detail: 'bound (cached)' });
      return ev;
    }
    return this.unavailable(req);
  }

  private unavailable(req: AccessRequest): Evaluation {
    return { decision: decision('store_unavailable', { streamName: req.streamName, accountId: req.accountId }), rules: [] };
  }

  private remember(tokenId: number, address: string): void {
    let s = this.knownBound.get(tokenId);
    if (!s) this.knownBound.set(tokenId, (s = new Set()));
    if (s.size < 1000) s.add(address);
  }
}

function fieldsOf(d: Decision): Omit<Decision, 'allowed' | 'status' | 'reason' | 'message'> {
  const { allowed: _a, status: _s, reason: _r, message: _m, ...rest } = d;
  return rest;
}
