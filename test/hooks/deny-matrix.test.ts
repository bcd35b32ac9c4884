// Every refusal reason through every registered caller that decides, checking the exact answer
// each caller needs to refuse (status, body bytes), and the allow answer for the same request
// shape. The callers come from the registry: one registered without a request shape here fails.
import { describe, it, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { CALLERS } from '../../src/callers/registry.js';
import { REASONS, decision, type Reason } from '../../src/policy/types.js';
import type { Admission } from '../../src/callers/caller.js';
import { idChecked } from '../helpers/decision-id.js';

const OME_SECRET = 'k';
type Ask = (f: HookFixture, token: string | undefined, stream: string, ip: string) => Promise<request.Response>;

const ADAPTERS: Record<string, { ask: Ask; allowed: (r: request.Response) => void; denied: (r: request.Response, reason: string, message: string) => void }> = {
  'nginx-rtmp': {
    ask: (f, token, stream, ip) =>
      request(f.t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${ip}&clientid=1&call=publish&name=${stream}&type=live${token ? `&token=${token}` : ''}`),
    allowed: (r) => assert.equal(r.status, 200),
    denied: (r, _reason, message) => assert.deepEqual([r.status, r.text], [403, message]),
  },
  mediamtx: {
    ask: (f, token, stream, ip) =>
      request(f.t.app).post('/hooks/mediamtx/auth').send({ ip, user: '', password: '', token: token ?? '', action: 'publish', path: stream, protocol: 'srt', id: 'i1', query: '' }),
    allowed: (r) => assert.deepEqual([r.status, r.body], [200, { allowed: true }]),
    denied: (r, reason, message) => assert.deepEqual([r.status, r.body], [reason === 'token_required' ? 401 : 403, { allowed: false, reason, message }]),
  },
  srs: {
    ask: (f, token, stream, ip) =>
      request(f.t.app).post('/hooks/srs').send({ action: 'on_publish', client_id: 'c1', ip, vhost: '__defaultVhost__', app: 'live', tcUrl: 'rtmp://h/live', stream, param: token ? `?token=${token}` : '' }),
    allowed: (r) => assert.deepEqual([r.status, r.text], [200, '{"code":0}']),
    denied: (r, _reason, message) => assert.deepEqual([r.status, r.text], [403, JSON.stringify({ code: 403, message })]),
  },
  ome: {
    ask: (f, token, stream, ip) => {
      const raw = JSON.stringify({ client: { address: ip, port: 1 }, request: { direction: 'incoming', protocol: 'srt', status: 'opening', url: `srt://h:9999/app/${stream}${token ? `?token=${token}` : ''}` } });
      return request(f.t.app).post('/hooks/ome/admission').set('content-type', 'application/json').set('x-ome-signature', createHmac('sha1', OME_SECRET).update(raw).digest('base64url')).send(raw);
    },
    allowed: (r) => assert.deepEqual([r.status, r.body], [200, { allowed: true, reason: 'authorized' }]),
    denied: (r, reason) => assert.deepEqual([r.status, r.body], [200, { allowed: false, reason }]),
  },
  'auth-request': {
    // The client address comes from X-Forwarded-For: the test's loopback peer is a trusted proxy.
    ask: (f, token, stream, ip) =>
      request(f.t.app).get('/hooks/auth-request').set('x-forwarded-for', ip).set('x-original-uri', `/hls/${stream}/index.m3u8${token ? `?token=${token}` : ''}`),
    allowed: (r) => {
      assert.deepEqual([r.status, r.body, r.headers['cache-control'], r.headers['x-streamgate-stream']], [200, { allowed: true }, 'no-store', 'cam1']);
    },
    denied: (r, reason, message) =>
      assert.deepEqual([r.status, idChecked(r.body), r.headers['cache-control']], [reason.startsWith('token_') ? 401 : 403, { allowed: false, reason, message }, 'no-store']),
  },
  authorize: {
    ask: (f, token, stream, ip) => request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token, streamName: stream, clientIp: ip, protocol: 'srt' }),
    allowed: (r) => assert.deepEqual([r.status, r.body.allowed], [200, true]),
    denied: (r, reason, message) => {
      assert.equal(r.status, reason.startsWith('token_') ? 401 : 403);
      assert.deepEqual({ ...r.body, decisionId: undefined }, { allowed: false, reason, message, decisionId: undefined });
    },
  },
};

describe('refusals through every admission adapter', () => {
  let f: HookFixture;
  const tokens: Record<string, string> = {};
  before(async () => {
    // The app and its store read the mocked clock (from before they are made): 'expiring' expires
    // when the clock is moved on, without waiting for its second to pass.
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-05-01T10:00:00.000Z') });
    f = await hookFixture({
      // Each caller's allow is asked several times for cam1 with the same connection id and no end:
      // a second publisher on a live stream (publishConflict, refused by default) is not what this
      // matrix is about.
      enforcement: { publishConflict: 'allow' },
      hooks: {
        secret: '',
        trustedProxies: ['127.0.0.1', '::1'],
        omeSecret: OME_SECRET,
        accountInPath: false,
        mediamtx: { allowApiFrom: [], pathPrefix: '' },
        authRequest: { action: 'publish' },
      },
    });
    const mk = async (name: string, body: Record<string, unknown> = {}) => {
      const t = await f.token('publish', body);
      tokens[name] = t.token;
      return t.id;
    };
    await mk('valid');
    await f.api('put', `/api/publish_token/${await mk('disabled')}`, { isActive: false });
    await mk('expiring', { expires: 1 });
    await mk('ip', { allowedIpAddresses: ['10.0.0.0/8'] });
    await mk('country', { allowedCountries: ['FR'] });
    await mk('bind', { bindIpsOnUsage: 1 });
    await request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token: tokens.bind, streamName: 'cam1', clientIp: '192.0.2.200' });
    mock.timers.tick(1000); // 'expiring' is now expired
  });
  after(async () => {
    await f.close();
    mock.timers.reset();
  });

  const cases: Array<[string, string | undefined, string, string]> = [
    ['token_required', undefined, 'cam1', '203.0.113.7'],
    ['token_invalid', 'f'.repeat(64), 'cam1', '203.0.113.7'],
    ['token_disabled', 'disabled', 'cam1', '203.0.113.7'],
    ['token_expired', 'expiring', 'cam1', '203.0.113.7'],
    ['stream_not_allowed', 'valid', 'cam2', '203.0.113.7'],
    ['ip_not_allowed', 'ip', 'cam1', '203.0.113.7'],
    ['ip_not_allowed', 'bind', 'cam1', '203.0.113.7'],
  ];
  const MESSAGES: Record<string, string> = {
    token_required: 'Unauthorized: Token required',
    token_invalid: 'Unauthorized: Invalid token',
    token_disabled: 'Unauthorized: Token disabled',
    token_expired: 'Unauthorized: Token expired',
    stream_not_allowed: 'Unauthorized: Stream name not allowed',
    ip_not_allowed: 'Unauthorized: IP Address not allowed',
  };
  it('has a request shape for every registered caller that decides, and for no other', () => {
    const deciding = CALLERS.filter((c) => c.answer !== undefined).map((c) => c.name);
    assert.deepEqual(Object.keys(ADAPTERS).sort(), [...deciding].sort());
  });

  for (const caller of CALLERS.filter((c) => c.answer !== undefined)) {
    const name = caller.name;
    it(`${name}: allows a valid token and refuses each reason in its own format`, async () => {
      const a = ADAPTERS[name];
      assert.ok(a, `${name} is registered but has no request shape in this matrix`);
      a.allowed(await a.ask(f, tokens.valid, 'cam1', '203.0.113.7'));
      for (const [reason, tok, stream, ip] of cases) {
        const r = await a.ask(f, tok === undefined ? undefined : (tokens[tok] ?? tok), stream, ip);
        a.denied(r, reason, MESSAGES[reason]);
      }
      a.allowed(await a.ask(f, tokens.bind, 'cam1', '192.0.2.200'));
      // A publish token's country lists restrict the viewers of its streams, never its publisher:
      // a publisher from the US with an allowedCountries: [FR] token is admitted.
      a.allowed(await a.ask(f, tokens.country, 'cam1', '8.8.8.8'));
    });
  }
});

describe('every registered caller answers a refusal unlike its allow', () => {
  const admission: Admission = { access: { action: 'publish', streamName: 'cam1', protocol: 'rtmp' }, starts: true, credentialsGiven: true };
  const allowed = { ...decision('allowed', { streamName: 'cam1', accountId: 'a1', tokenId: 1 }), decisionId: 'd' };
  for (const caller of CALLERS.filter((c) => c.answer !== undefined)) {
    it(`${caller.name}: each refusal reason, and the store being down`, () => {
      const allow = caller.answer!(allowed, admission);
      assert.ok(allow.status >= 200 && allow.status < 300, `allow is ${allow.status}`);
      for (const reason of Object.keys(REASONS).filter((r) => r !== 'allowed') as Reason[]) {
        const refusal = caller.answer!({ ...decision(reason, { streamName: 'cam1' }), decisionId: 'd' }, admission);
        assert.notDeepEqual(refusal, allow, reason);
        // Callers that refuse by status: 503 when the store is down (they may retry), else 401/403.
        // A caller that is always answered 200 (OvenMediaEngine) reads allowed:false and the reason code.
        if (refusal.status === 200) assert.deepEqual(refusal.json, { allowed: false, reason }, reason);
        else assert.ok(reason === 'store_unavailable' ? refusal.status === 503 : [401, 403].includes(refusal.status), `${reason}: ${refusal.status}`);
      }
    });
  }
});
