// A Redis session registry record in its two forms (src/store/redis/session-record.ts): the row
// gives back exactly what was stored, leaves its unset tail out, and an object of earlier builds
// still decodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../src/store/sessions.js';
import { ROW_FIELDS, decodeSession, encodeSession } from '../../src/store/redis/session-record.js';

const viewer: Session = {
  id: 'k3j5h2g8f7d6s5a4',
  caller: 'auth-request',
  sessionId: 'c-19f2',
  action: 'subscribe',
  accountId: 'ZG6NWV',
  streamName: 'cam1',
  tokenId: 123456,
  clientIp: '203.0.113.7',
  protocol: 'hls',
  serverAddress: '127.0.0.1',
  startedOn: '2026-11-29T15:38:07.756Z',
  lastSeenOn: '2026-11-29T15:39:07.001Z',
};

test('a viewer as a row: its values in order, dates as epoch ms in digits, the unset tail left out', () => {
  const raw = encodeSession(viewer, 'compact');
  assert.equal(
    raw,
    '[1,"k3j5h2g8f7d6s5a4","auth-request","c-19f2",0,"ZG6NWV","cam1","1795966687756","1795966747001",123456,"203.0.113.7","hls","127.0.0.1"]',
  );
  assert.deepEqual(decodeSession(raw), viewer);
  assert.ok(raw.length < JSON.stringify(viewer).length / 2 + 40, `${raw.length} bytes against ${JSON.stringify(viewer).length}`);
});

test('every field round-trips, the unset ones between as null; a publisher is 1', () => {
  const every: Session = {
    ...viewer,
    action: 'publish',
    trackingId: 'trk',
    subject: 'user@example.com',
    feedId: '8d0c6f2a-7a1b-4c1e-9a55-2f1f3b2a9e10',
    native: { server: 'srs1', client_id: '42' },
    endedReason: 'replaced',
    endedOn: '2026-11-29T15:40:00.000Z',
  };
  assert.equal(Object.keys(every).length, ROW_FIELDS.length, 'every field of the row is set');
  const raw = encodeSession(every, 'compact');
  assert.deepEqual(decodeSession(raw), every);
  assert.equal(JSON.parse(raw)[ROW_FIELDS.indexOf('action') + 1], 1);
  const sparse: Session = { ...viewer, tokenId: undefined, clientIp: undefined, subject: 'sub' };
  delete sparse.tokenId;
  delete sparse.clientIp;
  const row = JSON.parse(encodeSession(sparse, 'compact')) as unknown[];
  assert.equal(row[ROW_FIELDS.indexOf('tokenId') + 1], null);
  assert.equal(row.length, ROW_FIELDS.indexOf('subject') + 2);
  assert.deepEqual(decodeSession(JSON.stringify(row)), sparse);
});

test('a date not in toISOString form is kept as its text', () => {
  const odd: Session = { ...viewer, startedOn: '2026-11-29T15:38:07Z' };
  const row = JSON.parse(encodeSession(odd, 'compact')) as unknown[];
  assert.equal(row[ROW_FIELDS.indexOf('startedOn') + 1], '2026-11-29T15:38:07Z');
  assert.deepEqual(decodeSession(JSON.stringify(row)), odd);
});

test('the object form is the record as JSON, and decodes as it is', () => {
  assert.equal(encodeSession(viewer, 'json'), JSON.stringify(viewer));
  assert.deepEqual(decodeSession(JSON.stringify(viewer)), viewer);
});

test('a row of a version this build does not know is refused, not guessed at', () => {
  assert.throws(() => decodeSession('[2,"x"]'), { message: 'a session record of row version 2, which this build does not read' });
});
