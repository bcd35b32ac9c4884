// The director's MediaMTX permissions: every JWT names one exact path MediaMTX accepts, never a
// pattern, whatever the token's stream rules match; names that cannot be one are a 400 that decides
// nothing and binds nothing.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';
import { loadConfig } from '../../src/config/load.js';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

const REGEX = "a name starting with '~' is read by MediaMTX as a regular expression";
const CHARS = 'MediaMTX paths hold only letters, digits, _ . - and /';
const EDGE_SLASH = 'a MediaMTX path neither starts nor ends with /';
const EMPTY_SEGMENT = 'a MediaMTX path has no empty segment (//)';
const DOT_SEGMENT = 'a MediaMTX path has no . or .. segment';

/** Names no director JWT may carry, and the reason each answer gives. */
const REFUSED: Array<[string, string]> = [
  ['~.*', REGEX],
  ['~^live/premium$', REGEX],
  ['~', REGEX],
  ['~(?i)PREMIUM', REGEX],
  ['cam1|premium', CHARS],
  ['cam.*', CHARS],
  ['cam~1', CHARS],
  ['cam 1', CHARS],
  ['cam:1', CHARS],
  ['caméra', CHARS],
  ['cam%2F1', CHARS],
  ['cam\\1', CHARS],
  ['/premium', EDGE_SLASH],
  ['premium/', EDGE_SLASH],
  ['a//premium', EMPTY_SEGMENT],
  ['.', DOT_SEGMENT],
  ['..', DOT_SEGMENT],
  ['open/../premium', DOT_SEGMENT],
  ['./premium', DOT_SEGMENT],
];

describe('director: MediaMTX permissions are exact paths', () => {
  let f: HookFixture;
  let acctInPath: HookFixture;
  const director = (app: HookFixture, action: 'publish' | 'subscribe', body: object, token?: string) => {
    const r = request(app.t.app).post(`/api/director/${action}`);
    return (token ? r.set('authorization', `Bearer ${token}`) : r).send(body);
  };
  const refusal = (message: string) => ({ status: 'fail', data: { message: 'Validation errors', errors: { streamName: [message] } } });

  before(async () => {
    const hooks = { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', mediamtx: { allowApiFrom: [], pathPrefix: '' } };
    f = await hookFixture({ hooks: { ...hooks, accountInPath: false }, director: { mediamtxPathPrefix: '' } });
    acctInPath = await hookFixture({ hooks: { ...hooks, accountInPath: true }, director: { mediamtxPathPrefix: 'live/' } });
  });

  it("a token-less subscribe to '~.*' is a 400 naming streamName (it was a 200 with a read-everything JWT)", async () => {
    const r = await director(f, 'subscribe', { streamName: '~.*', streamAccountId: f.acct.id });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, refusal(REGEX));
  });

  it('every name outside MediaMTX exact paths is refused on subscribe (with and without a token) and publish', async () => {
    const sub = await f.token('subscribe', { streams: [{ streamName: '.*', isRegex: true }] });
    const pub = await f.token('publish', { streams: [{ streamName: '.*', isRegex: true }, { streamName: '~.*', isRegex: true }] });
    for (const [name, message] of REFUSED) {
      const calls = [
        director(f, 'subscribe', { streamName: name, streamAccountId: f.acct.id }),
        director(f, 'subscribe', { streamName: name }, sub.token),
        director(f, 'publish', { streamName: name, streamType: 'WebRtc' }, pub.token),
        director(acctInPath, 'subscribe', { streamName: name, streamAccountId: acctInPath.acct.id }),
      ];
      for (const r of await Promise.all(calls)) {
        assert.equal(r.status, 400, name);
        assert.deepEqual(r.body, refusal(message), name);
      }
    }
  });

  it('a publish token whose patterns match ~… gets a publish permission for exactly the stream asked', async () => {
    const pub = await f.token('publish', { streams: [{ streamName: '~.*', isRegex: true }, { streamName: '.*', isRegex: true }] });
    const r = await director(f, 'publish', { streamName: 'cam1', streamType: 'WebRtc' }, pub.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(claimsOf(r.body.data.jwt).mediamtx_permissions, [{ action: 'publish', path: 'cam1' }]);
  });

  it('accepted names become the exact path: prefix, account segment with accountInPath, then the name', async () => {
    const names = ['cam1', 'cam.1', 'a-b_c.D9', 'floor2/cam-1', '...', 'x.'];
    for (const name of names) {
      const open = await director(f, 'subscribe', { streamName: name, streamAccountId: f.acct.id });
      assert.equal(open.status, 200, `${name}: ${JSON.stringify(open.body)}`);
      assert.deepEqual(claimsOf(open.body.data.jwt).mediamtx_permissions, [{ action: 'read', path: name }], name);
      const tenant = await director(acctInPath, 'subscribe', { streamName: name, streamAccountId: acctInPath.acct.id });
      assert.equal(tenant.status, 200, name);
      assert.deepEqual(claimsOf(tenant.body.data.jwt).mediamtx_permissions, [{ action: 'read', path: `live/${acctInPath.acct.id}/${name}` }], name);
    }
  });

  it('a refused name decides nothing: no bind slot is spent', async () => {
    const bound = await f.token('subscribe', { streams: [{ streamName: '.*', isRegex: true }], bindIpsOnUsage: 1 });
    const r = await director(f, 'subscribe', { streamName: '~.*' }, bound.token).set('x-forwarded-for', '203.0.113.7');
    assert.deepEqual(r.body, refusal(REGEX));
    assert.deepEqual(await f.t.services.store.boundAddresses(f.acct.id, bound.id), []);
    const ok = await director(f, 'subscribe', { streamName: 'cam1' }, bound.token).set('x-forwarded-for', '203.0.113.7');
    assert.equal(ok.status, 200);
    assert.deepEqual(await f.t.services.store.boundAddresses(f.acct.id, bound.id), ['203.0.113.7']);
  });

  it('refuses to start with a mediamtxPathPrefix that would not keep the path exact', () => {
    for (const prefix of ['~', '~live/', '/live/', 'live//', '../', 'li ve/']) {
      assert.throws(() => loadConfig({ env: {}, overrides: { director: { mediamtxPathPrefix: prefix } } }), /mediamtxPathPrefix/, prefix);
    }
    for (const prefix of ['', 'live/', 'live', 'a/b-c_d.e/']) {
      assert.equal(loadConfig({ env: {}, overrides: { director: { mediamtxPathPrefix: prefix } } }).director.mediamtxPathPrefix, prefix);
    }
  });
});
