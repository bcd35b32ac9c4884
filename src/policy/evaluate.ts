// evaluate(): the ordered checks of the decision table (docs/api.md#decision-table) as a table of small
// pure functions. It never does I/O: the enforcer resolves the credential, the stream's security
// and the viewer's country lists first, and performs the bind-on-usage step evaluate() only asks for.
import { hasLimits, type TokenRecord } from '../domain/tokens.js';
import { decision, type AccessRequest, type CountryLists, type Decision, type Reason, type ViewerCountries } from './types.js';
import { hasCountryLists } from '../domain/viewer-rules.js';
import { compileRules, ipInRanges, originAllowed, parseCidrs, type CompiledRules } from './rules.js';
import type { SelfSignedClaims } from './self-signed.js';
import type { IssuerRecord } from '../domain/issuers.js';
import { actionClaimProblem, addressClaimProblem, jwtSubject, streamClaimOf, streamClaimProblem, type IssuerCredential } from './issuer-jwt.js';
import { subjectOf } from '../domain/sharing.js';
import { copyWith } from '../domain/objects.js';
import type { SignedGrant } from './signed-common.js';

/**
 * How a signed URL, cookie or CAT is refused (docs/api.md#signed-url-issuers): 403, as the CDNs and
 * servers that issue them refuse them; by what it does not cover, else as a bad or expired signature.
 */
export type SignedRefusal = 'signature_invalid' | 'signature_expired' | 'stream_not_allowed' | 'ip_not_allowed' | 'country_not_allowed' | 'uses_exhausted';

/** What the presented token turned out to be. */
export type Credential =
  | { type: 'none' }
  /**
   * Presented but unknown, malformed, or a JWT whose parent, issuer or signature failed. `reason`:
   * an issuer's JWT that verified but has expired, or whose issuer is disabled (default token_invalid).
   */
  | {
      type: 'invalid';
      detail: string;
      reason?: 'token_expired' | 'token_disabled' | SignedRefusal;
      /** The account of the credential issuer whose refusal this is (its detail names that issuer). */
      account?: string;
    }
  | { type: 'token'; token: TokenRecord }
  | { type: 'jwt'; parent: TokenRecord; claims: SelfSignedClaims }
  /** A credential issuer's verified JWT: its policy token's rules apply, narrowed by its claims (docs/api.md#credential-issuers). */
  | { type: 'issuer'; issuer: IssuerRecord; policy: TokenRecord; claims: IssuerCredential }
  /**
   * A signed URL, cookie or CAT a signed-URL issuer verified for this request's path, address and
   * time (docs/api.md#signed-url-issuers): its policy token's rules apply, within the grant.
   */
  | { type: 'signed'; issuer: IssuerRecord; policy: TokenRecord; grant: SignedGrant };

/** The token whose rules apply to a credential: the token itself, a self-signed JWT's parent, an issuer's policy token. */
export function ruleToken(cred: Credential): TokenRecord | undefined {
  return cred.type === 'token' ? cred.token : cred.type === 'jwt' ? cred.parent : cred.type === 'issuer' || cred.type === 'signed' ? cred.policy : undefined;
}

export interface EvalContext {
  /** Milliseconds since the epoch. */
  now: number;
  /** The stream needs a subscribe token (docs/api.md#secured-streams); only read for a token-less subscribe. */
  secured: boolean;
  rtmpIpFilters: 'enforce' | 'ignore';
  /**
   * The token's account's `ipRulesOnRtmp` (docs/api.md#rtmp): false, RTMP, RTSP and SRT skip the
   * address rules (allowedIpAddresses, bindIpsOnUsage). Absent: true. The enforcer reads it only
   * when `readsIpRulesOnRtmp` says a request needs it.
   */
  ipRulesOnRtmp?: boolean;
  /** The client's country, looked up only when a rule needs it. */
  countryOf: () => string | undefined;
  /** Compiled rules of a token version (the enforcer caches them); compiled on demand otherwise. */
  rulesOf?: (t: TokenRecord) => CompiledRules;
  /**
   * Subscribe only: the country lists the viewer is held to unless its own subscribe token sets
   * some (the publishing token's, the matching publish tokens', or the account's defaults; the
   * enforcer resolves them). Absent: no list applies.
   */
  viewerCountries?: ViewerCountries;
  /**
   * false: `rules` holds only the failed and pending rules (what a decision reads: the detail of
   * its refusal, the pending bind); the checks after a failure are not listed. Default true: every
   * rule, as the check endpoint shows them. The decision is the same either way.
   */
  explain?: boolean;
}

export type RuleResult = 'pass' | 'fail' | 'skipped' | 'pending';

export interface RuleOutcome {
  rule: string;
  reason: Reason;
  result: RuleResult;
  detail?: string;
  /** The country rule: whose lists applied ('subscribe token 7', 'publish token 12', 'account default'). */
  source?: string;
}

export interface Evaluation {
  decision: Decision;
  rules: RuleOutcome[];
  /** Set when every other check passed and the token binds on usage: the enforcer must bind this. */
  bind?: { token: TokenRecord; address: string };
}

/** The largest Unix second a Date holds (8.64e15 ms). */
const MAX_DATE_S = 8_640_000_000_000;

/** JWT clock tolerance (seconds) for exp, nbf and iat. */
export const CLOCK_TOLERANCE_S = 30;

interface Input {
  req: AccessRequest;
  cred: Credential;
  ctx: EvalContext;
  /** The token whose rules apply: the token itself, a JWT's parent, an issuer JWT's policy token. */
  token?: TokenRecord;
  rules?: CompiledRules;
  jwt?: SelfSignedClaims;
  /** An issuer JWT's credential. */
  issued?: { issuer: IssuerRecord; claims: IssuerCredential };
  /** A signed-URL issuer's grant. */
  signed?: { issuer: IssuerRecord; grant: SignedGrant };
}

/** A check's outcome; `reason` when a failure is answered with another reason than the check's own. */
type Outcome = { result: RuleResult; detail?: string; source?: string; reason?: Reason };
const pass = (detail?: string): Outcome => ({ result: 'pass', detail });
const fail = (detail: string): Outcome => ({ result: 'fail', detail });
const skipped = (detail: string): Outcome => ({ result: 'skipped', detail });

/**
 * Protocols whose clients send no Origin or Referer (docs/api.md#client-address-and-origin): origin
 * rules cannot apply to them, and an account's ipRulesOnRtmp: false lifts address rules on them.
 */
const STREAMING_PROTOCOLS: ReadonlySet<string> = new Set(['rtmp', 'rtmps', 'rtsp', 'rtsps', 'srt']);

/** RTMP, RTSP or SRT in any case (callers mostly send lower case: no copy is made for it). */
const isStreaming = (protocol: string): boolean => STREAMING_PROTOCOLS.has(protocol) || STREAMING_PROTOCOLS.has(protocol.toLowerCase());

/** Whether a request over `protocol` can carry an origin (every protocol but RTMP, RTSP and SRT, and their TLS forms). */
export const carriesOrigin = (protocol: string): boolean => !isStreaming(protocol);

/** Why the address rules do not apply to this request, or undefined when they do. */
function ipRulesLifted(x: Input): string | undefined {
  const { rtmpIpFilters, ipRulesOnRtmp } = x.ctx;
  if (rtmpIpFilters !== 'ignore' && ipRulesOnRtmp !== false) return undefined;
  const protocol = x.req.protocol.toLowerCase();
  if (rtmpIpFilters === 'ignore' && protocol === 'rtmp') return 'not applied to RTMP (enforcement.rtmpIpFilters: ignore)';
  if (ipRulesOnRtmp === false && STREAMING_PROTOCOLS.has(protocol)) return `not applied to ${protocol.toUpperCase()} (the account's ipRulesOnRtmp is off)`;
  return undefined;
}

/**
 * Whether deciding `req` with this credential reads the account's ipRulesOnRtmp: a token (a
 * self-signed JWT: its parent, or the JWT itself) with address rules, over a streaming protocol.
 * Otherwise the setting cannot change the decision and the enforcer need not look it up.
 */
export function readsIpRulesOnRtmp(req: AccessRequest, cred: Credential): boolean {
  const t = ruleToken(cred);
  if (t === undefined) return false;
  const rules =
    t.allowedIpAddresses.length > 0 ||
    (t.bindIpsOnUsage ?? 0) > 0 ||
    (cred.type === 'jwt' && (cred.claims.allowedIpAddresses?.length ?? 0) > 0) ||
    (cred.type === 'issuer' && cred.claims.address !== undefined);
  return rules && isStreaming(req.protocol);
}

function tokenPresent(x: Input): Outcome {
  if (x.cred.type !== 'none') return pass();
  if (x.req.action === 'publish') return fail('publishing always needs a token');
  return x.ctx.secured ? fail('the stream is secured: viewing needs a subscribe token') : pass('open stream: no token needed');
}

function tokenValid(x: Input): Outcome {
  const { cred, req } = x;
  if (cred.type === 'invalid') return cred.reason ? { result: 'fail', detail: cred.detail, reason: cred.reason } : fail(cred.detail);
  if (cred.type === 'token') {
    return cred.token.kind === req.action ? pass() : fail(`a ${cred.token.kind} token cannot be used to ${req.action}`);
  }
  if (cred.type === 'issuer') return issuerValid(x, cred.issuer, cred.policy, cred.claims);
  if (cred.type === 'signed') {
    const { issuer, policy, grant } = cred;
    if (policy.kind !== req.action) return fail(`issuer ${issuer.id}'s policy token ${policy.id} is a ${policy.kind} token: its credentials cannot ${req.action}`);
    return x.ctx.explain === false ? pass() : pass(`a ${grant.format} credential verified by issuer ${issuer.id} (${issuer.label})${grant.keyId !== undefined ? ` with key ${grant.keyId}` : ''}; policy token ${policy.id}`);
  }
  if (cred.type !== 'jwt') return pass();
  const { parent, claims } = cred;
  if (req.action !== 'subscribe') return fail('a self-signed token can only subscribe');
  if (parent.kind !== 'subscribe') return fail('the parent of a self-signed token must be a subscribe token');
  if (claims.tokenType !== 'Subscribe') return fail('streaming.tokenType must be "Subscribe"');
  if (claims.exp === undefined) return fail('exp is required');
  const nowS = x.ctx.now / 1000;
  if (claims.nbf !== undefined && claims.nbf > nowS + CLOCK_TOLERANCE_S) return fail('not valid yet (nbf)');
  if (claims.iat !== undefined && claims.iat > nowS + CLOCK_TOLERANCE_S) return fail('issued in the future (iat)');
  const parentTracking = parent.tracking?.trackingId;
  if (parentTracking !== undefined && claims.trackingId !== parentTracking) {
    const carried = claims.trackingId === undefined ? 'carries none' : `carries '${claims.trackingId.slice(0, 100)}'`;
    return fail(`the parent token has trackingId '${parentTracking}' and the JWT ${carried}: it must carry the same streaming.tracking.trackingId`);
  }
  return pass('self-signed');
}

/** An issuer's verified JWT: its policy token may do the action, and so may its action claims. */
function issuerValid(x: Input, issuer: IssuerRecord, policy: TokenRecord, claims: IssuerCredential): Outcome {
  const { action } = x.req;
  if (policy.kind !== action) return fail(`issuer ${issuer.id}'s policy token ${policy.id} is a ${policy.kind} token: its credentials cannot ${action}`);
  const problem = actionClaimProblem(claims, issuer, action);
  if (problem !== null) return fail(problem);
  // a pass's detail is read only when every rule is explained: not built for a decision
  return x.ctx.explain === false ? pass() : pass(`verified by issuer ${issuer.id} (${issuer.label})${claims.kid !== undefined ? ` with key ${claims.kid}` : ''}; policy token ${policy.id}`);
}

/** A credential's exp as an ISO date, made once per remembered credential (the memo hands out the same object). */
const expiries = new WeakMap<IssuerCredential, string>();
function expiryOf(claims: IssuerCredential): string {
  let iso = expiries.get(claims);
  if (iso === undefined) {
    iso = new Date(claims.exp * 1000).toISOString();
    expiries.set(claims, iso);
  }
  return iso;
}

/** How the token whose rules apply is named in a refusal. */
const tokenWord = (x: Input): string => (x.jwt ? 'the parent token' : x.issued || x.signed ? 'the policy token' : 'the token');

function tokenActive(x: Input): Outcome {
  return x.token!.isActive ? pass() : fail(`${tokenWord(x)} is disabled`);
}

function notExpired(x: Input): Outcome {
  const t = x.token!;
  if (t.expiresOn !== undefined && Date.parse(t.expiresOn) <= x.ctx.now) {
    return fail(`${tokenWord(x)} expired at ${t.expiresOn}`);
  }
  // the credential's own exp was checked when it was verified (and on every memo hit)
  if (x.issued) return x.ctx.explain === false ? pass() : pass(`the credential expires at ${expiryOf(x.issued.claims)}`);
  if (x.signed) {
    if (x.ctx.explain === false) return pass();
    const exp = x.signed.grant.exp;
    return pass(exp === null || exp >= MAX_DATE_S ? 'the credential carries no expiry a date can hold: the policy token bounds it' : `the credential expires at ${new Date(exp * 1000).toISOString()}`);
  }
  if (x.jwt && x.jwt.exp! + CLOCK_TOLERANCE_S <= x.ctx.now / 1000) {
    return fail(`the self-signed token expired at ${new Date(x.jwt.exp! * 1000).toISOString()}`);
  }
  return t.expiresOn === undefined && !x.jwt ? pass('never expires') : pass();
}

function streamAllowed(x: Input): Outcome {
  const name = x.req.streamName;
  // A caller that names the stream's account (path, streamAccountId) names whose stream it is:
  // another account's token never opens it, whatever its stream patterns say.
  if (x.req.accountId !== undefined && x.req.accountId !== x.token!.accountId) return fail('the stream belongs to another account');
  if (x.jwt && x.jwt.streamName !== name) return fail(`the self-signed token is for stream '${x.jwt.streamName}'`);
  if (x.issued) {
    const problem = streamClaimProblem(x.issued.claims, x.issued.issuer, name, x.req.action);
    if (problem !== null) return fail(problem);
    if (!x.rules!.streams(name)) return fail(`'${name}' matches none of the policy token's streams`);
    return x.ctx.explain === false ? pass() : pass(`claim ${streamClaimOf(x.issued.issuer)} allows it, and so do the policy token's streams`);
  }
  if (x.signed) {
    if (!x.rules!.streams(name)) return fail(`'${name}' matches none of the policy token's streams`);
    return x.ctx.explain === false ? pass() : pass(`the signed ${x.signed.grant.scope} covers the request's path, and the policy token's streams allow '${name}'`);
  }
  return x.rules!.streams(name) ? pass() : fail(`'${name}' matches none of the token's streams`);
}

function originCheck(x: Input): Outcome {
  const lists = [x.rules!.origins, x.jwt?.allowedOrigins ?? []].filter((l) => l.length > 0);
  if (lists.length === 0) return skipped('any origin');
  // Not a missing origin: one the protocol has no way to send (docs/api.md#decision-table).
  if (!carriesOrigin(x.req.protocol)) return skipped(`${x.req.protocol.toUpperCase()} carries no origin: origin rules apply to HTTP and the director only`);
  if (x.req.origin === undefined) return fail('no Origin or Referer, and the token restricts origins');
  return lists.every((l) => originAllowed(x.req.origin, l)) ? pass() : fail(`origin '${x.req.origin}' is not allowed`);
}

function ipCheck(x: Input): Outcome {
  const lifted = ipRulesLifted(x);
  if (lifted !== undefined) return skipped(`IP filters are ${lifted}`);
  if (x.issued) {
    const problem = addressClaimProblem(x.issued.claims, x.issued.issuer, x.req.clientIp);
    if (problem !== null) return fail(problem);
  }
  const lists = [x.rules!.ips, x.jwt ? parseCidrs(x.jwt.allowedIpAddresses) : []].filter((l) => l.length > 0);
  if (lists.length === 0) return x.issued?.claims.address !== undefined ? pass(`in claim ${x.issued.issuer.claims.address}`) : skipped('any address');
  if (x.req.clientIp === undefined) return fail('the client address is unknown, and the token restricts addresses');
  return lists.every((l) => ipInRanges(x.req.clientIp, l)) ? pass() : fail(`address ${x.req.clientIp} is not allowed`);
}

/** The country rule's answer for a publisher, whatever its token's lists (they restrict its viewers). */
export const PUBLISHERS_ANY_COUNTRY = 'publishers are not restricted by country';
const PUBLISHERS_LISTS_FOR_VIEWERS = `${PUBLISHERS_ANY_COUNTRY}; these lists apply to viewers`;

/** The lists a subscribe token sets for its own holder (they override every other list). */
function ownLists(t: TokenRecord): ViewerCountries {
  const source = `${t.kind} token ${t.id}`;
  return { source, lists: [{ allowed: t.allowedCountries, denied: t.deniedCountries, source }] };
}

const listName = (l: CountryLists, which: 'allowedCountries' | 'deniedCountries'): string =>
  l.source === 'account default' ? `the account default ${which}` : `${l.source}'s ${which}`;

function countryCheck(x: Input): Outcome {
  if (x.req.action === 'publish') {
    return skipped(x.token && hasCountryLists(x.token) ? PUBLISHERS_LISTS_FOR_VIEWERS : PUBLISHERS_ANY_COUNTRY);
  }
  const v = x.token && hasCountryLists(x.token) ? ownLists(x.token) : x.ctx.viewerCountries;
  if (v === undefined || v.lists.length === 0) return skipped('any country');
  const c = x.ctx.countryOf();
  for (const l of v.lists) {
    if (l.allowed.length > 0) {
      if (c === undefined) return { result: 'fail', detail: `the client country is unknown, and ${listName(l, 'allowedCountries')} allows only some countries`, source: l.source };
      if (!l.allowed.includes(c)) return { result: 'fail', detail: `country ${c} is not in ${listName(l, 'allowedCountries')}`, source: l.source };
    } else if (c !== undefined && l.denied.includes(c)) {
      return { result: 'fail', detail: `country ${c} is denied by ${listName(l, 'deniedCountries')}`, source: l.source };
    }
  }
  const names = v.lists.map((l) => listName(l, l.allowed.length > 0 ? 'allowedCountries' : 'deniedCountries'));
  return { result: 'pass', detail: `${c === undefined ? 'country unknown' : `country ${c}`}: passes ${names.join(' and ')}`, source: v.source };
}

/** Whether a cut session's hold on the token (from any address) is still in force. */
const heldNow = (t: TokenRecord, now: number): boolean => t.holds?.some((h) => Date.parse(h.until) > now) === true;

function notHeld(x: Input): Outcome {
  const held = x.token!.holds?.find((h) => Date.parse(h.until) > x.ctx.now && (h.clientIp === undefined || h.clientIp === x.req.clientIp));
  if (held === undefined) return pass();
  return fail(`a session of this token${held.clientIp ? ` from ${held.clientIp}` : ''} was cut; refused until ${held.until} or until the token is updated`);
}

/** The refusal of a limited token by a caller that names no session (docs/api.md#session-limits). */
export const HTTP_LIMITS_MESSAGE = 'Unauthorized: This token limits its sessions, and HTTP streaming needs viewer sessions';

function limitsCheck(x: Input): Outcome {
  const t = x.token!;
  if (!hasLimits(t)) return skipped('the token sets no session limits');
  const what = [t.maxConcurrentSessions !== undefined ? `at most ${t.maxConcurrentSessions} at once` : '', t.maxUses !== undefined ? `${t.maxUses} use(s)` : '']
    .filter(Boolean)
    .join(', ');
  if (x.req.admission === 'resource') return skipped(`${what}: a request on a session already admitted, counted when it started`);
  if (x.req.admission === 'none') {
    return fail(`the token limits sessions (${what}), and this caller reports no sessions: HTTP streaming needs viewer sessions`);
  }
  return { result: 'pending', detail: `${what}: counted when the media server's session is admitted` };
}

function bindCheck(x: Input): Outcome {
  const limit = x.token!.bindIpsOnUsage ?? 0;
  if (limit === 0) return skipped('the token does not bind on usage');
  const lifted = ipRulesLifted(x);
  if (lifted !== undefined) return skipped(`IP binding is ${lifted}`);
  if (x.req.clientIp === undefined) return fail('the client address is unknown, and the token binds on usage');
  return { result: 'pending', detail: `binds to the first ${limit} address(es)` };
}

/** The rule the bind step settles (applyBind, policy/bind.ts): the last of the checks. */
export const BIND_RULE = 'bind on usage';

/** The ordered checks; the first failure decides. Checks after 2 need a resolved token. */
const CHECKS: Array<{ rule: string; reason: Reason; needsToken: boolean; run: (x: Input) => Outcome }> = [
  { rule: 'token present', reason: 'token_required', needsToken: false, run: tokenPresent },
  { rule: 'token valid', reason: 'token_invalid', needsToken: false, run: tokenValid },
  { rule: 'token active', reason: 'token_disabled', needsToken: true, run: tokenActive },
  { rule: 'not expired', reason: 'token_expired', needsToken: true, run: notExpired },
  { rule: 'no session cut', reason: 'session_terminated', needsToken: true, run: notHeld },
  { rule: 'stream name allowed', reason: 'stream_not_allowed', needsToken: true, run: streamAllowed },
  { rule: 'origin allowed', reason: 'origin_not_allowed', needsToken: true, run: originCheck },
  { rule: 'IP address allowed', reason: 'ip_not_allowed', needsToken: true, run: ipCheck },
  // Not tied to a token: a token-less viewer is held to the publish side's and the account's lists.
  { rule: 'country allowed', reason: 'country_not_allowed', needsToken: false, run: countryCheck },
  { rule: 'session limits', reason: 'session_limit', needsToken: true, run: limitsCheck },
  // last: binding is the step after evaluate (policy/bind.ts reads this rule)
  { rule: BIND_RULE, reason: 'ip_not_allowed', needsToken: true, run: bindCheck },
];

export function evaluate(req: AccessRequest, cred: Credential, ctx: EvalContext): Evaluation {
  const token = ruleToken(cred);
  const x: Input = {
    req,
    cred,
    ctx,
    token,
    rules: token ? (ctx.rulesOf ?? compileRules)(token) : undefined,
    jwt: cred.type === 'jwt' ? cred.claims : undefined,
    issued: cred.type === 'issuer' ? { issuer: cred.issuer, claims: cred.claims } : undefined,
    signed: cred.type === 'signed' ? { issuer: cred.issuer, grant: cred.grant } : undefined,
  };
  const rules: RuleOutcome[] = [];
  const explain = ctx.explain !== false;
  let failed: Reason | undefined;
  let bindPending = false;
  for (const c of CHECKS) {
    let o: Outcome;
    if (failed) {
      if (!explain) break;
      o = skipped('an earlier check failed');
    } else if (c.needsToken && !token) o = skipped('no token');
    else o = c.run(x);
    if (explain || o.result === 'fail' || o.result === 'pending') rules.push({ rule: c.rule, reason: c.reason, ...o });
    if (o.result === 'fail') failed = o.reason ?? c.reason;
    if (o.result === 'pending' && c.run === bindCheck) bindPending = true;
  }
  const fields: Omit<Decision, 'allowed' | 'status' | 'reason' | 'message'> = {
    streamName: req.streamName,
    accountId: token?.accountId ?? req.accountId,
  };
  if (token) {
    fields.tokenId = token.id;
    fields.tokenRev = token.rev;
    const trackingId = x.jwt?.trackingId ?? token.tracking?.trackingId;
    if (trackingId !== undefined) fields.trackingId = trackingId;
    if (x.jwt) fields.selfSigned = true;
    if (token.expiresOn !== undefined) fields.expiresOn = token.expiresOn;
    if (x.issued) {
      fields.issuerId = x.issued.issuer.id;
      const subject = jwtSubject(x.issued.claims, x.issued.issuer);
      if (subject !== undefined) fields.subject = subject;
      // the credential can only end earlier than its policy token
      if (token.expiresOn === undefined || x.issued.claims.exp * 1000 < Date.parse(token.expiresOn)) fields.expiresOn = expiryOf(x.issued.claims);
    }
    if (x.signed) {
      fields.issuerId = x.signed.issuer.id;
      fields.signedUrl = true;
      if (x.signed.grant.id !== undefined && x.signed.grant.id !== '') fields.subject = subjectOf('id', x.signed.grant.id);
      if (x.signed.grant.narrow === true || x.signed.grant.replay === 'prohibited') fields.signedEach = true;
      // (an exp past what a Date holds bounds nothing a Date can say)
      const exp = x.signed.grant.exp;
      if (exp !== null && exp < MAX_DATE_S && (token.expiresOn === undefined || exp * 1000 < Date.parse(token.expiresOn))) fields.expiresOn = new Date(exp * 1000).toISOString();
    }
    if (token.originCluster) fields.originCluster = token.originCluster;
    if (hasLimits(token)) fields.limits = { maxConcurrent: token.maxConcurrentSessions, maxUses: token.maxUses };
    if (fields.limits !== undefined || (token.bindIpsOnUsage ?? 0) > 0 || heldNow(token, ctx.now)) fields.admissionRules = true;
    if (token.kind === 'publish') {
      fields.record = token.record ?? false;
      fields.subscribeRequiresAuth = token.subscribeRequiresAuth ?? false;
    }
  }
  if (failed === 'session_limit') {
    // refused before any session: the caller (HTTP streaming) registers none that limits could count
    return { decision: copyWith(decision(failed, fields), { message: HTTP_LIMITS_MESSAGE }), rules };
  }
  if (failed) return { decision: decision(failed, fields), rules };
  const out: Evaluation = { decision: decision('allowed', fields), rules };
  if (bindPending && token && req.clientIp !== undefined) out.bind = { token, address: req.clientIp };
  return out;
}
