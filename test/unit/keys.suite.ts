// The director's signing-key ring, run against every backend (sqlite, redis) by its own test file:
// the keys live in the store, so persistence and the first-start race are backend behaviour.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import type { Store } from '../../src/store/store.js';
import type { StoreFactory } from '../helpers/stores.js';
import { KeyRing, SIGNING_KEYS_META, parseSigningKeys, publicJwkOf, type SigningKeys } from '../../src/director/keys.js';

const CLAIMS = {
  sub: 'ZG6NWV/cam1',
  streaming: { tokenId: 7, tokenType: 'Publish', accountId: 'ZG6NWV', streamName: 'cam1', record: false },
  mediamtx_permissions: [{ action: 'publish', path: 'ZG6NWV/cam1' }],
};

const verify = (jwt: string, ring: KeyRing) =>
  jwtVerify(jwt, createLocalJWKSet(ring.jwks()), { algorithms: ['ES256'], issuer: 'streamgate' });

const kids = (ring: KeyRing) => ring.jwks().keys.map((k) => k.kid);

function assertPublicOnly(keys: JWK[]): void {
  for (const k of keys) {
    assert.deepEqual(Object.keys(k).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal('d' in k, false);
    assert.equal(k.alg, 'ES256');
    assert.equal(k.use, 'sig');
    assert.equal(k.kty, 'EC');
    assert.equal(k.crv, 'P-256');
  }
}

export function keyRingSuite(factory: StoreFactory): void {
  describe(`director signing keys: ${factory.name}`, () => {
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });

    it('generates on first load, persists the documented shape, and a second load reuses it', async () => {
      const store = await factory.make();
      const t = Date.parse('2026-03-01T12:00:00Z');
      const ring = await KeyRing.load(store, () => t);
      const raw = await store.getMeta(SIGNING_KEYS_META);
      assert.notEqual(raw, null);
      const stored = JSON.parse(raw!) as SigningKeys;
      assert.deepEqual(Object.keys(stored), ['current']);
      const cur = stored.current;
      assert.deepEqual(Object.keys(cur).sort(), ['createdOn', 'kid', 'privateJwk', 'publicJwk']);
      assert.equal(cur.kid, ring.kid);
      assert.equal(cur.kid, await calculateJwkThumbprint(cur.publicJwk));
      assert.equal(cur.createdOn, '2026-03-01T12:00:00.000Z');
      assert.deepEqual(Object.keys(cur.publicJwk).sort(), ['crv', 'kty', 'x', 'y']);
      assert.deepEqual(Object.keys(cur.privateJwk).sort(), ['crv', 'd', 'kty', 'x', 'y']);
      assert.equal(cur.privateJwk.x, cur.publicJwk.x);
      assert.equal(cur.privateJwk.y, cur.publicJwk.y);

      const again = await KeyRing.load(store);
      assert.equal(again.kid, ring.kid);
      assert.equal(await store.getMeta(SIGNING_KEYS_META), raw);
    });

    it('concurrent first loads on an empty store agree on one kid', async () => {
      const store = await factory.make();
      const rings = await Promise.all([1, 2, 3, 4, 5].map(() => KeyRing.load(store)));
      const stored = JSON.parse((await store.getMeta(SIGNING_KEYS_META))!) as SigningKeys;
      assert.deepEqual(new Set(rings.map((r) => r.kid)), new Set([stored.current.kid]));
      for (const r of rings) assert.deepEqual(r.jwks(), rings[0]!.jwks());
    });

    it('signs an ES256 JWT that verifies against its JWKS, with kid, ttl and claims exactly', async () => {
      const store = await factory.make();
      const t = Date.now();
      const ring = await KeyRing.load(store, () => t);
      const jwt = await ring.sign(CLAIMS, 60);
      assert.deepEqual(decodeProtectedHeader(jwt), { alg: 'ES256', kid: ring.kid, typ: 'JWT' });
      const { payload, protectedHeader } = await verify(jwt, ring);
      assert.deepEqual(protectedHeader, { alg: 'ES256', kid: ring.kid, typ: 'JWT' });
      const iat = Math.floor(t / 1000);
      assert.deepEqual(payload, { ...CLAIMS, iss: 'streamgate', iat, exp: iat + 60 });
      assert.equal(payload.exp! - payload.iat!, 60);
    });

    it('the JWKS holds only public members, with use sig and alg ES256', async () => {
      const store = await factory.make();
      const ring = await KeyRing.load(store);
      assert.equal(ring.jwks().keys.length, 1);
      assertPublicOnly(ring.jwks().keys);
      await KeyRing.rotate(store);
      await ring.reload();
      assert.equal(ring.jwks().keys.length, 2);
      assertPublicOnly(ring.jwks().keys);
      // Handing out a copy: a caller editing the answer cannot change what is served next.
      ring.jwks().keys[0]!.d = 'x';
      assertPublicOnly(ring.jwks().keys);
    });

    it('rotation: new kid signs, previous stays in the JWKS, and drops out after a second rotation', async () => {
      const store = await factory.make();
      const ring = await KeyRing.load(store);
      const k1 = ring.kid;
      const jwt1 = await ring.sign(CLAIMS, 600);

      const r1 = await KeyRing.rotate(store);
      assert.notEqual(r1.kid, k1);
      assert.deepEqual(r1, { kid: r1.kid, previousKid: k1 });
      const fresh = await KeyRing.load(store);
      assert.equal(fresh.kid, r1.kid);
      assert.deepEqual(kids(fresh), [r1.kid, k1]);
      assert.equal(ring.kid, k1, 'a ring sees a rotation only on reload');
      await ring.reload();
      assert.equal(ring.kid, r1.kid);
      assert.deepEqual(ring.jwks(), fresh.jwks());

      const jwt2 = await ring.sign(CLAIMS, 600);
      assert.equal(decodeProtectedHeader(jwt2).kid, r1.kid);
      assert.equal((await verify(jwt2, fresh)).protectedHeader.kid, r1.kid);
      assert.equal((await verify(jwt1, fresh)).protectedHeader.kid, k1);

      const r2 = await KeyRing.rotate(store);
      assert.deepEqual(r2, { kid: r2.kid, previousKid: r1.kid });
      await ring.reload();
      assert.equal(ring.kid, r2.kid);
      assert.deepEqual(kids(ring), [r2.kid, r1.kid]);
      const stored = JSON.parse((await store.getMeta(SIGNING_KEYS_META))!) as SigningKeys;
      assert.deepEqual([stored.current.kid, stored.previous?.kid], [r2.kid, r1.kid]);
      assert.equal((await verify(jwt2, ring)).protectedHeader.kid, r1.kid);
      await assert.rejects(verify(jwt1, ring), { name: 'JWKSNoMatchingKey', code: 'ERR_JWKS_NO_MATCHING_KEY' });
    });

    it('rotate on an empty store just generates', async () => {
      const store = await factory.make();
      const r = await KeyRing.rotate(store);
      assert.deepEqual(r, { kid: r.kid });
      const stored = JSON.parse((await store.getMeta(SIGNING_KEYS_META))!) as SigningKeys;
      assert.deepEqual(Object.keys(stored), ['current']);
      assert.equal((await KeyRing.load(store)).kid, r.kid);
    });

    it('reload without a change keeps the key, and restores ours to a store that lost it', async () => {
      const store = await factory.make();
      const ring = await KeyRing.load(store);
      const before = ring.jwks();
      await ring.reload();
      assert.deepEqual(ring.jwks(), before);

      // A store that lost the value (restored backup, flushed Redis): the ring writes its own keys
      // back rather than letting the next instance invent new ones. The ring is loaded through a
      // forwarding store so that the backing store can be swapped for an empty one underneath it.
      let backing: Store = store;
      const swappable = new Proxy(store, {
        get: (_t, p) => {
          const v = Reflect.get(backing, p) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(backing) : v;
        },
      });
      const ring2 = await KeyRing.load(swappable);
      assert.equal(ring2.kid, ring.kid);
      backing = await factory.make();
      await ring2.reload();
      assert.deepEqual(ring2.jwks(), before);
      assert.equal(parseSigningKeys((await backing.getMeta(SIGNING_KEYS_META))!).current.kid, ring.kid);
    });

    it('an expired JWT fails verification with ERR_JWT_EXPIRED', async () => {
      const store = await factory.make();
      const t = Date.now() - 3600_000;
      const ring = await KeyRing.load(store, () => t);
      const jwt = await ring.sign(CLAIMS, 60);
      await assert.rejects(verify(jwt, ring), { code: 'ERR_JWT_EXPIRED' });
    });

    it('refuses a corrupt stored value instead of replacing it', async () => {
      const store = await factory.make();
      await store.setMeta(SIGNING_KEYS_META, 'not json');
      await assert.rejects(KeyRing.load(store), { message: `store meta ${SIGNING_KEYS_META} is not valid JSON` });
      await store.setMeta(SIGNING_KEYS_META, JSON.stringify({ current: { kid: 'k' } }));
      await assert.rejects(KeyRing.load(store), { message: `store meta ${SIGNING_KEYS_META}: current is not an ES256 key entry` });
      assert.equal(await store.getMeta(SIGNING_KEYS_META), JSON.stringify({ current: { kid: 'k' } }));
    });

    it('publicJwkOf picks only public members even from a stored public JWK carrying d', () => {
      const jwk = publicJwkOf({
        kid: 'k1',
        createdOn: '2026-01-01T00:00:00.000Z',
        privateJwk: { kty: 'EC', crv: 'P-256', x: 'X', y: 'Y', d: 'D' },
        publicJwk: { kty: 'EC', crv: 'P-256', x: 'X', y: 'Y', d: 'D' },
      });
      assert.deepEqual(jwk, { kty: 'EC', crv: 'P-256', x: 'X', y: 'Y', kid: 'k1', alg: 'ES256', use: 'sig' });
    });
  });
}
