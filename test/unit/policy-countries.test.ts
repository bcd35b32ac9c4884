// The country rule of the policy, pure: the enforcer hands it the lists a viewer is held to (the
// publish side's or the account's); a subscribe token's own lists override them; publishers are
// never restricted. Each case asserts the outcome, its detail and the source it names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, type Credential, type EvalContext, type RuleOutcome } from '../../src/policy/evaluate.js';
import type { AccessRequest, ViewerCountries } from '../../src/policy/types.js';
import type { TokenRecord } from '../../src/domain/tokens.js';
import { tokenRecord } from '../helpers/records.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

const token = tokenRecord;

const req = (over: Partial<AccessRequest> = {}): AccessRequest => ({ action: 'subscribe', streamName: 'cam1', accountId: 'ACCT01', protocol: 'hls', ...over });

function ctx(country: string | undefined, viewerCountries?: ViewerCountries, lookups?: { n: number }): EvalContext {
  return {
    now: NOW,
    secured: false,
    rtmpIpFilters: 'enforce',
    countryOf: () => {
      if (lookups) lookups.n++;
      return country;
    },
    viewerCountries,
  };
}

const publishSide = (...lists: Array<[number, { allowed?: string[]; denied?: string[] }]>): ViewerCountries => ({
  source: lists.length === 1 ? `publish token ${lists[0][0]}` : `publish tokens ${lists.map(([id]) => id).join(', ')}`,
  lists: lists.map(([id, l]) => ({ allowed: l.allowed ?? [], denied: l.denied ?? [], source: `publish token ${id}` })),
});
const accountDefault = (l: { allowed?: string[]; denied?: string[] }): ViewerCountries => ({
  source: 'account default',
  lists: [{ allowed: l.allowed ?? [], denied: l.denied ?? [], source: 'account default' }],
});

function countryRule(r: AccessRequest, cred: Credential, x: EvalContext): { reason: string; rule: RuleOutcome } {
  const ev = evaluate(r, cred, x);
  return { reason: ev.decision.reason, rule: ev.rules.find((o) => o.rule === 'country allowed')! };
}

const NONE: Credential = { type: 'none' };

describe('policy: viewer country lists', () => {
  it('holds a token-less viewer to the lists it is given, naming the list that refused', () => {
    const two = publishSide([12, { denied: ['FR'] }], [15, { denied: ['DE'] }]);
    let out = countryRule(req(), NONE, ctx('DE', two));
    assert.equal(out.reason, 'country_not_allowed');
    assert.deepEqual(out.rule, {
      rule: 'country allowed',
      reason: 'country_not_allowed',
      result: 'fail',
      detail: "country DE is denied by publish token 15's deniedCountries",
      source: 'publish token 15',
    });
    out = countryRule(req(), NONE, ctx('US', two));
    assert.equal(out.reason, 'allowed');
    assert.deepEqual(out.rule, {
      rule: 'country allowed',
      reason: 'country_not_allowed',
      result: 'pass',
      detail: "country US: passes publish token 12's deniedCountries and publish token 15's deniedCountries",
      source: 'publish tokens 12, 15',
    });
  });

  it('an allow list refuses other and unknown countries; a deny list lets an unknown country pass', () => {
    const allows = publishSide([12, { allowed: ['FR', 'DE'] }]);
    assert.equal(countryRule(req(), NONE, ctx('FR', allows)).reason, 'allowed');
    assert.deepEqual(countryRule(req(), NONE, ctx('US', allows)).rule.detail, "country US is not in publish token 12's allowedCountries");
    assert.deepEqual(
      countryRule(req(), NONE, ctx(undefined, allows)).rule.detail,
      "the client country is unknown, and publish token 12's allowedCountries allows only some countries",
    );
    const denies = accountDefault({ denied: ['US'] });
    const unknown = countryRule(req(), NONE, ctx(undefined, denies));
    assert.deepEqual([unknown.reason, unknown.rule.detail, unknown.rule.source], ['allowed', 'country unknown: passes the account default deniedCountries', 'account default']);
    assert.equal(countryRule(req(), NONE, ctx('US', denies)).rule.detail, 'country US is denied by the account default deniedCountries');
  });

  it("a subscribe token's own lists override the lists it would inherit; without any it inherits", () => {
    const inherited = publishSide([12, { denied: ['FR'] }]);
    const own: Credential = { type: 'token', token: token({ allowedCountries: ['FR'] }) };
    let out = countryRule(req({ token: 'x' }), own, ctx('FR', inherited));
    assert.deepEqual([out.reason, out.rule.source], ['allowed', 'subscribe token 7']);
    out = countryRule(req({ token: 'x' }), own, ctx('US', inherited));
    assert.deepEqual([out.reason, out.rule.detail], ['country_not_allowed', "country US is not in subscribe token 7's allowedCountries"]);
    const plain: Credential = { type: 'token', token: token() };
    out = countryRule(req({ token: 'x' }), plain, ctx('FR', inherited));
    assert.deepEqual([out.reason, out.rule.source], ['country_not_allowed', 'publish token 12']);
    // a self-signed JWT follows its parent's lists
    const jwt: Credential = { type: 'jwt', parent: token({ deniedCountries: ['US'] }), claims: { tokenId: 7, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [], exp: NOW / 1000 + 600 } };
    out = countryRule(req({ token: 'x' }), jwt, ctx('US', inherited));
    assert.deepEqual([out.reason, out.rule.source], ['country_not_allowed', 'subscribe token 7']);
  });

  it('never restricts a publisher, whatever its token or the account says, and says why', () => {
    const pub = (over: Partial<TokenRecord>): Credential => ({ type: 'token', token: token({ kind: 'publish', ...over }) });
    const lookups = { n: 0 };
    let out = countryRule(req({ action: 'publish', token: 'x' }), pub({ allowedCountries: ['FR'] }), ctx('US', accountDefault({ denied: ['US'] }), lookups));
    assert.deepEqual([out.reason, out.rule.result, out.rule.detail], ['allowed', 'skipped', 'publishers are not restricted by country; these lists apply to viewers']);
    out = countryRule(req({ action: 'publish', token: 'x' }), pub({}), ctx('US', undefined, lookups));
    assert.deepEqual([out.reason, out.rule.result, out.rule.detail], ['allowed', 'skipped', 'publishers are not restricted by country']);
    assert.equal(lookups.n, 0, 'no country looked up for a publisher');
  });

  it('looks the country up only when some list applies; a secured stream refuses before the country rule', () => {
    const lookups = { n: 0 };
    assert.equal(countryRule(req(), NONE, ctx('FR', undefined, lookups)).rule.detail, 'any country');
    assert.equal(countryRule(req(), NONE, ctx('FR', { source: 'publish tokens', lists: [] }, lookups)).rule.detail, 'any country');
    assert.equal(lookups.n, 0);
    const secured = { ...ctx('FR', publishSide([12, { denied: ['FR'] }]), lookups), secured: true };
    const out = countryRule(req(), NONE, secured);
    assert.deepEqual([out.reason, out.rule.result, out.rule.detail], ['token_required', 'skipped', 'an earlier check failed']);
    assert.equal(lookups.n, 0);
  });
});
