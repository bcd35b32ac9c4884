// The rules both stores apply the same way (domain/store-rules.ts), as tables of cases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DELIVERIES_KEPT, HTTP_VIEWER_CALLER, bindDecision, completedRecording, registryIdFor, registryIdIsCallerId, sessionLookupFinds } from '../../src/domain/store-rules.js';
import type { Recording } from '../../src/store/store.js';

describe('bindDecision', () => {
  const cases: Array<[bound: string[], address: string, limit: number, expected: string]> = [
    [[], '203.0.113.1', 1, 'bound'],
    [[], '203.0.113.1', 0, 'full'],
    [['203.0.113.1'], '203.0.113.1', 1, 'already'],
    [['203.0.113.1'], '203.0.113.2', 1, 'full'],
    [['203.0.113.1'], '203.0.113.2', 2, 'bound'],
    [['203.0.113.1', '203.0.113.2'], '203.0.113.2', 2, 'already'],
    [['203.0.113.1', '203.0.113.2'], '203.0.113.3', 2, 'full'],
    // a limit lowered below what is bound: bound addresses still pass, new ones are refused
    [['203.0.113.1', '203.0.113.2'], '203.0.113.2', 1, 'already'],
    [['203.0.113.1', '203.0.113.2'], '203.0.113.3', 1, 'full'],
  ];
  for (const [bound, address, limit, expected] of cases) {
    it(`${JSON.stringify(bound)} + ${address}, limit ${limit} → ${expected}`, () => {
      assert.equal(bindDecision(new Set(bound), address, limit), expected);
    });
  }

  it('does not count the bound addresses when the address is bound', () => {
    let counted = 0;
    const bound = {
      has: () => true,
      get size() {
        counted++;
        return 5;
      },
    };
    assert.equal(bindDecision(bound, '203.0.113.1', 1), 'already');
    assert.equal(counted, 0);
  });
});

describe('completedRecording', () => {
  const open: Recording = {
    id: 12,
    accountId: 'A',
    streamName: 'cam1',
    tokenId: 3,
    path: '/r/1.mp4',
    status: 'recording',
    recordedOn: '2026-01-01T00:00:00.000Z',
    metadata: { width: 1280 },
  };
  const report = { accountId: 'A', streamName: 'cam1', path: '/r/1.mp4', recordedOn: '2026-01-01T00:05:00.000Z', completedOn: '2026-01-01T00:05:00.000Z' };

  it('completes the open recording: its id, start and token kept, the report’s fields added', () => {
    assert.deepEqual(completedRecording(open, { ...report, metadata: { size: 9 } }), {
      ...open,
      metadata: { size: 9 },
      status: 'completed',
      completedOn: report.completedOn,
    });
  });

  it('takes the token the report names', () => {
    assert.equal(completedRecording(open, { ...report, tokenId: 4 }).tokenId, 4);
  });

  it('keeps the open recording’s token when the report names none (also when given as undefined)', () => {
    assert.equal(completedRecording(open, { ...report, tokenId: undefined }).tokenId, 3);
  });

  it('without an open recording: a new completed record, no id (the store assigns it)', () => {
    assert.deepEqual(completedRecording(null, { ...report, tokenId: 5 }), { ...report, tokenId: 5, status: 'completed' });
  });
});

describe('DELIVERIES_KEPT', () => {
  it('is the 100 attempts the deliveries log documents', () => {
    assert.equal(DELIVERIES_KEPT, 100);
  });
});

describe('sessionLookupFinds', () => {
  // [caller, the session's account, the account the lookup names, found]
  const cases: Array<[string, string, string | undefined, boolean]> = [
    ['nginx-rtmp', 'A', undefined, true],
    ['nginx-rtmp', 'A', 'A', true],
    ['nginx-rtmp', 'A', 'B', false],
    [HTTP_VIEWER_CALLER, 'A', undefined, false],
    [HTTP_VIEWER_CALLER, 'A', 'A', true],
    [HTTP_VIEWER_CALLER, 'A', 'B', false],
  ];
  for (const [caller, account, named, found] of cases) {
    it(`${caller} session of ${account}, looked up ${named === undefined ? 'without an account' : `in ${named}`}: ${found ? 'found' : 'not found'}`, () => {
      assert.equal(sessionLookupFinds(caller, account, named), found);
    });
  }
});

describe('registryIdFor', () => {
  it("an HTTP viewer session's registry id is its caller id; any other caller's is made fresh", () => {
    const fresh = () => 'Fresh0000000000A';
    assert.equal(registryIdFor(HTTP_VIEWER_CALLER, 'Viewer000000000A', fresh), 'Viewer000000000A');
    assert.equal(registryIdFor('mediamtx', 'reader-1', fresh), 'Fresh0000000000A');
    assert.equal(registryIdIsCallerId({ caller: HTTP_VIEWER_CALLER, id: 'Viewer000000000A', sessionId: 'Viewer000000000A' }), true);
    assert.equal(registryIdIsCallerId({ caller: HTTP_VIEWER_CALLER, id: 'Fresh0000000000A', sessionId: 'Viewer000000000A' }), false, 'registered by an earlier build');
    assert.equal(registryIdIsCallerId({ caller: 'mediamtx', id: 'same', sessionId: 'same' }), false, "a media server's id is its own choice");
  });
});
