// The compact Redis token record (under 1 KiB per token) must give back exactly what was stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeToken, encodeToken } from '../../src/store/redis/redis-store.js';
import type { TokenRecord } from '../../src/domain/tokens.js';

const full: TokenRecord = {
  id: 42,
  rev: 7,
  kind: 'publish',
  accountId: 'ACCT01',
  label: 'every field',
  token: 'a'.repeat(64),
  addedOn: '2026-11-26T01:00:00.000Z',
  updatedOn: '2026-11-26T02:00:00.000Z',
  expiresOn: '2026-12-26T01:00:00.000Z',
  isActive: false,
  streams: [{ streamName: 'cam1', isRegex: false }, { streamName: 'cam[0-9]+', isRegex: true }],
  allowedOrigins: ['*.example.com'],
  allowedIpAddresses: ['203.0.113.0/24'],
  bindIpsOnUsage: 2,
  allowedCountries: [],
  deniedCountries: ['FR'],
  subscribeRequiresAuth: true,
  record: true,
  enableThumbnails: true,
  clip: true,
  multisource: false,
  lowLatencyRtmp: false,
  displaySrtPassphrase: true,
  drm: true,
  priority: -3,
  originCluster: 'fra-1',
  geoCascade: { isEnabled: true, clusters: ['fra-1'] },
  restream: [{ url: 'rtmp://x.example/live', key: 'secret-key', label: 'x' }],
};

const minimalSubscribe: TokenRecord = {
  id: 9,
  rev: 1,
  kind: 'subscribe',
  accountId: 'ACCT01',
  label: 'min',
  token: 'b'.repeat(64),
  addedOn: '2026-11-26T01:00:00.000Z',
  updatedOn: '2026-11-26T01:00:00.000Z',
  isActive: true,
  streams: [{ streamName: 'cam1', isRegex: false }],
  allowedOrigins: [],
  allowedIpAddresses: [],
  allowedCountries: [],
  deniedCountries: [],
};

test('a record with every field set round-trips through the compact encoding', () => {
  assert.deepEqual(decodeToken('ACCT01', 42, `7:${encodeToken(full)}`), full);
});

test('a record at its defaults round-trips, and its stored form leaves the defaults out', () => {
  const encoded = encodeToken(minimalSubscribe);
  assert.deepEqual(JSON.parse(encoded), { kind: 'subscribe', label: 'min', token: 'b'.repeat(64), addedOn: '2026-11-26T01:00:00.000Z', streams: [{ streamName: 'cam1' }] });
  assert.deepEqual(decodeToken('ACCT01', 9, `1:${encoded}`), minimalSubscribe);
});

test('publish defaults (false flags) come back as false, subscribe tracking is kept', () => {
  const pub: TokenRecord = {
    ...minimalSubscribe,
    kind: 'publish',
    subscribeRequiresAuth: false,
    record: false,
    enableThumbnails: false,
    clip: false,
    multisource: true,
    lowLatencyRtmp: true,
    displaySrtPassphrase: false,
    drm: false,
  };
  const encoded = encodeToken(pub);
  assert.deepEqual(JSON.parse(encoded), { kind: 'publish', label: 'min', token: 'b'.repeat(64), addedOn: '2026-11-26T01:00:00.000Z', streams: [{ streamName: 'cam1' }] });
  assert.deepEqual(decodeToken('ACCT01', 9, `1:${encoded}`), pub);
  // A record written before the hosted settings were kept decodes with the hosted defaults.
  const older = `1:{"kind":"publish","label":"min","token":"${'b'.repeat(64)}","addedOn":"2026-11-26T01:00:00.000Z","streams":[{"streamName":"cam1"}]}`;
  assert.deepEqual(decodeToken('ACCT01', 9, older), pub);
  const tracked: TokenRecord = { ...minimalSubscribe, tracking: { trackingId: 't-1' } };
  assert.deepEqual(decodeToken('ACCT01', 9, `1:${encodeToken(tracked)}`), tracked);
});

test('a missing record decodes to null', () => {
  assert.equal(decodeToken('ACCT01', 1, null), null);
});
