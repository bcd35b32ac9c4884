// The Enforcer: the one entry point every adapter calls. Resolves the credential (cache, then
// store), asks the pure policy, performs bind on usage atomically, and counts and logs the decision.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { TokenRecord } from '../domain/tokens.js';
import type { Store } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { decision, type AccessRequest, type Decision, type ViewerCountries } from '../policy/types.js';
import { evaluate, readsIpRulesOnRtmp, type Credential, type Evaluation, type RuleOutcome } from '../policy/evaluate.js';
import { applyBind } from '../policy/bind.js';
import { bindDecision } from '../domain/store-rules.js';
import { hasCountryLists } from '../domain/viewer-rules.js';
import { TokenLookup, StoreUnavailable, securedBy, type AccountEntry } from './lookup.js';
import { resolveCredential, resolveNow } from './credential.js';
import type { GeoLookup } from './geo.js';
import { copyWith } from '../domain/objects.js';

export interface DecisionResult extends Decision {
  decisionId: string;
  /** An HTTP viewer session's credential (docs/callers.md#http-viewer-sessions): the Set-Cookie value, and the bare value when sessions.http.queryParam asks for it. */
  viewer?: { setCookie: string; credential?: string };
}

/**
 * What a caller is told when a step after the policy decided it (an admission refused, a running
 * session kept, a viewer credential's problem), and why: the decision log's `rule` and `detail`
 * (docs/api.md#decision-metrics-and-logs). Never a token value or secret.
 */
export interface Answer {
  decision: Decision;
  rule: string;
  detail: string;
}

/**
 * A step after an allow that may refuse it (src/sessions/control.ts); store calls through `timed`.
 * A refusal comes as an Answer naming why. 'token_changed': the token is no longer at the revision
 * decided on (Decision.tokenRev): nothing was registered, and the decision is made again on the
 * current record.
 */
export type Admitter = (d: Decision, timed: <T>(p: Promise<T>) => Promise<T>) => Promise<Decision | Answer | 'token_changed'>;

/** The admission step decide() runs after an allow (SessionControl.begin's AdmissionRun is one). */
export interface AdmissionStep {
  admit?: Admitter;
  /**
   * Whether `admit` would leave this decision as it is without a store step. When it would not,
   * its store step checks the token's revision (SessionLimits.tokenRev), which confirms a decision
   * made on a cached record the account version did not check. Absent: never assumed.
   */
  passes?(d: Decision): boolean;
  /**
   * What the caller is told of the final decision, when that is not the decision itself (a re-ask
   * that keeps a running session; a viewer credential's problem): given the decision and, for a
   * refusal, the rule that failed. Undefined: the decision as it is. Runs before the decision is
   * counted and logged, so the metrics and the log line say what the caller was told.
   */
  answer?(d: Decision, failed: RuleOutcome | undefined): Answer | undefined | Promise<Answer | undefined>;
}

export interface Explanation {
  decision: Decision;
  rules: RuleOutcome[];
}

export interface EnforcerOptions {
  now?: () => number;
  /**
   * The account token-less requests belong to when neither the request nor
   * enforcement.defaultAccountId names one: the account created on first start, read from the
   * store before the enforcer is built.
   */
  defaultAccountId?: string;
}

const MAX_STALE_RETRIES = 3;

/** The refusals of a store that does not answer (docs/api.md#store-trouble), as the decision log names them. */
const STORE_RULE = 'store answered';
const STORE_DOWN = 'the store did not answer within enforcement.storeTimeoutMs (enforcement.onStoreError: deny)';
const CACHE_CANNOT_VOUCH = "the store did not answer, and this instance's caches cannot vouch for the request (enforcement.onStoreError: allow-cached)";
const LIMITS_NEED_STORE = "the store did not answer, and a token's session limits are counted in the store";

/** The check that refused a decision (the last failed rule: an admission's refusal comes after the policy's). */
function failedRule(rules: readonly RuleOutcome[]): RuleOutcome | undefined {
  for (let i = rules.length - 1; i >= 0; i--) if (rules[i].result === 'fail') return rules[i];
  return undefined;
}

/** The token whose rules apply to a resolved credential (a JWT's parent), if any. */
const tokenOf = (c: Credential): TokenRecord | undefined => (c.type === 'token' ? c.token : c.type === 'jwt' ? c.parent : undefined);

/** A viewer whose own (subscribe) token sets no country lists: held to the publish side's and the account's. */
const inheritsCountries = (t: TokenRecord): boolean => t.kind === 'subscribe' && !hasCountryLists(t);

export class Enforcer {
  readonly lookup: TokenLookup;
  /**
   * Addresses this instance saw bound, per token, at the token's revision: only a write that moves
   * the revision unbinds, so while the record is current they are bound still. Lets a decision skip
   * the bind step for them, and allow-cached admit them while the store is down.
   */
  private readonly knownBound = new LRUCache<number, { rev: number; addresses: Set<string> }>({ max: 10000 });
  private readonly now: () => number;
  private readonly defaultAccountId: string | undefined;

  constructor(
    private readonly store: Store,
    private readonly cfg: Config['enforcement'],
    private readonly geo: GeoLookup,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    opts: EnforcerOptions = {},
  ) {
    this.lookup = new TokenLookup(store, cfg);
    this.now = opts.now ?? Date.now;
    this.defaultAccountId = opts.defaultAccountId || undefined;
  }

  /**
   * Decides an access request; never throws for bad tokens or an unreachable store. `step.admit`,
   * when given, runs after an allow and may turn it into a refusal (the session registry's limits,
   * docs/api.md#session-limits); its store calls go through `timed` (enforcement.storeTimeoutMs),
   * and the decision is counted and logged as it answers.
   */
  async decide(request: AccessRequest, adapter: string, step?: AdmissionStep): Promise<DecisionResult> {
    // performance.now(): a double, where hrtime.bigint() allocates a BigInt per reading
    const started = performance.now();
    // A token decides its account; a token-less request belongs to the account it names, else the default.
    const req = request.token ? request : copyWith(request, { accountId: this.accountOf(request) });
    let ev: Evaluation;
    try {
      ev = await this.decideWithStore(req, step);
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
      this.metrics.storeErrors.inc();
      ev = this.cfg.onStoreError === 'allow-cached' ? await this.decideFromCache(req) : this.unavailable(req, STORE_DOWN);
      // limits are counted in the store: without it, a limited token's session cannot be admitted
      if (ev.decision.allowed && ev.decision.limits !== undefined && req.admission === 'session') ev = this.unavailable(req, LIMITS_NEED_STORE);
    }
    const told = step?.answer === undefined ? undefined : await step.answer(ev.decision, failedRule(ev.rules));
    return this.finish(req, adapter, told === undefined ? ev : told, started);
  }

  /**
   * The decision of a request that starts nothing (no admission step), when this instance's memory
   * alone can give it: a plain token whose cached record the store's in-process account version
   * confirms (the embedded store keeps versions in memory; Redis while its version watch vouches
   * for them), no bind to perform but of an address this instance saw bound at the token's
   * revision, and no country rules on its account (those may need the live registry read). The
   * same evaluation, counting and log as decide(), without an await; undefined when memory cannot
   * tell, and the caller awaits decide(). `settles`: whether the decision needs nothing more (an
   * admission step that would leave it as it is); when it says no, nothing is counted and decide()
   * runs the step.
   */
  decideNow(req: AccessRequest, adapter: string, settles?: (d: Decision) => boolean): DecisionResult | undefined {
    if (!req.token) return undefined;
    const started = performance.now();
    const r = resolveNow(req.token, this.lookup);
    if (r === undefined) return undefined;
    const token = tokenOf(r.cred);
    let ipRulesOnRtmp: boolean | undefined;
    if (token !== undefined && readsIpRulesOnRtmp(req, r.cred)) {
      // the account's setting at the version just confirmed, from the cache only
      const account = this.lookup.accountAt(token.accountId, r.ver);
      if (account === undefined) return undefined;
      ipRulesOnRtmp = account.ipRulesOnRtmp;
    }
    if (req.action === 'subscribe' && token !== undefined && inheritsCountries(token)) {
      // as decideWithStore, with the account entry only from the cache at the version just confirmed
      const account = this.lookup.accountAt(token.accountId, r.ver);
      // an account with country rules may need its live registry read: decide() does that
      if (account === undefined || account.geo !== undefined) return undefined;
    }
    let ev = evaluate(req, r.cred, this.context(req, false, undefined, false, ipRulesOnRtmp));
    if (ev.bind) {
      // the record is current, so its revision is: an address bound at that revision is bound still
      const { token, address } = ev.bind;
      if (!this.boundHere(token, address)) return undefined;
      ev = applyBind(ev, 'already', `${address} is bound`);
    }
    if (settles !== undefined && !settles(ev.decision)) return undefined;
    this.lookup.stats.hits++;
    this.metrics.cacheLookup('hit');
    return this.finish(req, adapter, ev, started);
  }

  /**
   * decide(), answered without an await when memory alone can give the decision (decideNow), else
   * the promise of decide(). `run`: the admission step as decide() takes it, and whether that step
   * would leave a decision as it is (then memory may answer).
   */
  decideSoon(req: AccessRequest, adapter: string, run?: AdmissionStep): DecisionResult | Promise<DecisionResult> {
    // an answer step may need the store (a re-ask's token change): decide() runs it
    if (run?.answer !== undefined) return this.decide(req, adapter, run);
    return this.decideNow(req, adapter, run?.passes) ?? this.decide(req, adapter, run);
  }

  /**
   * A decision made: its id, counted and logged as the caller is told it — the policy's decision,
   * or the Answer a step after it gave (docs/api.md#decision-metrics-and-logs).
   */
  private finish(req: AccessRequest, adapter: string, ev: Evaluation | Answer, started: number): DecisionResult {
    const seconds = (performance.now() - started) / 1000;
    const d: DecisionResult = copyWith(ev.decision, { decisionId: randomUUID() });
    const result = d.allowed ? 'allow' : 'deny';
    this.metrics.decided(req.action, adapter, result, d.reason, seconds);
    if (this.logger.isLevelEnabled('info')) {
      // Why, for the operator: the step's answer, else a refusal's failed check (never a token value or secret).
      const why = 'rules' in ev ? (d.allowed ? undefined : failedRule(ev.rules)) : ev;
      this.logger.info(
        {
          decisionId: d.decisionId,
          adapter,
          action: req.action,
          allowed: d.allowed,
          status: d.status,
          reason: d.reason,
          rule: why?.rule,
          detail: why?.detail,
          tokenId: d.tokenId,
          accountId: d.accountId,
          streamName: req.streamName,
          protocol: req.protocol,
          clientIp: req.clientIp,
          ms: seconds * 1000,
        },
        'decision',
      );
    }
    return d;
  }

  /** Every rule's outcome for a probe of one token, binding nothing (the check endpoint). */
  async explain(token: TokenRecord, req: AccessRequest): Promise<Explanation> {
    let viewer: ViewerCountries | undefined;
    const cred: Credential = { type: 'token', token };
    if (req.action === 'subscribe' && inheritsCountries(token)) {
      viewer = await this.lookup.viewerCountries(await this.lookup.account(token.accountId), req.streamName, this.now());
    }
    const ipRulesOnRtmp = readsIpRulesOnRtmp(req, cred) ? (await this.lookup.account(token.accountId)).ipRulesOnRtmp : undefined;
    const ev = evaluate(req, cred, this.context(req, false, viewer, true, ipRulesOnRtmp));
    if (ev.bind === undefined) return { decision: ev.decision, rules: ev.rules };
    const { address } = ev.bind;
    const bound = await this.store.boundAddresses(token.accountId, token.id);
    const limit = token.bindIpsOnUsage ?? 0;
    const outcome = bindDecision(new Set(bound), address, limit);
    const settled = applyBind(
      ev,
      outcome,
      outcome === 'already'
        ? `${address} is bound`
        : outcome === 'bound'
          ? `would bind ${address} (${bound.length} of ${limit} bound)`
          : `all ${limit} slot(s) are bound to other addresses`,
    );
    return { decision: settled.decision, rules: settled.rules };
  }

  private context(req: AccessRequest, secured: boolean, viewerCountries: ViewerCountries | undefined, explain = false, ipRulesOnRtmp?: boolean) {
    let country: string | undefined | null = null;
    return {
      explain,
      now: this.now(),
      secured,
      viewerCountries,
      rtmpIpFilters: this.cfg.rtmpIpFilters,
      ipRulesOnRtmp,
      rulesOf: this.lookup.rulesOf,
      countryOf: () => {
        if (country === null) country = req.country ?? (req.clientIp ? this.geo.countryOf(req.clientIp) : undefined);
        return country;
      },
    };
  }

  /** The configured default account, else the one created on first start (so a fresh install has open streams). */
  private accountOf(req: AccessRequest): string | undefined {
    return req.accountId || this.cfg.defaultAccountId || this.defaultAccountId || undefined;
  }

  /**
   * The decision with the store, and its admission step after an allow. A cached record taken
   * unchecked (bind on usage; a token with limits whose admission checks its revision) decides
   * only when the store step that follows confirms it; a step that finds the token changed makes
   * the decision again on a fresh read.
   */
  private async decideWithStore(req: AccessRequest, step?: AdmissionStep): Promise<Evaluation> {
    let reading: 'optimistic' | 'fresh' = 'optimistic';
    const admit = step?.admit;
    // an admission whose store step checks the token's revision can confirm an unchecked limited token
    const passes = admit !== undefined && req.admission === 'session' ? step?.passes : undefined;
    for (let attempt = 0; attempt <= MAX_STALE_RETRIES; attempt++) {
      const r = await resolveCredential(req.token, reading, this.lookup, this.metrics, passes !== undefined);
      let ipRulesOnRtmp: boolean | undefined;
      const owner = tokenOf(r.cred);
      if (owner !== undefined && readsIpRulesOnRtmp(req, r.cred)) {
        // The account's setting at the version read with the token. An unchecked cached copy (bind
        // on usage, session limits) may only apply the rules on it: lifting them on a stale entry
        // could widen access, and the store step after it checks the token's revision, not this.
        const cached = this.lookup.accountAt(owner.accountId, r.ver);
        if (!r.verified && cached?.ipRulesOnRtmp !== true) {
          reading = 'fresh';
          continue;
        }
        ipRulesOnRtmp = (cached ?? (await this.lookup.loadAccountAt(owner.accountId, r.ver))).ipRulesOnRtmp;
      }
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
            reading = 'fresh';
            continue;
          }
          if (account === undefined) account = await this.lookup.loadAccountAt(token.accountId, r.ver);
        }
        if (account !== undefined && account.geo !== undefined) {
          const v = this.lookup.viewerCountries(account, req.streamName, this.now());
          viewer = v instanceof Promise ? await v : v;
        }
      }
      let ev = evaluate(req, r.cred, this.context(req, secured, viewer, false, ipRulesOnRtmp));
      const admits = ev.decision.allowed && admit !== undefined;
      const confirms = ev.bind !== undefined || (admits && passes !== undefined && !passes(ev.decision));
      if (!r.verified && (!ev.decision.allowed || !confirms)) {
        // decided on an unchecked cached copy: only a store step that checks the token (a bind,
        // a revision-checked admission) may confirm it
        reading = 'fresh';
        continue;
      }
      if (ev.bind) {
        const { token, address } = ev.bind;
        const result = await this.lookup.timed(this.store.bindAddress(token, address));
        if (result === 'stale') {
          this.lookup.forget(token, r.hash); // the token changed since we read it
          reading = 'fresh';
          continue;
        }
        if (result === 'full') return applyBind(ev, result, 'every slot is bound to another address');
        this.remember(token, address);
        ev = applyBind(ev, result, result === 'bound' ? `bound ${address}` : `${address} is bound`);
      }
      if (!ev.decision.allowed || admit === undefined) return ev;
      const admitted = await admit(ev.decision, (p) => this.lookup.timed(p));
      if (admitted === 'token_changed') {
        const token = tokenOf(r.cred);
        if (token !== undefined) this.lookup.forget(token, r.hash); // changed since we read it
        reading = 'fresh';
        continue;
      }
      if (!('rule' in admitted)) return copyWith(ev, { decision: admitted });
      // the admission's own refusal, with its rule and why (session limits, publish conflict, a cut session)
      const rule: RuleOutcome = { rule: admitted.rule, reason: admitted.decision.reason, result: admitted.decision.allowed ? 'pass' : 'fail', detail: admitted.detail };
      return { decision: admitted.decision, rules: ev.rules.concat(rule) };
    }
    throw new StoreUnavailable(new Error('token kept changing while binding or admitting'));
  }

  /** allow-cached: decide from what this instance holds; anything it cannot vouch for is denied. */
  private async decideFromCache(req: AccessRequest): Promise<Evaluation> {
    const r = await resolveCredential(req.token, 'cache', this.lookup);
    if (r === undefined) return this.unavailable(req, CACHE_CANNOT_VOUCH);
    const cred = r.cred;
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
        if (v === null) return this.unavailable(req, CACHE_CANNOT_VOUCH);
        viewer = v;
      }
    }
    // The account's setting as this instance holds it; unknown, the address rules apply (the narrower answer).
    const owner = tokenOf(cred);
    const ipRulesOnRtmp = owner !== undefined && readsIpRulesOnRtmp(req, cred) ? this.lookup.cachedAccount(owner.accountId)?.ipRulesOnRtmp : undefined;
    const ev = evaluate(req, cred, this.context(req, secured, viewer, false, ipRulesOnRtmp));
    if (!ev.bind) return ev;
    // Only an address this instance saw bound is vouched for; the store alone knows the others.
    return this.boundHere(ev.bind.token, ev.bind.address) ? applyBind(ev, 'already', 'bound (cached)') : this.unavailable(req, CACHE_CANNOT_VOUCH);
  }

  private unavailable(req: AccessRequest, detail: string): Evaluation {
    const rule: RuleOutcome = { rule: STORE_RULE, reason: 'store_unavailable', result: 'fail', detail };
    return { decision: decision('store_unavailable', { streamName: req.streamName, accountId: req.accountId }), rules: [rule] };
  }

  private remember(token: TokenRecord, address: string): void {
    let e = this.knownBound.get(token.id);
    if (e === undefined || e.rev !== token.rev) {
      e = { rev: token.rev, addresses: new Set() };
      this.knownBound.set(token.id, e);
    }
    if (e.addresses.size < 1000) e.addresses.add(address);
  }

  /** Whether this instance saw `address` bound to the token at its revision. */
  private boundHere(token: TokenRecord, address: string): boolean {
    const e = this.knownBound.get(token.id);
    return e !== undefined && e.rev === token.rev && e.addresses.has(address);
  }
}
