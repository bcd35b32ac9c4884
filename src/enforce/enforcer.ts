// The Enforcer: the one entry point every adapter calls. Resolves the credential (cache, then
// store), asks the pure policy, performs bind on usage atomically, and counts and logs the decision.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { tokenHash, type TokenRecord } from '../domain/tokens.js';
import type { Store } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { decision, type AccessRequest, type Decision } from '../policy/types.js';
import { evaluate, type Credential, type Evaluation, type RuleOutcome } from '../policy/evaluate.js';
import { looksLikeJwt, peekSelfSigned, signatureValid } from '../policy/self-signed.js';
import { TokenLookup, StoreUnavailable } from './lookup.js';
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
}

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
    const ev = evaluate(req, { type: 'token', token }, this.context(req, false));
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

  private context(req: AccessRequest, secured: boolean) {
    let country: string | undefined | null = null;
    return {
      now: this.now(),
      secured,
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
      if (r.cred.type === 'none' && req.action === 'subscribe') {
        // decide() already resolved the account of a token-less request (named or default)
        secured = req.accountId === undefined ? true : await this.lookup.secured(req.accountId, req.streamName);
      }
      const ev = evaluate(req, r.cred, this.context(req, secured));
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
    if (value === undefined || value === '') return { cred: { type: 'none' }, verified: true };
    if (value.length > MAX_TOKEN_LENGTH) return { cred: { type: 'invalid', detail: 'token too long' }, verified: true };
    if (looksLikeJwt(value)) {
      const peek = peekSelfSigned(value);
      if ('problem' in peek) return { cred: { type: 'invalid', detail: peek.problem }, verified: true };
      const cached = fresh ? undefined : this.lookup.peekById(peek.claims.tokenId);
      const optimistic = cached !== undefined && (cached.bindIpsOnUsage ?? 0) > 0;
      const parent = optimistic ? cached : await this.lookup.byIdFresh(peek.claims.tokenId);
      if (!parent) return { cred: { type: 'invalid', detail: 'unknown parent token' }, verified: true };
      if (!(await signatureValid(value, parent.token))) {
        return { cred: { type: 'invalid', detail: 'bad signature' }, verified: !optimistic };
      }
      return { cred: { type: 'jwt', parent, claims: peek.claims }, verified: !optimistic };
    }
    const hash = tokenHash(value);
    const cached = fresh ? undefined : this.lookup.peekByHash(hash);
    if (cached && (cached.bindIpsOnUsage ?? 0) > 0) {
      this.metrics.cacheLookup('hit');
      return { cred: { type: 'token', token: cached }, verified: false, hash };
    }
    const before = this.lookup.stats.hits;
    const token = await this.lookup.byHashFresh(hash);
    this.metrics.cacheLookup(this.lookup.stats.hits > before ? 'hit' : 'miss');
    return { cred: token ? { type: 'token', token } : { type: 'invalid', detail: 'unknown token' }, verified: true, hash };
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
    const ev = evaluate(req, cred, this.context(req, secured));
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
