// The admission pipeline: the one way a request is decided, for every caller (media servers and
// proxies through src/admission/context.ts, HTTP viewers, re-asks, the director, the check
// endpoint). One entry, Enforcer.admit, runs the steps of STEPS in order — resolve the credential,
// read what the policy needs about the account, evaluate, bind on usage, admit the session, tell,
// count and log, settle — in the column of its mode:
// - memory: this instance's memory alone, without an await, or nothing (`undefined`) when memory
//   cannot vouch for the decision;
// - store: the caches checked against the store, and the store steps (bind, session admission);
// - cache: the store does not answer and enforcement.onStoreError is allow-cached: what this
//   instance's caches vouch for, `store_unavailable` for the rest;
// - explain: the check endpoint's probe of one token: every rule's outcome, binding nothing.
// 'soon' asks memory first and the store when memory cannot tell (what callers use).
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { TokenRecord } from '../domain/tokens.js';
import type { Store } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { decision, type AccessRequest, type Decision, type ViewerCountries } from '../policy/types.js';
import { evaluate, readsIpRulesOnRtmp, ruleToken, type EvalContext, type Evaluation, type RuleOutcome } from '../policy/evaluate.js';
import type { CompiledRules } from '../policy/rules.js';
import { applyBind } from '../policy/bind.js';
import { bindDecision } from '../domain/store-rules.js';
import { hasCountryLists } from '../domain/viewer-rules.js';
import { copyWith } from '../domain/objects.js';
import { TokenLookup, StoreUnavailable, securedBy, type AccountEntry } from '../enforce/lookup.js';
import type { GeoLookup } from '../enforce/geo.js';
import type { AdmissionRun, SessionControl } from '../sessions/control.js';
import type { Admission, AdmissionStep, Admitter, Answer, DecisionResult } from '../contracts/admission.js';
import { resolveCredential, resolveNow, type CredentialSources, type IssuerVerification, type Reading, type Resolved, type SignedVerification } from './credential.js';
import type { DecisionHistory } from '../history/recorder.js';
import type { SharingMonitor } from '../sharing/monitor.js';
import { decisionIdAt, type DecisionEntry } from '../history/entry.js';

export type { Admission, AdmissionStep, Admitter, Answer, DecisionResult } from '../contracts/admission.js';

/** The columns of STEPS. */
export type Mode = 'memory' | 'store' | 'cache' | 'explain';

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
  /** Session control: starts the sessions admissions name, and re-asks them. Without it, admit() takes no Admission. */
  sessions?: SessionControl;
  /** How credential issuers' JWTs are verified (docs/api.md#credential-issuers). Without it, no issuer JWT is accepted. */
  issuers?: Omit<IssuerVerification, 'now'>;
  /** How signed URLs, cookies and CATs are verified (docs/api.md#signed-url-issuers). Without it, none is accepted. */
  signed?: Omit<SignedVerification, 'now' | 'countryOf'>;
  /** Where decisions are kept (docs/api.md#decision-history). Without it, none is. */
  history?: DecisionHistory;
  /** Token-sharing detection (docs/api.md#token-sharing), offered every allowed use of a token. Without it, none is. */
  sharing?: SharingMonitor;
}

const MAX_STALE_RETRIES = 3;

/** The refusals of a store that does not answer (docs/api.md#store-trouble), as the decision log names them. */
const STORE_RULE = 'store answered';
const STORE_DOWN = 'the store did not answer within enforcement.storeTimeoutMs (enforcement.onStoreError: deny)';
const CACHE_CANNOT_VOUCH = "the store did not answer, and this instance's caches cannot vouch for the request (enforcement.onStoreError: allow-cached)";
const LIMITS_NEED_STORE = "the store did not answer, and a token's session limits are counted in the store";

/** What the enforcer's parts a step reads: built once, at construction. */
interface Parts {
  store: Store;
  cfg: Config['enforcement'];
  geo: GeoLookup;
  metrics: Metrics;
  logger: Logger;
  lookup: TokenLookup;
  /** What the credential step reads: the lookup, and issuer verification. */
  sources: CredentialSources;
  /** lookup.timed, bound once: the admission step's store calls go through it. */
  timed: <T>(q: Promise<T>) => Promise<T>;
  now: () => number;
  defaultAccountId: string | undefined;
  /**
   * Addresses this instance saw bound, per token, at the token's revision: only a write that moves
   * the revision unbinds, so while the record is current they are bound still. Lets a decision skip
   * the bind step for them, and allow-cached admit them while the store is down.
   */
  knownBound: LRUCache<number, { rev: number; addresses: Set<string> }>;
  /** The decision history: asked, after each decision, whether to keep it. */
  history: DecisionHistory | undefined;
  /** Token-sharing detection: offered each allowed use of a token. */
  sharing: SharingMonitor | undefined;
}

/**
 * One request's way through the steps: what each step found, for the next. It is also the
 * evaluation context evaluate() reads (the client's country looked up once, when a rule asks).
 */
class Run implements EvalContext {
  // what evaluate() reads; the account step sets secured, viewerCountries and ipRulesOnRtmp each time it runs
  explain = false;
  now = 0;
  secured = false;
  viewerCountries: ViewerCountries | undefined = undefined;
  readonly rtmpIpFilters: 'enforce' | 'ignore';
  ipRulesOnRtmp: boolean | undefined = undefined;
  readonly rulesOf: (t: TokenRecord) => CompiledRules;
  /** How the credential step reads token records: 'fresh' after a store step found the record stale. */
  reading: Reading = 'optimistic';
  /** The resolved credential (the credential step). */
  r: Resolved | undefined = undefined;
  /** The evaluation, settled by the steps after evaluate. */
  ev: Evaluation | undefined = undefined;
  /** The caller's answer when a step after the policy gave one (AdmissionStep.answer). */
  told: Answer | undefined = undefined;
  /** The decision as counted and logged. */
  result: DecisionResult | undefined = undefined;
  /** The token the check endpoint probes (explain). */
  record: TokenRecord | undefined = undefined;
  private country: string | undefined | null = null;

  constructor(
    private readonly p: Parts,
    public req: AccessRequest,
    readonly adapter: string,
    /** The step after an allow: the session run, or a caller's own (a re-ask's, a viewer credential's). */
    readonly step: AdmissionStep | undefined,
    /** The session this admission starts, settled after the decision. */
    readonly run: AdmissionRun | undefined,
    readonly started: number,
  ) {
    this.rtmpIpFilters = p.cfg.rtmpIpFilters;
    this.rulesOf = p.lookup.rulesOf;
  }

  countryOf(): string | undefined {
    if (this.country === null) this.country = this.req.country ?? (this.req.clientIp ? this.p.geo.countryOf(this.req.clientIp) : undefined);
    return this.country;
  }

  /** The evaluation's decision (set from the evaluate step on). */
  get decided(): Evaluation {
    return this.ev!;
  }
}

/**
 * What a step tells the runner:
 * - 'next': go on;
 * - 'again': the decision is made again from the first step on a fresh read (a store step found
 *   the token changed; store mode only);
 * - 'decline': memory cannot vouch: the memory run gives nothing (memory mode only);
 * - 'decided': the evaluation is final: the deciding steps left are skipped.
 */
type Next = 'next' | 'again' | 'decline' | 'decided';
/** A memory step: never awaits. */
type NowStep = (p: Parts, x: Run) => Next;
type AnyStep = (p: Parts, x: Run) => Next | Promise<Next>;

/** The token whose rules apply to a resolved credential (a JWT's parent, an issuer JWT's policy token), if any. */
const tokenOf = ruleToken;

/** A viewer whose own (subscribe) token sets no country lists: held to the publish side's and the account's. */
const inheritsCountries = (t: TokenRecord): boolean => t.kind === 'subscribe' && !hasCountryLists(t);

/** The check that refused a decision (the last failed rule: an admission's refusal comes after the policy's). */
function failedRule(rules: readonly RuleOutcome[]): RuleOutcome | undefined {
  for (let i = rules.length - 1; i >= 0; i--) if (rules[i].result === 'fail') return rules[i];
  return undefined;
}

function unavailable(req: AccessRequest, detail: string): Evaluation {
  const rule: RuleOutcome = { rule: STORE_RULE, reason: 'store_unavailable', result: 'fail', detail };
  return { decision: decision('store_unavailable', { streamName: req.streamName, accountId: req.accountId }), rules: [rule] };
}

function remember(p: Parts, token: TokenRecord, address: string): void {
  let e = p.knownBound.get(token.id);
  if (e === undefined || e.rev !== token.rev) {
    e = { rev: token.rev, addresses: new Set() };
    p.knownBound.set(token.id, e);
  }
  if (e.addresses.size < 1000) e.addresses.add(address);
}

/** Whether this instance saw `address` bound to the token at its revision. */
function boundHere(p: Parts, token: TokenRecord, address: string): boolean {
  const e = p.knownBound.get(token.id);
  return e !== undefined && e.rev === token.rev && e.addresses.has(address);
}

/** A token decides its account; a token-less request belongs to the account it names, else the configured default, else the one created on first start. */
function withAccount(p: Parts, x: Run): void {
  if (!x.req.token) x.req = copyWith(x.req, { accountId: x.req.accountId || p.cfg.defaultAccountId || p.defaultAccountId || undefined });
}

// ---- resolve credential (src/admission/credential.ts: one resolver per kind of credential)

function credentialFromMemory(p: Parts, x: Run): Next {
  x.r = resolveNow(x.req.token, p.sources, x.req.signed);
  return x.r === undefined ? 'decline' : 'next';
}

async function credentialWithStore(p: Parts, x: Run): Promise<Next> {
  withAccount(p, x);
  // an admission whose store step checks the token's revision can confirm an unchecked limited token
  const revChecked = x.step?.admit !== undefined && x.req.admission === 'session' && x.step.passes !== undefined;
  x.r = await resolveCredential(x.req.token, x.reading, p.sources, p.metrics, revChecked, x.req.signed !== undefined ? { value: x.req.signed } : undefined);
  return 'next';
}

async function credentialFromCache(p: Parts, x: Run): Promise<Next> {
  withAccount(p, x);
  x.r = await resolveCredential(x.req.token, 'cache', p.sources, undefined, false, x.req.signed !== undefined ? { value: x.req.signed } : undefined);
  if (x.r !== undefined) return 'next';
  x.ev = unavailable(x.req, CACHE_CANNOT_VOUCH);
  return 'decided';
}

/** The probed token's record, or (a probe of a presented credential: an issuer's JWT) the credential read fresh. */
function checkedRecord(p: Parts, x: Run): Next | Promise<Next> {
  if (x.record === undefined) {
    return resolveCredential(x.req.token, 'fresh', p.sources, undefined, false, x.req.signed !== undefined ? { value: x.req.signed, probe: true } : undefined).then((r) => {
      x.r = r;
      return 'next';
    });
  }
  x.r = { cred: { type: 'token', token: x.record }, verified: true, ver: 0 };
  return 'next';
}

// ---- account context: the account's ipRulesOnRtmp, the stream's security, the viewer's country lists

function accountFromMemory(p: Parts, x: Run): Next {
  const { req } = x;
  const r = x.r!;
  const token = tokenOf(r.cred);
  x.secured = false;
  x.viewerCountries = undefined;
  x.ipRulesOnRtmp = undefined;
  if (token === undefined) return 'next';
  if (readsIpRulesOnRtmp(req, r.cred)) {
    // the account's setting at the version just confirmed, from the cache only
    const account = p.lookup.accountAt(token.accountId, r.ver);
    if (account === undefined) return 'decline';
    x.ipRulesOnRtmp = account.ipRulesOnRtmp;
  }
  if (req.action === 'subscribe' && inheritsCountries(token)) {
    // with the account entry only from the cache at the version just confirmed
    const account = p.lookup.accountAt(token.accountId, r.ver);
    // an account with country rules may need its live registry read: the store mode does that
    if (account === undefined || account.geo !== undefined) return 'decline';
  }
  return 'next';
}

// The store column's steps return a promise only when they have something to wait for: an await of
// a step that had nothing to do costs a decision a turn of the microtask queue.

function accountWithStore(p: Parts, x: Run): Next | Promise<Next> {
  const { req } = x;
  const r = x.r!;
  x.secured = false;
  x.viewerCountries = undefined;
  x.ipRulesOnRtmp = undefined;
  const owner = tokenOf(r.cred);
  if (owner !== undefined && readsIpRulesOnRtmp(req, r.cred)) {
    // The account's setting at the version read with the token. An unchecked cached copy (bind
    // on usage, session limits) may only apply the rules on it: lifting them on a stale entry
    // could widen access, and the store step after it checks the token's revision, not this.
    const cached = p.lookup.accountAt(owner.accountId, r.ver);
    if (!r.verified && cached?.ipRulesOnRtmp !== true) return 'again';
    if (cached === undefined) {
      return p.lookup.loadAccountAt(owner.accountId, r.ver).then((account) => {
        x.ipRulesOnRtmp = account.ipRulesOnRtmp;
        return viewerContext(p, x, owner);
      });
    }
    x.ipRulesOnRtmp = cached.ipRulesOnRtmp;
  }
  return viewerContext(p, x, owner);
}

/** A subscribe's part of the account context: the stream's security (no token), the viewer's country lists. */
function viewerContext(p: Parts, x: Run, owner: TokenRecord | undefined): Next | Promise<Next> {
  const { req } = x;
  const r = x.r!;
  if (req.action !== 'subscribe') return 'next';
  if (r.cred.type === 'none') {
    // the credential step already resolved the account of a token-less request (named or default)
    if (req.accountId === undefined) {
      x.secured = true;
      return 'next';
    }
    return p.lookup.account(req.accountId).then((account) => {
      x.secured = securedBy(account, req.streamName);
      // refused for want of a token: no country rule runs
      return x.secured ? 'next' : countriesOf(p, x, account);
    });
  }
  if (owner === undefined || !inheritsCountries(owner)) return 'next';
  // The version this decision read with the token tells whether the cached account entry is current.
  const account = p.lookup.accountAt(owner.accountId, r.ver);
  // An unchecked cached copy (bind on usage) decides alone only while its account is known to
  // have no country rules; otherwise read the version first.
  if (!r.verified && (account === undefined || account.geo !== undefined)) return 'again';
  if (account === undefined) return p.lookup.loadAccountAt(owner.accountId, r.ver).then((loaded) => countriesOf(p, x, loaded));
  return countriesOf(p, x, account);
}

/** The viewer's country lists under an account with country rules (the live registry read when they need it). */
function countriesOf(p: Parts, x: Run, account: AccountEntry): Next | Promise<Next> {
  if (account.geo === undefined) return 'next';
  const v = p.lookup.viewerCountries(account, x.req.streamName, p.now());
  if (v instanceof Promise) {
    return v.then((countries) => {
      x.viewerCountries = countries;
      return 'next';
    });
  }
  x.viewerCountries = v;
  return 'next';
}

function accountFromCache(p: Parts, x: Run): Next {
  const { req } = x;
  const cred = x.r!.cred;
  x.secured = cred.type === 'none' && req.action === 'subscribe' ? req.accountId === undefined || p.lookup.securedCached(req.accountId, req.streamName) : false;
  x.viewerCountries = undefined;
  const token = tokenOf(cred);
  if (req.action === 'subscribe' && !x.secured) {
    // The country lists from this instance's account entry; when it cannot tell them, nothing is admitted.
    const accountId = cred.type === 'none' ? req.accountId : token !== undefined && inheritsCountries(token) ? token.accountId : undefined;
    if (accountId !== undefined) {
      const account = p.lookup.cachedAccount(accountId);
      const v = account === undefined ? null : p.lookup.viewerCountriesCached(account, req.streamName, p.now());
      if (v === null) {
        x.ev = unavailable(req, CACHE_CANNOT_VOUCH);
        return 'decided';
      }
      x.viewerCountries = v;
    }
  }
  // The account's setting as this instance holds it; unknown, the address rules apply (the narrower answer).
  x.ipRulesOnRtmp = token !== undefined && readsIpRulesOnRtmp(req, cred) ? p.lookup.cachedAccount(token.accountId)?.ipRulesOnRtmp : undefined;
  return 'next';
}

async function accountForCheck(p: Parts, x: Run): Promise<Next> {
  const { req } = x;
  const cred = x.r!.cred;
  const token = x.record ?? tokenOf(cred);
  if (token === undefined) return 'next';
  if (req.action === 'subscribe' && inheritsCountries(token)) {
    x.viewerCountries = await p.lookup.viewerCountries(await p.lookup.account(token.accountId), req.streamName, p.now());
  }
  x.ipRulesOnRtmp = readsIpRulesOnRtmp(req, cred) ? (await p.lookup.account(token.accountId)).ipRulesOnRtmp : undefined;
  return 'next';
}

// ---- evaluate: the policy's ordered checks (src/policy/evaluate.ts, CHECKS)

function evaluateStep(p: Parts, x: Run): Next {
  x.now = p.now();
  x.ev = evaluate(x.req, x.r!.cred, x);
  return 'next';
}

/**
 * A decision made on an unchecked cached copy (bind on usage; a limited token whose admission
 * checks its revision) stands only when a store step that checks the token follows: a bind, a
 * revision-checked admission. Otherwise it is made again on a checked read.
 */
function confirmedLater(_p: Parts, x: Run): Next {
  if (x.r!.verified) return 'next';
  const ev = x.decided;
  const step = x.step;
  const passes = step?.admit !== undefined && x.req.admission === 'session' ? step.passes : undefined;
  const admits = ev.decision.allowed && step?.admit !== undefined;
  const confirms = ev.bind !== undefined || (admits && passes !== undefined && !passes(ev.decision));
  return ev.decision.allowed && confirms ? 'next' : 'again';
}

// ---- bind on usage (src/policy/bind.ts settles the pending rule)

function boundFromMemory(p: Parts, x: Run): Next {
  const ev = x.decided;
  if (ev.bind === undefined) return 'next';
  // the record is current, so its revision is: an address bound at that revision is bound still
  const { token, address } = ev.bind;
  if (!boundHere(p, token, address)) return 'decline';
  x.ev = applyBind(ev, 'already', `${address} is bound`);
  return 'next';
}

function bindInStore(p: Parts, x: Run): Next | Promise<Next> {
  return x.decided.bind === undefined ? 'next' : bindNow(p, x);
}

async function bindNow(p: Parts, x: Run): Promise<Next> {
  const ev = x.decided;
  const { token, address } = ev.bind!;
  const result = await p.lookup.timed(p.store.bindAddress(token, address));
  if (result === 'stale') {
    p.lookup.forget(token, x.r!.hash); // the token changed since we read it
    return 'again';
  }
  if (result === 'full') {
    x.ev = applyBind(ev, result, 'every slot is bound to another address');
    return 'decided';
  }
  remember(p, token, address);
  x.ev = applyBind(ev, result, result === 'bound' ? `bound ${address}` : `${address} is bound`);
  return 'next';
}

function boundFromCache(p: Parts, x: Run): Next {
  const ev = x.decided;
  if (ev.bind === undefined) return 'next';
  // Only an address this instance saw bound is vouched for; the store alone knows the others.
  x.ev = boundHere(p, ev.bind.token, ev.bind.address) ? applyBind(ev, 'already', 'bound (cached)') : unavailable(x.req, CACHE_CANNOT_VOUCH);
  return 'next';
}

async function previewBind(p: Parts, x: Run): Promise<Next> {
  const ev = x.decided;
  if (ev.bind === undefined) return 'next';
  const token = x.record!;
  const { address } = ev.bind;
  const bound = await p.store.boundAddresses(token.accountId, token.id);
  const limit = token.bindIpsOnUsage ?? 0;
  const outcome = bindDecision(new Set(bound), address, limit);
  const detail =
    outcome === 'already'
      ? `${address} is bound`
      : outcome === 'bound'
        ? `would bind ${address} (${bound.length} of ${limit} bound)`
        : `all ${limit} slot(s) are bound to other addresses`;
  x.ev = applyBind(ev, outcome, detail);
  return 'next';
}

// ---- session admission (src/sessions/control.ts: the registry's limits, a publish conflict)

function admissionFromMemory(_p: Parts, x: Run): Next {
  // memory decides only what the step would leave as it is
  const passes = x.step?.passes;
  return passes !== undefined && !passes(x.decided.decision) ? 'decline' : 'next';
}

function admitInStore(p: Parts, x: Run): Next | Promise<Next> {
  const admit = x.step?.admit;
  return !x.decided.decision.allowed || admit === undefined ? 'next' : admitNow(p, x, admit);
}

async function admitNow(p: Parts, x: Run, admit: Admitter): Promise<Next> {
  const ev = x.decided;
  const admitted = await admit(ev.decision, p.timed);
  if (admitted === 'token_changed') {
    const token = tokenOf(x.r!.cred);
    if (token !== undefined) p.lookup.forget(token, x.r!.hash); // changed since we read it
    return 'again';
  }
  if (!('rule' in admitted)) {
    x.ev = copyWith(ev, { decision: admitted });
    return 'next';
  }
  // the admission's own refusal, with its rule and why (session limits, publish conflict, a cut session)
  const rule: RuleOutcome = { rule: admitted.rule, reason: admitted.decision.reason, result: admitted.decision.allowed ? 'pass' : 'fail', detail: admitted.detail };
  x.ev = { decision: admitted.decision, rules: ev.rules.concat(rule) };
  return 'next';
}

function limitsNeedStore(_p: Parts, x: Run): Next {
  // limits are counted in the store: without it, a limited token's session cannot be admitted
  const d = x.decided.decision;
  if (d.allowed && d.limits !== undefined && x.req.admission === 'session') x.ev = unavailable(x.req, LIMITS_NEED_STORE);
  return 'next';
}

// ---- after the decision: what the caller is told, the count and log line, the session's start

function answerStep(_p: Parts, x: Run): Next | Promise<Next> {
  const answer = x.step?.answer;
  if (answer === undefined) return 'next';
  const told = answer(x.decided.decision, failedRule(x.decided.rules));
  if (told instanceof Promise) {
    return told.then((t) => {
      x.told = t;
      return 'next';
    });
  }
  x.told = told;
  return 'next';
}

/**
 * A decision made: its id, counted and logged as the caller is told it — the policy's decision,
 * or the Answer a step after it gave (docs/api.md#decision-metrics-and-logs).
 */
function countAndLog(p: Parts, x: Run): Next {
  const { req, adapter } = x;
  const ev: Evaluation | Answer = x.told ?? x.decided;
  const seconds = (performance.now() - x.started) / 1000;
  const at = p.now();
  const d: DecisionResult = copyWith(ev.decision, { decisionId: decisionIdAt(at) });
  const result = d.allowed ? 'allow' : 'deny';
  p.metrics.decided(req.action, adapter, result, d.reason, seconds);
  if (p.logger.isLevelEnabled('info')) {
    // Why, for the operator: the step's answer, else a refusal's failed check (never a token value or secret).
    const why = 'rules' in ev ? (d.allowed ? undefined : failedRule(ev.rules)) : ev;
    p.logger.info(
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
        issuerId: d.issuerId,
        accountId: d.accountId,
        streamName: req.streamName,
        protocol: req.protocol,
        clientIp: req.clientIp,
        ms: seconds * 1000,
      },
      'decision',
    );
  }
  const history = p.history;
  if (history !== undefined) {
    // an issuer's refusal belongs to the issuer's account, whatever account the request named
    const cred = x.r?.cred;
    const accountId = (cred?.type === 'invalid' ? cred.account : undefined) ?? d.accountId ?? req.accountId ?? (p.cfg.defaultAccountId || p.defaultAccountId);
    // a resolved token (or an issuer's policy token) shows its account exists
    const vouched = cred !== undefined && tokenOf(cred)?.accountId === accountId;
    if (accountId !== undefined && history.wants(d.allowed, accountId, vouched)) history.push(historyEntry(x, d, ev, accountId, at));
  }
  x.result = d;
  return 'next';
}

/** What was presented, as the history names it. */
const CREDENTIAL_KINDS: Readonly<Record<string, string>> = {
  none: 'none',
  invalid: 'invalid',
  token: 'token',
  jwt: 'self-signed JWT',
  issuer: 'issuer JWT',
  signed: 'signed URL',
};

/** A kept decision (docs/api.md#decision-history): the request, the answer, and every rule's outcome. */
function historyEntry(x: Run, d: DecisionResult, ev: Evaluation | Answer, accountId: string, at: number): DecisionEntry {
  const { req } = x;
  const why = 'rules' in ev ? (d.allowed ? undefined : failedRule(ev.rules)) : ev;
  const e: DecisionEntry = {
    decisionId: d.decisionId,
    at,
    accountId,
    caller: x.adapter,
    action: req.action,
    streamName: req.streamName,
    protocol: req.protocol,
    allowed: d.allowed,
    status: d.status,
    reason: d.reason,
    credential: x.r === undefined ? 'unknown' : (CREDENTIAL_KINDS[x.r.cred.type] ?? x.r.cred.type),
    rules: explainedRules(x, ev),
  };
  if (why !== undefined) {
    e.rule = why.rule;
    if (why.detail !== undefined) e.detail = why.detail;
  }
  if (d.tokenId !== undefined) e.tokenId = d.tokenId;
  if (d.issuerId !== undefined) e.issuerId = d.issuerId;
  if (req.clientIp !== undefined) e.clientIp = req.clientIp;
  const country = req.clientIp !== undefined || req.country !== undefined ? x.countryOf() : undefined;
  if (country !== undefined) e.country = country;
  if (req.origin !== undefined) e.origin = req.origin;
  if (req.sessionId !== undefined) e.sessionId = req.sessionId;
  return e;
}

/**
 * Every rule's outcome, as the check endpoint gives them: the policy's checks evaluated again in
 * explain mode on the same request, credential and context (pure, no store read), with what the
 * steps after it settled (the bind, the session admission) in place of their pending rules, and a
 * step's answer last. A decision the store refused before the policy ran keeps its one rule.
 */
function explainedRules(x: Run, ev: Evaluation | Answer): RuleOutcome[] {
  const final = 'rules' in ev ? ev.rules : (x.ev?.rules ?? []);
  let rules: RuleOutcome[];
  if (x.r === undefined || x.ev === undefined || final.some((r) => r.rule === STORE_RULE)) rules = final.slice();
  else {
    x.explain = true;
    try {
      rules = evaluate(x.req, x.r.cred, x).rules;
    } finally {
      x.explain = false;
    }
    for (const f of final) {
      const i = rules.findIndex((r) => r.rule === f.rule);
      if (i >= 0) rules[i] = f;
      else rules.push(f);
    }
  }
  if (!('rules' in ev)) rules.push({ rule: ev.rule, reason: ev.decision.reason, result: ev.decision.allowed ? 'pass' : 'fail', detail: ev.detail });
  return rules;
}

/** From memory, the token lookup was a cache hit (the store mode counts its own in the credential step). */
function countHitAndLog(p: Parts, x: Run): Next {
  p.lookup.stats.hits++;
  p.metrics.cacheLookup('hit');
  return countAndLog(p, x);
}

/**
 * Token sharing (docs/api.md#token-sharing): an allowed use of a token (a self-signed JWT's is its
 * parent's) is offered to the monitor, which keeps it only when the token's policy is on; nothing
 * awaited. An issuer's credential is offered as its subject, under its policy token's policy (its
 * policy token stands for every subject it admits); one without a subject is not.
 */
function watchSharing(p: Parts, x: Run): Next {
  const d = x.result;
  if (p.sharing === undefined || d === undefined || !d.allowed || x.r === undefined) return 'next';
  const cred = x.r.cred;
  if (cred.type === 'token') p.sharing.observe(cred.token, x.req.clientIp, x.r.ver);
  else if (cred.type === 'jwt') p.sharing.observe(cred.parent, x.req.clientIp, x.r.ver);
  else if ((cred.type === 'issuer' || cred.type === 'signed') && d.subject !== undefined) p.sharing.observe(cred.policy, x.req.clientIp, x.r.ver, cred.issuer.id, d.subject);
  return 'next';
}

function settle(_p: Parts, x: Run): Next {
  x.run?.settle(x.result!);
  return 'next';
}

interface Step {
  step: string;
  /** From this step on the decision is made: never made again, never sent to the cache column. */
  after?: true;
  memory?: NowStep;
  store?: AnyStep;
  cache?: AnyStep;
  explain?: AnyStep;
}

/**
 * The steps of an admission, in order, and what each does in each mode (a mode without an entry
 * skips the step). Before `answer` the steps decide: in store mode a step may send the decision
 * back to the first step on a fresh read ('again', at most MAX_STALE_RETRIES times), and a store
 * that does not answer sends it to the cache column (allow-cached) or refuses it. From `answer`
 * on, the decision is told, counted and logged, and its session started.
 */
const STEPS: readonly Step[] = [
  { step: 'resolve credential', memory: credentialFromMemory, store: credentialWithStore, cache: credentialFromCache, explain: checkedRecord },
  { step: 'account context', memory: accountFromMemory, store: accountWithStore, cache: accountFromCache, explain: accountForCheck },
  { step: 'evaluate', memory: evaluateStep, store: evaluateStep, cache: evaluateStep, explain: evaluateStep },
  { step: 'unchecked copy confirmed', store: confirmedLater },
  { step: 'bind on usage', memory: boundFromMemory, store: bindInStore, cache: boundFromCache, explain: previewBind },
  { step: 'session admission', memory: admissionFromMemory, store: admitInStore, cache: limitsNeedStore },
  // memory never has an answer step to run: an admission with one is made with the store
  { step: 'answer', after: true, store: answerStep, cache: answerStep },
  { step: 'count and log', after: true, memory: countHitAndLog, store: countAndLog, cache: countAndLog },
  { step: 'sharing signals', after: true, memory: watchSharing, store: watchSharing, cache: watchSharing },
  { step: 'settle', after: true, memory: settle, store: settle, cache: settle },
];

/** One mode's steps, in order: those that decide, and those after. */
interface Plan<S> {
  decide: S[];
  after: S[];
}

function planOf<M extends Mode>(mode: M): Plan<NonNullable<Step[M]>> {
  const plan: Plan<NonNullable<Step[M]>> = { decide: [], after: [] };
  for (const s of STEPS) {
    const f = s[mode];
    if (f !== undefined) (s.after ? plan.after : plan.decide).push(f as NonNullable<Step[M]>);
  }
  return plan;
}

export class Enforcer {
  readonly lookup: TokenLookup;
  private readonly parts: Parts;
  private readonly sessions: SessionControl | undefined;
  /** STEPS by mode, made once. */
  private readonly plans: { memory: Plan<NowStep>; store: Plan<AnyStep>; cache: Plan<AnyStep>; explain: Plan<AnyStep> };

  constructor(store: Store, cfg: Config['enforcement'], geo: GeoLookup, metrics: Metrics, logger: Logger, opts: EnforcerOptions = {}) {
    this.lookup = new TokenLookup(store, cfg);
    this.sessions = opts.sessions;
    const now = opts.now ?? Date.now;
    this.parts = {
      store,
      cfg,
      geo,
      metrics,
      logger,
      lookup: this.lookup,
      sources: {
        lookup: this.lookup,
        issuers: opts.issuers && { keys: opts.issuers.keys, memo: opts.issuers.memo, now },
        signed: opts.signed && { memo: opts.signed.memo, useOnce: opts.signed.useOnce, keyed: opts.signed.keyed, keysGeneration: opts.signed.keysGeneration, now, countryOf: (ip) => geo.countryOf(ip) },
      },
      timed: (q) => this.lookup.timed(q),
      now,
      defaultAccountId: opts.defaultAccountId || undefined,
      knownBound: new LRUCache({ max: 10000 }),
      history: opts.history,
      sharing: opts.sharing,
    };
    this.plans = { memory: planOf('memory'), store: planOf('store'), cache: planOf('cache'), explain: planOf('explain') };
  }

  /** The account a request that names none and carries no token belongs to (enforcement.defaultAccountId, else the one created on first start). */
  get defaultAccount(): string | undefined {
    return this.parts.cfg.defaultAccountId || this.parts.defaultAccountId;
  }

  /**
   * The one entry of every admission. Never throws for bad tokens or an unreachable store.
   * - `mode`: a column of STEPS, or 'soon': memory when it can vouch (answered without an await),
   *   else the store;
   * - `step`: what runs after an allow and may refuse it or shape the answer (a re-ask's, a viewer
   *   credential's problem); its store calls go through enforcement.storeTimeoutMs;
   * - `admission`: the caller's admission, when it names a session: one that starts
   *   (`starts`) is begun before the decision (its registry step is the step after an allow, under
   *   the token's limits) and settled after it (docs/api.md#session-limits), living `ttlSeconds`
   *   (default enforcement.liveTtlSeconds); a re-ask (`reask`) refreshes its session instead
   *   (docs/api.md#running-sessions);
   * - `serverAddress`: where the caller's request came from (which media server holds the connection).
   * The decision is counted and logged under `adapter` as the caller is told it.
   * Explain: every rule's outcome for a probe of the token `record`, or (without one) of the
   * credential the probe presents (`req.token`), binding nothing (the check endpoints).
   */
  admit(req: AccessRequest, mode: 'explain', adapter: string, record?: TokenRecord): Promise<Explanation>;
  admit(req: AccessRequest, mode: 'memory', adapter: string, step?: AdmissionStep, admission?: Admission, serverAddress?: string, ttlSeconds?: number): DecisionResult | undefined;
  admit(req: AccessRequest, mode: 'soon', adapter: string, step?: AdmissionStep, admission?: Admission, serverAddress?: string, ttlSeconds?: number): DecisionResult | Promise<DecisionResult>;
  admit(req: AccessRequest, mode: 'store' | 'cache', adapter: string, step?: AdmissionStep, admission?: Admission, serverAddress?: string, ttlSeconds?: number): Promise<DecisionResult>;
  admit(
    req: AccessRequest,
    mode: Mode | 'soon',
    adapter: string,
    stepOrRecord?: AdmissionStep | TokenRecord,
    admission?: Admission,
    serverAddress?: string,
    ttlSeconds?: number,
  ): DecisionResult | undefined | Promise<DecisionResult> | Promise<Explanation> {
    if (mode === 'explain') return this.explain(req, adapter, stepOrRecord as TokenRecord | undefined);
    const step = stepOrRecord as AdmissionStep | undefined;
    if (admission?.reask === true) return this.reask(req, adapter, admission, serverAddress);
    const run = admission?.starts === true ? this.sessionsOf().begin(adapter, admission, serverAddress, ttlSeconds) : undefined;
    // performance.now(): a double, where hrtime.bigint() allocates a BigInt per reading
    const x = new Run(this.parts, req, adapter, run ?? step, run, performance.now());
    if (mode === 'memory') return this.fromMemory(x);
    // an answer step may need the store (a re-ask's token change): the store mode runs it
    if (mode === 'soon' && x.step?.answer === undefined) {
      const d = this.fromMemory(x);
      if (d !== undefined) return d;
    }
    return this.withStore(x, mode === 'cache' ? 'cache' : 'store');
  }

  /** The memory column: every step synchronous; undefined as soon as one cannot vouch, with nothing counted or settled. */
  private fromMemory(x: Run): DecisionResult | undefined {
    const { decide, after } = this.plans.memory;
    for (let i = 0; i < decide.length; i++) {
      const n = decide[i](this.parts, x);
      if (n === 'decline') return undefined;
      if (n === 'decided') break;
    }
    for (let i = 0; i < after.length; i++) after[i](this.parts, x);
    return x.result;
  }

  /** The store column (the cache column when the store does not answer and allow-cached says so), then the steps after. */
  private async withStore(x: Run, mode: 'store' | 'cache'): Promise<DecisionResult> {
    if (mode === 'store') {
      try {
        await this.runSteps(x, this.plans.store.decide, MAX_STALE_RETRIES);
      } catch (e) {
        if (!(e instanceof StoreUnavailable)) throw e;
        this.parts.metrics.storeErrors.inc();
        // onStoreError deny: refused, and nothing is left to decide (the cache column's session
        // admission step would leave a refusal as it is)
        if (this.parts.cfg.onStoreError === 'allow-cached') mode = 'cache';
        else x.ev = unavailable(x.req, STORE_DOWN);
      }
    }
    if (mode === 'cache') await this.runSteps(x, this.plans.cache.decide, 0);
    const { after } = this.plans[mode];
    for (let i = 0; i < after.length; i++) {
      const n = after[i](this.parts, x);
      if (typeof n !== 'string') await n;
    }
    return x.result!;
  }

  /** Runs the deciding steps, from the first again when one says so (at most `retries` times). */
  private async runSteps(x: Run, steps: readonly AnyStep[], retries: number): Promise<void> {
    x.reading = 'optimistic';
    for (let attempt = 0; attempt <= retries; attempt++) {
      let again = false;
      for (let i = 0; i < steps.length; i++) {
        let n = steps[i](this.parts, x);
        if (typeof n !== 'string') n = await n;
        if (n === 'again') {
          again = true;
          break;
        }
        if (n === 'decided') break;
      }
      if (!again) return;
      x.reading = 'fresh';
    }
    throw new StoreUnavailable(new Error('token kept changing while binding or admitting'));
  }

  private async explain(req: AccessRequest, adapter: string, record: TokenRecord | undefined): Promise<Explanation> {
    const x = new Run(this.parts, req, adapter, undefined, undefined, 0);
    x.explain = true;
    x.record = record;
    await this.runSteps(x, this.plans.explain.decide, 0);
    return { decision: x.decided.decision, rules: x.decided.rules };
  }

  /** A re-ask (SessionControl.reask), decided with the store; a running connection the registry lost is registered again. */
  private async reask(req: AccessRequest, adapter: string, a: Admission, serverAddress: string | undefined): Promise<DecisionResult> {
    const sessions = this.sessionsOf();
    const decide = (step: AdmissionStep) => this.withStore(new Run(this.parts, req, adapter, step, undefined, performance.now()), 'store');
    const { decision: d, registerAgain } = await sessions.reask(adapter, a, decide);
    if (registerAgain) sessions.begin(adapter, copyWith(a, { starts: true }), serverAddress).settle(d);
    return d;
  }

  private sessionsOf(): SessionControl {
    if (this.sessions === undefined) throw new TypeError('Enforcer: an admission that names a session needs session control (EnforcerOptions.sessions)');
    return this.sessions;
  }
}
