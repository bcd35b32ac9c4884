// The compact Redis token record (a CBOR map of short fields) must give back exactly what was
// stored, and records of the earlier JSON layouts must still decode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode as cborDecode } from 'cbor-x';
import { decodeToken, encodeToken } from '../../src/store/redis/redis-store.js';
import { tokenValue } from '../../src/store/redis/token-record.js';
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
  assert.deepEqual(decodeToken('ACCT01', 42, tokenValue(7, full)), full);
});

test('a record at its defaults round-trips, and its stored form leaves the defaults out', () => {
  const encoded = encodeToken(minimalSubscribe);
  assert.deepEqual(cborDecode(encoded), [0, 'min', Buffer.from('b'.repeat(64), 'hex'), Date.parse('2026-11-26T01:00:00.000Z'), ['cam1']]);
  assert.deepEqual(decodeToken('ACCT01', 9, Buffer.concat([Buffer.from('1:'), encoded])), minimalSubscribe);
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
  assert.deepEqual(cborDecode(encoded), [1, 'min', Buffer.from('b'.repeat(64), 'hex'), Date.parse('2026-11-26T01:00:00.000Z'), ['cam1']]);
  assert.deepEqual(decodeToken('ACCT01', 9, Buffer.concat([Buffer.from('1:'), encoded])), pub);
  // A record written before the hosted settings were kept decodes with the hosted defaults.
  const older = `1:{"kind":"publish","label":"min","token":"${'b'.repeat(64)}","addedOn":"2026-11-26T01:00:00.000Z","streams":[{"streamName":"cam1"}]}`;
  assert.deepEqual(decodeToken('ACCT01', 9, older), pub);
  const tracked: TokenRecord = { ...minimalSubscribe, tracking: { trackingId: 't-1' } };
  assert.deepEqual(decodeToken('ACCT01', 9, tokenValue(1, tracked)), tracked);
});

test('a record in the first layout (long field names) decodes as it was written', () => {
  // the record as that layout wrote it: every field by its own name, streams as objects, no id, rev or account
  const { id: _id, rev: _rev, accountId: _account, streams, ...fields } = full;
  const first = `7:${JSON.stringify({ ...fields, streams: streams.map((r) => (r.isRegex ? { streamName: r.streamName, isRegex: true } : { streamName: r.streamName })) })}`;
  assert.deepEqual(decodeToken('ACCT01', 42, first), full);
});

test('values the short forms cannot hold are kept as they are: a token value that is not 64 lower-case hex, a date not in toISOString form', () => {
  for (const token of ['A'.repeat(64), 'abc', `${'a'.repeat(63)}g`, '0'.repeat(66)]) {
    const t: TokenRecord = { ...minimalSubscribe, token };
    assert.deepEqual(decodeToken('ACCT01', 9, tokenValue(1, t)), t, token);
  }
  for (const addedOn of ['2026-11-26T01:00:00Z', '2026-11-26T01:00:00.000+00:00', '+012026-11-26T01:00:00.000Z']) {
    const t: TokenRecord = { ...minimalSubscribe, addedOn, updatedOn: '2026-11-27T01:00:00.000Z', expiresOn: addedOn };
    assert.deepEqual(decodeToken('ACCT01', 9, tokenValue(1, t)), t, addedOn);
  }
});

test('randomised records (seeded) round-trip', () => {
  const seed = Number(process.env.TEST_SEED ?? 20261129);
  console.log(`# seed ${seed}`);
  let x = seed >>> 0;
  const rnd = () => {
    x = (Math.imul(x ^ (x >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    return x / 2 ** 32;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  for (let i = 0; i < 500; i++) {
    const kind = rnd() < 0.5 ? 'publish' : 'subscribe';
    const t: TokenRecord = {
      ...minimalSubscribe,
      id: i + 1,
      rev: 1 + Math.floor(rnd() * 9),
      kind,
      label: pick(['', 'a', 'paid event', 'ü:"{}', 'x'.repeat(200)]),
      token: pick(['f'.repeat(64), Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))).toString('hex'), 'legacy-Token_1']),
      addedOn: new Date(1_700_000_000_000 + Math.floor(rnd() * 1e11)).toISOString(),
      isActive: rnd() < 0.8,
      streams: Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, j) => ({ streamName: pick(['cam1', 'a:b', '[x]', `s${j}`]), isRegex: rnd() < 0.3 })),
      allowedOrigins: rnd() < 0.3 ? ['*.example.com'] : [],
      allowedIpAddresses: rnd() < 0.3 ? ['10.0.0.0/8'] : [],
      allowedCountries: rnd() < 0.2 ? ['FR', 'DE'] : [],
      deniedCountries: rnd() < 0.2 ? ['US'] : [],
    };
    t.updatedOn = rnd() < 0.5 ? t.addedOn : new Date(Date.parse(t.addedOn) + 1000).toISOString();
    if (rnd() < 0.3) t.expiresOn = new Date(Date.parse(t.addedOn) + 86_400_000).toISOString();
    if (kind === 'subscribe' && rnd() < 0.3) t.tracking = { trackingId: 't-1' };
    if (kind === 'publish') Object.assign(t, { subscribeRequiresAuth: rnd() < 0.5, record: rnd() < 0.5, enableThumbnails: false, clip: false, multisource: true, lowLatencyRtmp: rnd() < 0.5, displaySrtPassphrase: false, drm: false });
    if (rnd() < 0.2) t.maxConcurrentSessions = 3;
    if (rnd() < 0.1) t.sharing = { enabled: true, maxCountries: 1 };
    if (rnd() < 0.1) t.holds = [{ until: t.addedOn, clientIp: '192.0.2.1' }];
    assert.deepEqual(decodeToken('ACCT01', t.id, tokenValue(t.rev, t)), t, `seed ${seed}, record ${i}`);
  }
});

test('a record of the JSON layout with short fields decodes, as text or as bytes', () => {
  const json = `3:${JSON.stringify({ k: 's', l: 'min', x: Buffer.from('b'.repeat(64), 'hex').toString('base64url'), a: Date.parse(minimalSubscribe.addedOn), s: ['cam1'] })}`;
  const expected = { ...minimalSubscribe, rev: 3 };
  assert.deepEqual(decodeToken('ACCT01', 9, json), expected);
  assert.deepEqual(decodeToken('ACCT01', 9, Buffer.from(json)), expected);
});

test('the bench shape is stored in 128 bytes or less (one allocation class below its JSON)', () => {
  const bench: TokenRecord = {
    ...minimalSubscribe,
    label: 'seed-123456',
    token: 'd'.repeat(64),
    streams: [{ streamName: 'seed-stream-123456', isRegex: false }, { streamName: 'seed-456-[0-9]+', isRegex: true }],
    allowedOrigins: ['*.example.com'],
    tracking: { trackingId: 't-56' },
  };
  const v = tokenValue(1, bench);
  assert.ok(v.length + 4 <= 128, `${v.length} bytes`);
  assert.deepEqual(decodeToken('ACCT01', 9, v), { ...bench, rev: 1 });
});

test('a missing record decodes to null', () => {
  assert.equal(decodeToken('ACCT01', 1, null), null);
});
