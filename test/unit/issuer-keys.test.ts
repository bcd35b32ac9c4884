// The issuer key source (docs/api.md#credential-issuers) with a stand-in fetch held on promises the
// test releases, on node:test's mocked clock: the Cache-Control max-age clamped, the last good set
// kept through a failed refresh, an unknown kid refetched at most once per cooldown, one fetch in
// flight per URL shared by its callers, and a hanging URL that delays no other issuer.
import { before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { JWK } from 'jose';
import { IssuerKeys, maxAgeOf, type JwksResponse } from '../../src/enforce/issuer-keys.js';
import { verifyIssuerJwt } from '../../src/policy/issuer-jwt.js';
import { KEY_OPTIONS, issuerRecord, keyPair, sign, type TestKey } from '../helpers/issuers.js';

const URL_A = 'https://idp-a.example/.well-known/jwks.json';
const URL_B = 'https://idp-b.example/jwks';

interface Call {
  url: string;
  signal: AbortSignal;
  resolve: (r: JwksResponse) => void;
  reject: (e: Error) => void;
}

/** A fetch that records each call and answers only when the test says so. */
function heldFetch() {
  const calls: Call[] = [];
  const fetch = (url: string, signal: AbortSignal) =>
    new Promise<JwksResponse>((resolve, reject) => {
      calls.push({ url, signal, resolve, reject });
    });
  return { calls, fetch };
}


/** Lets the promise jobs queued so far (and those they queue) run. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

let k1: TestKey;
let k2: TestKey;

before(async () => {
  [k1, k2] = await Promise.all([keyPair('ES256', 'k1'), keyPair('ES256', 'k2')]);
});

const issuerA = (over = {}) => issuerRecord({ id: 1, algorithms: ['ES256'], jwksUrl: URL_A, ...over });
const kids = (r: Awaited<ReturnType<IssuerKeys['keysFor']>>) => ('problem' in r ? r : r.keys.map((k) => k.kid));
const set = (...keys: JWK[]) => ({ keys });

function source(t: TestContext) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
  const held = heldFetch();
  return { held, keys: new IssuerKeys({ ...KEY_OPTIONS, fetch: held.fetch }) };
}

describe('issuer keys: a JWKS URL', () => {
  it('ES256 with a JWKS: fetched once, then answered from the cache', async (t) => {
    const { held, keys } = source(t);
    const jwt = await sign(k1, { sub: 'cam1', exp: 2000 }, { kid: 'k1' });
    const first = verifyIssuerJwt(jwt, issuerA(), keys, 1000);
    await settle();
    assert.deepEqual(held.calls.map((c) => c.url), [URL_A]);
    held.calls[0].resolve({ body: set(k1.jwk, k2.jwk), maxAgeSeconds: 300 });
    assert.deepEqual(await first, { issuerId: 1, stream: 'cam1', sub: 'cam1', exp: 2000, kid: 'k1' });
    assert.deepEqual(await verifyIssuerJwt(jwt, issuerA(), keys, 1000), { issuerId: 1, stream: 'cam1', sub: 'cam1', exp: 2000, kid: 'k1' });
    assert.equal(held.calls.length, 1);
  });

  it('many callers of a URL with no set yet share one fetch', async (t) => {
    const { held, keys } = source(t);
    const waiting = Array.from({ length: 50 }, () => keys.keysFor(issuerA(), 'k1'));
    await settle();
    assert.equal(held.calls.length, 1);
    held.calls[0].resolve({ body: set(k1.jwk), maxAgeSeconds: null });
    assert.deepEqual(await Promise.all(waiting).then((all) => all.map(kids)), Array.from({ length: 50 }, () => ['k1']));
  });

  it('max-age is clamped to [jwksMinCacheSeconds, jwksMaxCacheSeconds]; past it, the refresh is waited for', async (t) => {
    const { held, keys } = source(t);
    const p = keys.keysFor(issuerA(), null);
    await settle();
    held.calls[0].resolve({ body: set(k1.jwk), maxAgeSeconds: 5 });
    assert.deepEqual(kids(await p), ['k1']);
    t.mock.timers.tick(59_999);
    assert.deepEqual(kids(await keys.keysFor(issuerA(), null)), ['k1']);
    assert.equal(held.calls.length, 1, 'fresh for 60 s, not 5');
    t.mock.timers.tick(1);
    // Past its max-age the set is asked for again, and the caller waits: the answer is the new set.
    const after = keys.keysFor(issuerA(), null);
    await settle();
    assert.equal(held.calls.length, 2);
    held.calls[1].resolve({ body: set(k2.jwk), maxAgeSeconds: 86_400 });
    assert.deepEqual(kids(await after), ['k2']);
    t.mock.timers.tick(3_599_999);
    await keys.keysFor(issuerA(), null);
    assert.equal(held.calls.length, 2, 'fresh for 3600 s, not a day');
    t.mock.timers.tick(1);
    const next = keys.keysFor(issuerA(), null);
    await settle();
    assert.equal(held.calls.length, 3);
    held.calls[2].resolve({ body: set(k1.jwk), maxAgeSeconds: 60 });
    assert.deepEqual(kids(await next), ['k1']);
  });

  it('a failed refresh keeps the last good set, and is tried again only after the cooldown', async (t) => {
    const { held, keys } = source(t);
    const p = keys.keysFor(issuerA(), null);
    await settle();
    held.calls[0].resolve({ body: set(k1.jwk), maxAgeSeconds: 60 });
    await p;
    t.mock.timers.tick(60_000);
    const refreshing = keys.keysFor(issuerA(), null);
    await settle();
    held.calls[1].reject(new Error('the JWKS URL answered 503'));
    assert.deepEqual(kids(await refreshing), ['k1']);
    t.mock.timers.tick(29_999);
    assert.deepEqual(kids(await keys.keysFor(issuerA(), null)), ['k1']);
    assert.equal(held.calls.length, 2);
    t.mock.timers.tick(1);
    const again = keys.keysFor(issuerA(), null);
    await settle();
    assert.equal(held.calls.length, 3);
    // A set that is not one (here a symmetric key) is a failed refresh too.
    held.calls[2].resolve({ body: set({ kty: 'oct', k: 'c2VjcmV0', kid: 'k9' }), maxAgeSeconds: 60 });
    assert.deepEqual(kids(await again), ['k1']);
  });

  it('a URL that never gave a set: the failure is the answer until the cooldown ends', async (t) => {
    const { held, keys } = source(t);
    const p = keys.keysFor(issuerA(), 'k1');
    await settle();
    held.calls[0].resolve({ body: { keys: 'none' }, maxAgeSeconds: null });
    assert.deepEqual(await p, { problem: 'the JWKS URL has no usable key set yet: the JWKS: not a JWK set (an object with a keys array)' });
    t.mock.timers.tick(29_999);
    assert.deepEqual(await keys.keysFor(issuerA(), 'k1'), { problem: 'the JWKS URL has no usable key set yet: the JWKS: not a JWK set (an object with a keys array)' });
    assert.equal(held.calls.length, 1);
  });

  it('an unknown kid refetches once per cooldown, shared by every caller; a kid rotated in is then found', async (t) => {
    const { held, keys } = source(t);
    const p = keys.keysFor(issuerA(), 'k1');
    await settle();
    held.calls[0].resolve({ body: set(k1.jwk), maxAgeSeconds: 3600 });
    await p;
    // Within the cooldown of that fetch: no refetch, the set as it is.
    assert.deepEqual(kids(await keys.keysFor(issuerA(), 'k2')), ['k1']);
    assert.equal(held.calls.length, 1);
    t.mock.timers.tick(30_000);
    const many = Array.from({ length: 100 }, () => keys.keysFor(issuerA(), 'k2'));
    await settle();
    assert.equal(held.calls.length, 2);
    held.calls[1].resolve({ body: set(k1.jwk, k2.jwk), maxAgeSeconds: 3600 });
    assert.deepEqual((await Promise.all(many)).map(kids)[99], ['k1', 'k2']);
    assert.equal(held.calls.length, 2);
    // Still unknown after a refetch: nothing more until the cooldown ends.
    for (let i = 0; i < 100; i++) await keys.keysFor(issuerA(), 'k3');
    assert.equal(held.calls.length, 2);
  });

  it('a URL that hangs delays no other issuer; its callers are refused after the timeout', async (t) => {
    const { held, keys } = source(t);
    const inline = issuerRecord({ id: 2, algorithms: ['ES256'], jwks: set(k2.jwk) });
    const hanging = keys.keysFor(issuerA(), 'k1');
    await settle();
    assert.deepEqual(kids(await keys.keysFor(inline, 'k2')), ['k2']);
    const b = keys.keysFor(issuerRecord({ id: 3, algorithms: ['ES256'], jwksUrl: URL_B }), 'k2');
    await settle();
    held.calls[1].resolve({ body: set(k2.jwk), maxAgeSeconds: null });
    assert.deepEqual(kids(await b), ['k2']);
    t.mock.timers.tick(2999);
    await settle();
    assert.equal(held.calls[0].signal.aborted, false);
    t.mock.timers.tick(1);
    assert.equal(held.calls[0].signal.aborted, true);
    assert.deepEqual(await hanging, { problem: 'the JWKS URL has no usable key set yet: no answer within 3000 ms' });
  });

  it('inline keys and the URL\'s together; a kid found inline needs no fetch', async (t) => {
    const { held, keys } = source(t);
    const both = issuerA({ jwks: set(k1.jwk) });
    assert.deepEqual(kids(await keys.keysFor(both, 'k1')), ['k1']);
    assert.equal(held.calls.length, 0);
    const p = keys.keysFor(both, 'k2');
    await settle();
    held.calls[0].resolve({ body: set(k2.jwk), maxAgeSeconds: null });
    assert.deepEqual(kids(await p), ['k1', 'k2']);
  });

  it('inline sets: symmetric, private and too many keys are refused; encryption keys are left out', async (t) => {
    const { keys } = source(t);
    const inline = (jwks: { keys: Array<Record<string, unknown>> }) => keys.keysFor(issuerRecord({ rev: Math.random(), jwks }), null);
    assert.deepEqual(await inline({ keys: [{ kty: 'oct', k: 'AAAA' }] }), { problem: 'inline jwks: keys[0] is a symmetric key: only public keys verify here' });
    assert.deepEqual(await inline({ keys: [{ ...k1.jwk, d: 'AAAA' }] }), { problem: 'inline jwks: keys[0] holds private key material' });
    assert.deepEqual(await inline({ keys: Array.from({ length: 21 }, () => k1.jwk) }), { problem: 'inline jwks: more than 20 keys' });
    assert.deepEqual(kids(await inline({ keys: [{ ...k1.jwk, use: 'enc' }, k2.jwk] })), ['k2']);
    assert.deepEqual(await inline({ keys: [{ ...k1.jwk, use: 'enc' }] }), { problem: 'the issuer has no public keys' });
  });
});

describe('issuer keys: Cache-Control', () => {
  const cases: Array<[string | string[] | undefined, number | null]> = [
    [undefined, null],
    ['public, max-age=600', 600],
    ['max-age="120", must-revalidate', 120],
    ['s-maxage=30', null],
    ['no-store', null],
    ['no-cache, max-age=600', null],
    [['public', 'max-age=90'], 90],
  ];
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)} → ${expected}`, () => assert.equal(maxAgeOf(header), expected));
  }
});
