// Token sharing without a store (docs/api.md#token-sharing): the counts over the window, impossible
// travel, and the flags a policy raises; a household, a few devices on one network and a viewer
// moving to a mobile network are not flagged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assessSharing, distanceKm, effectiveSharing, networkOf, parseSubject, revocationListOf, SHARING_DEFAULTS, type SharingUse } from '../../src/domain/sharing.js';
import { jwtSubject } from '../../src/policy/issuer-jwt.js';
import type { IssuerClaimMap } from '../../src/domain/issuers.js';

const T = Date.parse('2026-11-29T12:00:00.000Z');
const MIN = 60_000;
const ON = effectiveSharing({ enabled: true }, undefined);
const PARIS = { lat: 48.8566, lon: 2.3522 };
const NEW_YORK = { lat: 40.7128, lon: -74.006 };
const LYON = { lat: 45.764, lon: 4.8357 };

const use = (at: number, ip: string, asn: number, country: string, where: { lat: number; lon: number } = PARIS): SharingUse => ({
  at,
  ip,
  network: networkOf(ip),
  asn,
  country,
  lat: where.lat,
  lon: where.lon,
});

describe('token sharing', () => {
  it('networks are an IPv4 /24 and an IPv6 /48; distances are great-circle kilometres', () => {
    assert.equal(networkOf('203.0.113.77'), '203.0.113.0/24');
    assert.equal(networkOf('2001:0db8:0042:0001:0000:0000:0000:0007'), '2001:0db8:0042::/48');
    assert.equal(networkOf('not an address'), '');
    assert.equal(Math.round(distanceKm(PARIS.lat, PARIS.lon, NEW_YORK.lat, NEW_YORK.lon)), 5837);
    assert.equal(distanceKm(1, 2, 1, 2), 0);
  });

  it('a token used from 20 addresses in 5 countries within 10 minutes is flagged', () => {
    const countries = ['FR', 'DE', 'US', 'BR', 'JP'];
    const uses = Array.from({ length: 20 }, (_, i) => use(T - 10 * MIN + i * 30_000, `198.51.${i}.${10 + i}`, 64_500 + i, countries[i % 5]));
    const a = assessSharing(uses, ON, T);
    assert.deepEqual([a.addresses, a.networks, a.asns, a.countries, a.flags], [20, 20, 20, 5, ['networks', 'asns', 'countries']]);
  });

  it('not flagged: four devices on one /24 and one switch to a mobile network within an hour; one address with many sessions', () => {
    const home = [1, 2, 3, 4].map((d) => use(T - 50 * MIN + d * MIN, `192.0.2.${d}`, 3215, 'FR'));
    const mobile = use(T - 5 * MIN, '100.64.7.9', 20810, 'FR', LYON);
    const a = assessSharing([...home, mobile], ON, T);
    assert.deepEqual([a.addresses, a.networks, a.asns, a.countries, a.flags, a.travel], [5, 2, 2, 1, [], undefined]);
    const one = assessSharing([use(T - MIN, '192.0.2.1', 3215, 'FR')], ON, T);
    assert.deepEqual(one.flags, []);
  });

  it('impossible travel: two uses farther apart than the speed allows, and not merely a city database apart', () => {
    const a = assessSharing([use(T - 30 * MIN, '192.0.2.1', 3215, 'FR'), use(T - 10 * MIN, '198.51.100.2', 7018, 'US', NEW_YORK)], ON, T);
    assert.deepEqual(a.flags, ['travel']);
    assert.deepEqual(a.travel, { from: { ip: '192.0.2.1', country: 'FR', at: T - 30 * MIN }, to: { ip: '198.51.100.2', country: 'US', at: T - 10 * MIN }, km: 5837, kmh: 17512 });
    // Paris to Lyon in a minute: under travelMinKm (500), a database's error, not a trip
    assert.deepEqual(assessSharing([use(T - 2 * MIN, '192.0.2.1', 3215, 'FR'), use(T - MIN, '192.0.2.9', 3215, 'FR', LYON)], ON, T).flags, []);
    // Paris to New York in 8 hours: a flight
    assert.deepEqual(assessSharing([use(T - 8 * 60 * MIN, '192.0.2.1', 3215, 'FR'), use(T, '198.51.100.2', 7018, 'US', NEW_YORK)], Object.assign({}, ON, { windowSeconds: 86_400 }), T).flags, []);
  });

  it('counts only the window; a limit of 0 is off; a token overrides its account', () => {
    const old = use(T - 2 * 60 * MIN, '203.0.113.1', 1, 'JP');
    const a = assessSharing([old, use(T - MIN, '192.0.2.1', 3215, 'FR')], ON, T);
    assert.deepEqual([a.addresses, a.countries], [1, 1]);
    const policy = effectiveSharing({ enabled: true, maxCountries: 0, maxAsns: 0, maxNetworks: 0, travelKmh: 0, maxAddresses: 2 }, { action: 'disable' });
    assert.equal(policy.action, 'disable');
    const uses = ['FR', 'DE', 'US'].map((c, i) => use(T - i * MIN, `198.51.${i}.1`, i, c, i === 2 ? NEW_YORK : PARIS));
    assert.deepEqual(assessSharing(uses, policy, T).flags, ['addresses']);
    assert.equal(SHARING_DEFAULTS.enabled, false, 'off unless an account turns it on');
  });

  it("an issuer credential's subject: the viewer claim, else sub unless it names the stream, else jti; and the list that revokes it", () => {
    const of = (claims: Partial<IssuerClaimMap>, cred: { sub?: string; jti?: string; viewerId?: string }) =>
      jwtSubject({ issuerId: 1, exp: 0, ...cred }, { claims: { stream: 'sub', ...claims } });
    assert.equal(of({ stream: 'room', viewerId: 'sub' }, { sub: 'alice', viewerId: 'alice', jti: 'j1' }), 'sub:alice');
    assert.equal(of({ viewerId: 'aws:viewer-id' }, { sub: 'cam1', viewerId: 'v-9' }), 'viewer:v-9');
    // sub names the stream (the default claim map): every viewer of cam1 would share it, so the jti stands for the credential
    assert.equal(of({}, { sub: 'cam1', jti: 'j1' }), 'jti:j1');
    assert.equal(of({}, { sub: 'cam1' }), undefined);
    assert.equal(of({ permissions: 'perms' }, { sub: 'bob' }), 'sub:bob');
    assert.deepEqual(parseSubject('sub:a:b'), { claim: 'sub', value: 'a:b' });
    assert.equal(parseSubject('name:x'), null);
    assert.equal(parseSubject(':x'), null);
    assert.deepEqual(['sub', 'jti', 'id', 'viewer'].map((c) => revocationListOf(c as 'sub')), ['sub', 'jti', 'jti', null]);
  });
});
