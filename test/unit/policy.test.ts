// The decision table (docs/api.md#decision-table), case by case, with the clock injected.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyBind } from '../../src/policy/bind.js';
import { carriesOrigin, evaluate, readsIpRulesOnRtmp, type Credential, type EvalContext } from '../../src/policy/evaluate.js';
import type { AccessRequest, Reason } from '../../src/policy/types.js';
import { REASONS } from '../../src/policy/types.js';
import type { TokenRecord } from '../../src/domain/tokens.js';
import { tokenRecord } from '../helpers/records.js';
import { normaliseIp, originHost } from '../../src/domain/addresses.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const NOW_S = NOW / 1000;

const token = tokenRecord;

const req = (over: Partial<AccessRequest> = {}): AccessRequest => ({
  action: 'subscribe',
  token: 'x',
  streamName: 'cam1',
  protocol: 'webrtc',
  ...over,
});

const ctx = (over: Partial<EvalContext> & { country?: string } = {}): EvalContext => ({
  now: NOW,
  secured: false,
  rtmpIpFilters: 'enforce',
  countryOf: () => over.country,
  ...over,
});

const tok = (over: Partial<TokenRecord> = {}): Credential => ({ type: 'token', token: token(over) });

function reasonOf(r: AccessRequest, c: Credential, x: EvalContext = ctx()): Reason {
  return evaluate(r, c, x).decision.reason;
}

describe('policy: the ordered checks', () => {
  const cases: Array<[string, AccessRequest, Credential, EvalContext, Reason]> = [
    ['publish without a token', req({ action: 'publish', token: undefined }), { type: 'none' }, ctx(), 'token_required'],
    ['viewing a secured stream without a token', req({ token: undefined }), { type: 'none' }, ctx({ secured: true }), 'token_required'],
    ['viewing an open stream without a token', req({ token: undefined }), { type: 'none' }, ctx(), 'allowed'],
    ['an unknown token', req(), { type: 'invalid', detail: 'unknown token' }, ctx(), 'token_invalid'],
    ['a subscribe token used to publish', req({ action: 'publish' }), tok(), ctx(), 'token_invalid'],
    ['a publish token used to subscribe', req(), tok({ kind: 'publish' }), ctx(), 'token_invalid'],
    ['a disabled token', req(), tok({ isActive: false }), ctx(), 'token_disabled'],
    ['a disabled and expired token (disabled is checked first)', req(), tok({ isActive: false, expiresOn: '2026-01-02T00:00:00.000Z' }), ctx(), 'token_disabled'],
    ['a token expiring exactly now', req(), tok({ expiresOn: new Date(NOW).toISOString() }), ctx(), 'token_expired'],
    ['a token expiring one ms from now', req(), tok({ expiresOn: new Date(NOW + 1).toISOString() }), ctx(), 'allowed'],
    ['a name outside the streams', req({ streamName: 'cam2' }), tok(), ctx(), 'stream_not_allowed'],
    ['names are case-sensitive', req({ streamName: 'CAM1' }), tok(), ctx(), 'stream_not_allowed'],
    ['regex is a full match: cam.* vs xcam1', req({ streamName: 'xcam1' }), tok({ streams: [{ streamName: 'cam.*', isRegex: true }] }), ctx(), 'stream_not_allowed'],
    ['regex cam[0-9]+ matches cam12', req({ streamName: 'cam12' }), tok({ streams: [{ streamName: 'cam[0-9]+', isRegex: true }] }), ctx(), 'allowed'],
    ['regex cam[0-9]+ does not match cam12x', req({ streamName: 'cam12x' }), tok({ streams: [{ streamName: 'cam[0-9]+', isRegex: true }] }), ctx(), 'stream_not_allowed'],
    ['an exact entry is not a pattern', req({ streamName: 'camX' }), tok({ streams: [{ streamName: 'cam.', isRegex: false }] }), ctx(), 'stream_not_allowed'],
    ['*.example.com allows a.example.com', req({ origin: 'a.example.com' }), tok({ allowedOrigins: ['*.example.com'] }), ctx(), 'allowed'],
    ['*.example.com allows a.b.example.com', req({ origin: 'a.b.example.com' }), tok({ allowedOrigins: ['*.example.com'] }), ctx(), 'allowed'],
    ['*.example.com refuses example.com', req({ origin: 'example.com' }), tok({ allowedOrigins: ['*.example.com'] }), ctx(), 'origin_not_allowed'],
    ['example.com allows example.com', req({ origin: 'example.com' }), tok({ allowedOrigins: ['example.com'] }), ctx(), 'allowed'],
    ['no origin with a non-empty list', req({ origin: undefined }), tok({ allowedOrigins: ['example.com'] }), ctx(), 'origin_not_allowed'],
    ['any origin with an empty list', req({ origin: 'evil.com' }), tok(), ctx(), 'allowed'],
    ['an address inside a CIDR', req({ clientIp: '10.1.2.3' }), tok({ allowedIpAddresses: ['10.1.2.0/24'] }), ctx(), 'allowed'],
    ['::ffff:10.1.2.3 against 10.1.2.0/24', req({ clientIp: normaliseIp('::ffff:10.1.2.3') }), tok({ allowedIpAddresses: ['10.1.2.0/24'] }), ctx(), 'allowed'],
    ['an address outside the list', req({ clientIp: '10.1.3.1' }), tok({ allowedIpAddresses: ['10.1.2.0/24', '192.0.2.7'] }), ctx(), 'ip_not_allowed'],
    ['an IPv6 client against IPv4 rules', req({ clientIp: '2001:db8::1' }), tok({ allowedIpAddresses: ['0.0.0.0/0'] }), ctx(), 'ip_not_allowed'],
    ['no client address with a non-empty list', req({ clientIp: undefined }), tok({ allowedIpAddresses: ['10.0.0.0/8'] }), ctx(), 'ip_not_allowed'],
    ['RTMP with rtmpIpFilters enforce', req({ action: 'publish', protocol: 'rtmp', clientIp: '10.9.9.9' }), tok({ kind: 'publish', allowedIpAddresses: ['10.1.2.0/24'] }), ctx(), 'ip_not_allowed'],
    ['RTMP with rtmpIpFilters ignore', req({ action: 'publish', protocol: 'rtmp', clientIp: '10.9.9.9' }), tok({ kind: 'publish', allowedIpAddresses: ['10.1.2.0/24'] }), ctx({ rtmpIpFilters: 'ignore' }), 'allowed'],
    ['ignore applies to RTMP only', req({ action: 'publish', protocol: 'srt', clientIp: '10.9.9.9' }), tok({ kind: 'publish', allowedIpAddresses: ['10.1.2.0/24'] }), ctx({ rtmpIpFilters: 'ignore' }), 'ip_not_allowed'],
    ['an allowed country', req({ clientIp: '8.8.8.8' }), tok({ allowedCountries: ['US'] }), ctx({ country: 'US' }), 'allowed'],
    ['a country not allowed', req({ clientIp: '8.8.8.8' }), tok({ allowedCountries: ['FR'] }), ctx({ country: 'US' }), 'country_not_allowed'],
    ['an unknown country with an allow list', req({ clientIp: '10.0.0.1' }), tok({ allowedCountries: ['FR'] }), ctx(), 'country_not_allowed'],
    ['a denied country', req({ clientIp: '8.8.8.8' }), tok({ deniedCountries: ['US'] }), ctx({ country: 'US' }), 'country_not_allowed'],
    ['a country not denied', req({ clientIp: '8.8.8.8' }), tok({ deniedCountries: ['FR'] }), ctx({ country: 'US' }), 'allowed'],
    ['an unknown country with a deny list', req({ clientIp: '10.0.0.1' }), tok({ deniedCountries: ['FR'] }), ctx(), 'allowed'],
    ['bind on usage without a client address', req({ clientIp: undefined }), tok({ bindIpsOnUsage: 1 }), ctx(), 'ip_not_allowed'],
  ];
  for (const [name, r, c, x, expected] of cases) {
    it(`${name} → ${expected}`, () => {
      const ev = evaluate(r, c, x);
      assert.equal(ev.decision.reason, expected);
      assert.equal(ev.decision.allowed, expected === 'allowed');
      assert.equal(ev.decision.status, REASONS[expected].status);
      assert.equal(ev.decision.message, REASONS[expected].message);
    });
  }

  it('uses the exact hosted messages and statuses', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(REASONS).map(([k, v]) => [k, `${v.status} ${v.message}`])),
      {
        allowed: '200 Allowed',
        token_required: '401 Unauthorized: Token required',
        token_invalid: '401 Unauthorized: Invalid token',
        token_disabled: '401 Unauthorized: Token disabled',
        token_expired: '401 Unauthorized: Token expired',
        stream_not_allowed: '403 Unauthorized: Stream name not allowed',
        origin_not_allowed: '403 Unauthorized: Origin not allowed',
        ip_not_allowed: '403 Unauthorized: IP Address not allowed',
        signature_invalid: '403 Unauthorized: Invalid signature',
        signature_expired: '403 Unauthorized: Signature expired',
        country_not_allowed: '403 Unauthorized: Country not allowed',
        session_limit: '403 Unauthorized: Too many sessions for this token',
        uses_exhausted: '403 Unauthorized: Token already used',
        stream_taken: '403 Unauthorized: Stream already being published',
        session_terminated: '403 Unauthorized: Session terminated',
        session_ended: '401 Unauthorized: Viewer session ended, ask again with the token',
        credential_invalid: '401 Unauthorized: Invalid session credential',
        credential_expired: '401 Unauthorized: Session credential expired',
        credential_address: '403 Unauthorized: Session credential presented from another address',
        store_unavailable: '503 Service Unavailable: token store unreachable',
      },
    );
  });

  it('asks for a bind only when every other check passed, and reports every rule', () => {
    const ok = evaluate(req({ clientIp: '10.0.0.1' }), tok({ bindIpsOnUsage: 2 }), ctx());
    assert.deepEqual(ok.bind?.address, '10.0.0.1');
    assert.deepEqual(
      ok.rules.map((r) => `${r.rule}:${r.result}`),
      [
        'token present:pass',
        'token valid:pass',
        'token active:pass',
        'not expired:pass',
        'no session cut:pass',
        'stream name allowed:pass',
        'origin allowed:skipped',
        'IP address allowed:skipped',
        'country allowed:skipped',
        'session limits:skipped',
        'bind on usage:pending',
      ],
    );
    const bad = evaluate(req({ clientIp: '10.0.0.1', streamName: 'nope' }), tok({ bindIpsOnUsage: 2 }), ctx());
    assert.equal(bad.bind, undefined);
    assert.equal(bad.decision.reason, 'stream_not_allowed');
    assert.deepEqual(bad.rules.slice(5).map((r) => r.result), ['fail', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
    const rtmp = evaluate(req({ action: 'publish', protocol: 'rtmp', clientIp: '10.0.0.1' }), tok({ kind: 'publish', bindIpsOnUsage: 1 }), ctx({ rtmpIpFilters: 'ignore' }));
    assert.equal(rtmp.bind, undefined);
    assert.equal(rtmp.decision.allowed, true);
  });

  it('refuses a held credential (a cut session) until the hold ends, from the held address only when it names one', () => {
    const at = ctx().now;
    const held = tok({ holds: [{ until: new Date(at + 60_000).toISOString(), clientIp: '10.0.0.1' }] });
    const d = evaluate(req({ clientIp: '10.0.0.1' }), held, ctx());
    assert.deepEqual([d.decision.reason, d.decision.status], ['session_terminated', 403]);
    assert.match(d.rules.find((r) => r.rule === 'no session cut')!.detail!, /from 10\.0\.0\.1 was cut; refused until/);
    assert.equal(evaluate(req({ clientIp: '10.0.0.2' }), held, ctx()).decision.allowed, true, 'another address');
    assert.equal(evaluate(req({ clientIp: '10.0.0.1' }), held, ctx({ now: at + 60_000 })).decision.allowed, true, 'the hold is over');
    const anyAddress = tok({ holds: [{ until: new Date(at + 1000).toISOString() }] });
    assert.equal(evaluate(req({ clientIp: '10.0.0.9' }), anyAddress, ctx()).decision.reason, 'session_terminated');
  });

  it('limits: pending for a caller that registers sessions, refused where none can be kept, carried on the decision', () => {
    const limited = tok({ maxConcurrentSessions: 2, maxUses: 5 });
    const media = evaluate(req({ admission: 'session' }), limited, ctx());
    assert.equal(media.decision.allowed, true);
    assert.deepEqual(media.decision.limits, { maxConcurrent: 2, maxUses: 5 });
    assert.deepEqual(media.rules.find((r) => r.rule === 'session limits'), {
      rule: 'session limits',
      reason: 'session_limit',
      result: 'pending',
      detail: "at most 2 at once, 5 use(s): counted when the media server's session is admitted",
    });
    const http = evaluate(req({ admission: 'none' }), limited, ctx());
    assert.deepEqual([http.decision.reason, http.decision.status, http.decision.message], ['session_limit', 403, 'Unauthorized: This token limits its sessions, and HTTP streaming needs viewer sessions']);
    assert.match(http.rules.find((r) => r.rule === 'session limits')!.detail!, /HTTP streaming needs viewer sessions/);
    assert.equal(evaluate(req({}), limited, ctx()).decision.allowed, true, 'the director and the check endpoint are no admission');
    assert.equal(evaluate(req({ admission: 'none' }), tok({}), ctx()).decision.limits, undefined);
  });

  it('looks the country up only when a rule needs it', () => {
    let lookups = 0;
    const x = ctx({
      countryOf: () => {
        lookups++;
        return 'US';
      },
    });
    evaluate(req({ clientIp: '8.8.8.8' }), tok(), x);
    assert.equal(lookups, 0);
    evaluate(req({ clientIp: '8.8.8.8' }), tok({ deniedCountries: ['FR'] }), x);
    assert.equal(lookups, 1);
  });

  it('carries the token id, tracking id and publish flags in the decision', () => {
    const d = evaluate(req(), tok({ tracking: { trackingId: 'grp' } }), ctx()).decision;
    assert.deepEqual(d, { allowed: true, status: 200, reason: 'allowed', message: 'Allowed', streamName: 'cam1', accountId: 'ACCT01', tokenId: 7, tokenRev: 1, trackingId: 'grp' });
    const p = evaluate(req({ action: 'publish' }), tok({ kind: 'publish', record: true, subscribeRequiresAuth: false }), ctx()).decision;
    assert.equal(p.record, true);
    assert.equal(p.subscribeRequiresAuth, false);
  });
});

describe('policy: origins where a protocol can carry one, address rules on RTMP as the account says', () => {
  const ruleOf = (r: AccessRequest, c: Credential, x: EvalContext, rule: string) => evaluate(r, c, x).rules.find((o) => o.rule === rule);
  const STREAMING = ['rtmp', 'RTMP', 'rtmps', 'rtsp', 'rtsps', 'srt'];
  const HTTP_LIKE = ['webrtc', 'hls', 'http', 'dash', 'generic', 'unknown'];

  it('RTMP, RTSP and SRT (and their TLS forms, any case) skip origin rules: no origin is no refusal there, for publishers and viewers', () => {
    for (const protocol of STREAMING) {
      for (const action of ['publish', 'subscribe'] as const) {
        const r = req({ action, protocol, origin: undefined });
        const c = tok({ kind: action, allowedOrigins: ['studio.example.com'] });
        const ev = evaluate(r, c, ctx());
        assert.equal(ev.decision.reason, 'allowed', `${action} over ${protocol}`);
        assert.deepEqual(ruleOf(r, c, ctx(), 'origin allowed'), {
          rule: 'origin allowed',
          reason: 'origin_not_allowed',
          result: 'skipped',
          detail: `${protocol.toUpperCase()} carries no origin: origin rules apply to HTTP and the director only`,
        });
      }
    }
    // an origin a caller names anyway is not one the protocol carried: skipped as well
    assert.equal(reasonOf(req({ protocol: 'rtsp', origin: 'evil.example.net' }), tok({ allowedOrigins: ['studio.example.com'] })), 'allowed');
    // a self-signed JWT's own origin list too
    const jwt: Credential = {
      type: 'jwt',
      parent: token(),
      claims: { tokenId: 7, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: ['a.example.com'], allowedIpAddresses: [], exp: NOW_S + 60 },
    };
    assert.equal(reasonOf(req({ protocol: 'srt' }), jwt), 'allowed');
    assert.equal(reasonOf(req({ protocol: 'hls' }), jwt), 'origin_not_allowed');
  });

  it('every other protocol (the director, HTTP delivery, a caller that names none) still needs an allowed Origin or Referer', () => {
    for (const protocol of HTTP_LIKE) {
      assert.equal(reasonOf(req({ protocol, origin: undefined }), tok({ allowedOrigins: ['studio.example.com'] })), 'origin_not_allowed', protocol);
      assert.equal(reasonOf(req({ protocol, origin: 'evil.example.net' }), tok({ allowedOrigins: ['studio.example.com'] })), 'origin_not_allowed', protocol);
      assert.equal(reasonOf(req({ protocol, origin: 'studio.example.com' }), tok({ allowedOrigins: ['studio.example.com'] })), 'allowed', protocol);
    }
    assert.deepEqual(
      [...STREAMING, ...HTTP_LIKE].map((p) => carriesOrigin(p)),
      [...STREAMING.map(() => false), ...HTTP_LIKE.map(() => true)],
    );
  });

  it('ipRulesOnRtmp off: RTMP, RTSP and SRT skip allowedIpAddresses and bind on usage; other protocols keep them', () => {
    const outside = { clientIp: '10.9.9.9' };
    const listed = tok({ kind: 'publish', allowedIpAddresses: ['10.1.2.0/24'] });
    for (const protocol of STREAMING) {
      const r = req({ action: 'publish', protocol, ...outside });
      assert.equal(reasonOf(r, listed, ctx({ ipRulesOnRtmp: false })), 'allowed', protocol);
      assert.equal(ruleOf(r, listed, ctx({ ipRulesOnRtmp: false }), 'IP address allowed')?.detail, `IP filters are not applied to ${protocol.toUpperCase()} (the account's ipRulesOnRtmp is off)`);
      // on (the default, or said), as before
      assert.equal(reasonOf(r, listed, ctx()), 'ip_not_allowed', protocol);
      assert.equal(reasonOf(r, listed, ctx({ ipRulesOnRtmp: true })), 'ip_not_allowed', protocol);
      // bind on usage: nothing bound, nothing asked
      const binding = evaluate(req({ action: 'publish', protocol, clientIp: '10.0.0.1' }), tok({ kind: 'publish', bindIpsOnUsage: 1 }), ctx({ ipRulesOnRtmp: false }));
      assert.equal(binding.bind, undefined, protocol);
      assert.equal(binding.decision.allowed, true);
      assert.equal(binding.rules.find((o) => o.rule === 'bind on usage')?.result, 'skipped');
      assert.equal(evaluate(req({ action: 'publish', protocol, clientIp: '10.0.0.1' }), tok({ kind: 'publish', bindIpsOnUsage: 1 }), ctx()).bind?.address, '10.0.0.1');
    }
    for (const protocol of HTTP_LIKE) {
      assert.equal(reasonOf(req({ protocol, ...outside }), tok({ allowedIpAddresses: ['10.1.2.0/24'] }), ctx({ ipRulesOnRtmp: false })), 'ip_not_allowed', protocol);
      assert.equal(evaluate(req({ protocol, clientIp: '10.0.0.1' }), tok({ bindIpsOnUsage: 1 }), ctx({ ipRulesOnRtmp: false })).bind?.address, '10.0.0.1', protocol);
    }
  });

  it('enforcement.rtmpIpFilters: ignore still lifts them on RTMP alone, whatever the account says', () => {
    const listed = tok({ kind: 'publish', allowedIpAddresses: ['10.1.2.0/24'] });
    const r = req({ action: 'publish', protocol: 'rtmp', clientIp: '10.9.9.9' });
    assert.equal(reasonOf(r, listed, ctx({ rtmpIpFilters: 'ignore', ipRulesOnRtmp: true })), 'allowed');
    assert.equal(ruleOf(r, listed, ctx({ rtmpIpFilters: 'ignore' }), 'IP address allowed')?.detail, 'IP filters are not applied to RTMP (enforcement.rtmpIpFilters: ignore)');
    assert.equal(reasonOf(req({ action: 'publish', protocol: 'rtsp', clientIp: '10.9.9.9' }), listed, ctx({ rtmpIpFilters: 'ignore' })), 'ip_not_allowed');
  });

  it('the account setting is read only for a streaming protocol and a token with address rules', () => {
    const jwt = (ips: string[]): Credential => ({
      type: 'jwt',
      parent: token(),
      claims: { tokenId: 7, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: ips, exp: NOW_S + 60 },
    });
    assert.deepEqual(
      [
        readsIpRulesOnRtmp(req({ protocol: 'rtmp' }), tok({ allowedIpAddresses: ['10.0.0.0/8'] })),
        readsIpRulesOnRtmp(req({ protocol: 'SRT' }), tok({ bindIpsOnUsage: 2 })),
        readsIpRulesOnRtmp(req({ protocol: 'rtsp' }), jwt(['10.0.0.1'])),
        readsIpRulesOnRtmp(req({ protocol: 'rtsp' }), jwt([])),
        readsIpRulesOnRtmp(req({ protocol: 'rtmp' }), tok()),
        readsIpRulesOnRtmp(req({ protocol: 'webrtc' }), tok({ allowedIpAddresses: ['10.0.0.0/8'] })),
        readsIpRulesOnRtmp(req({ protocol: 'rtmp', token: undefined }), { type: 'none' }),
        readsIpRulesOnRtmp(req({ protocol: 'rtmp' }), { type: 'invalid', detail: 'unknown token' }),
      ],
      [true, true, true, false, false, false, false, false],
    );
  });

  it('carries the token\'s originCluster in the decision, for the director', () => {
    assert.equal(evaluate(req(), tok({ originCluster: 'eu-1' }), ctx()).decision.originCluster, 'eu-1');
    assert.equal('originCluster' in evaluate(req(), tok(), ctx()).decision, false);
  });
});

describe('policy: self-signed subscribe JWTs', () => {
  const parent = (over: Partial<TokenRecord> = {}) => token({ streams: [{ streamName: 'cam.*', isRegex: true }], ...over });
  const jwt = (claims: Record<string, unknown> = {}, over: Partial<TokenRecord> = {}): Credential => ({
    type: 'jwt',
    parent: parent(over),
    claims: { tokenId: 7, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [], exp: NOW_S + 60, ...claims },
  });
  const cases: Array<[string, AccessRequest, Credential, Reason]> = [
    ['a valid JWT', req(), jwt(), 'allowed'],
    ['expired (beyond the 30 s tolerance)', req(), jwt({ exp: NOW_S - 31 }), 'token_expired'],
    ['expired within the tolerance', req(), jwt({ exp: NOW_S - 29 }), 'allowed'],
    ['no exp', req(), jwt({ exp: undefined }), 'token_invalid'],
    ['nbf in the future', req(), jwt({ nbf: NOW_S + 31 }), 'token_invalid'],
    ['iat in the future', req(), jwt({ iat: NOW_S + 120 }), 'token_invalid'],
    ['wrong tokenType', req(), jwt({ tokenType: 'Publish' }), 'token_invalid'],
    ['used to publish', req({ action: 'publish' }), jwt(), 'token_invalid'],
    ['parent is a publish token', req(), jwt({}, { kind: 'publish' }), 'token_invalid'],
    ['parent disabled', req(), jwt({}, { isActive: false }), 'token_disabled'],
    ['parent expired', req(), jwt({}, { expiresOn: '2026-05-01T00:00:00.000Z' }), 'token_expired'],
    ['a name other than the JWT names', req({ streamName: 'cam2' }), jwt(), 'stream_not_allowed'],
    ['a JWT name outside the parent streams', req({ streamName: 'other' }), jwt({ streamName: 'other' }), 'stream_not_allowed'],
    ['parent has a trackingId, JWT none', req(), jwt({}, { tracking: { trackingId: 'g' } }), 'token_invalid'],
    ['parent has a trackingId, JWT another', req(), jwt({ trackingId: 'h' }, { tracking: { trackingId: 'g' } }), 'token_invalid'],
    ['parent has a trackingId, JWT the same', req(), jwt({ trackingId: 'g' }, { tracking: { trackingId: 'g' } }), 'allowed'],
    ['JWT origins narrow the parent', req({ origin: 'b.example.com' }), jwt({ allowedOrigins: ['a.example.com'] }, { allowedOrigins: ['*.example.com'] }), 'origin_not_allowed'],
    ['both origin lists pass', req({ origin: 'a.example.com' }), jwt({ allowedOrigins: ['a.example.com'] }, { allowedOrigins: ['*.example.com'] }), 'allowed'],
    ['JWT addresses narrow the parent', req({ clientIp: '10.0.0.9' }), jwt({ allowedIpAddresses: ['10.0.0.1'] }, { allowedIpAddresses: ['10.0.0.0/8'] }), 'ip_not_allowed'],
  ];
  for (const [name, r, c, expected] of cases) {
    it(`${name} → ${expected}`, () => assert.equal(reasonOf(r, c), expected));
  }

  it('reports the JWT tracking id (or the parent\'s) and marks the decision self-signed', () => {
    const d = evaluate(req(), jwt({ trackingId: 'viewer-9' }), ctx()).decision;
    assert.equal(d.trackingId, 'viewer-9');
    assert.equal(d.selfSigned, true);
    assert.equal(d.tokenId, 7);
  });
});

describe('request normalisation', () => {
  it('takes the host of Origin/Referer values, lower-cased', () => {
    assert.equal(originHost('https://A.Example.com:8443/path?q'), 'a.example.com');
    assert.equal(originHost('http://example.com'), 'example.com');
    assert.equal(originHost('Example.COM'), 'example.com');
    assert.equal(originHost('null'), undefined);
    assert.equal(originHost(''), undefined);
    assert.equal(originHost('https://'), undefined);
    assert.equal(originHost('not a host!'), undefined);
  });

  it('turns IPv4-mapped IPv6 into IPv4 and refuses garbage', () => {
    assert.equal(normaliseIp('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(normaliseIp('2001:DB8::1'), '2001:db8::1');
    assert.equal(normaliseIp('10.0.0.1'), '10.0.0.1');
    assert.equal(normaliseIp('nope'), undefined);
    assert.equal(normaliseIp(undefined), undefined);
  });
});

describe('bind with session limits', () => {
  it('settles the bind rule, not the pending session-limits rule before it', () => {
    const ev = evaluate(req({ clientIp: '10.0.0.1', admission: 'session' }), tok({ bindIpsOnUsage: 1, maxConcurrentSessions: 2 }), ctx());
    const after = applyBind(ev, 'full', 'every slot is bound to another address');
    assert.deepEqual(
      after.rules.slice(-2).map((r) => `${r.rule}:${r.result}`),
      ['session limits:pending', 'bind on usage:fail'],
    );
    assert.equal(after.decision.reason, 'ip_not_allowed');
  });
});
