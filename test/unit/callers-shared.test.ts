// What every caller shares (src/callers/shared.ts): the one stream-name limit, the one mapping of
// a decision to a refusal status, and refusal texts taken from the reasons table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ACCOUNT_ID_MAX,
  STREAM_NAME_MAX,
  bytesSignal,
  nameable,
  refusalBody,
  refusalMessage,
  refusalStatus,
  streamIdentity,
  tokenFromQuery,
  type UnauthorizedStyle,
} from '../../src/callers/shared.js';
import { MAX_NAME } from '../../src/domain/matchers.js';
import { REASONS, type Reason } from '../../src/policy/types.js';

describe('the stream-name limit', () => {
  it('is the limit of token stream names', () => {
    assert.equal(STREAM_NAME_MAX, MAX_NAME);
  });

  it('admits names of 1 to STREAM_NAME_MAX characters and account ids up to ACCOUNT_ID_MAX', () => {
    const cases: Array<[string, { streamName: string; accountId?: string }, boolean]> = [
      ['empty', { streamName: '' }, false],
      ['one character', { streamName: 'a' }, true],
      ['at the limit', { streamName: 'a'.repeat(STREAM_NAME_MAX) }, true],
      ['one over', { streamName: 'a'.repeat(STREAM_NAME_MAX + 1) }, false],
      ['account at its limit', { streamName: 'cam1', accountId: 'A'.repeat(ACCOUNT_ID_MAX) }, true],
      ['account one over', { streamName: 'cam1', accountId: 'A'.repeat(ACCOUNT_ID_MAX + 1) }, false],
      ['account, no stream', { streamName: '', accountId: 'A' }, false],
    ];
    for (const [name, id, expected] of cases) assert.equal(nameable(id), expected, name);
  });

  it('is applied to the stream part of a path, after the account and prefix are split off', () => {
    const long = 'n'.repeat(STREAM_NAME_MAX);
    assert.deepEqual(streamIdentity(`ACCT/${long}`, '', true), { accountId: 'ACCT', streamName: long });
    assert.equal(nameable(streamIdentity(`ACCT/${long}`, '', true)), true);
    assert.equal(nameable(streamIdentity(`ACCT/${long}`, '', false)), false);
    assert.deepEqual(streamIdentity('//live/cam1', 'live/', false), { streamName: 'cam1' });
    assert.deepEqual(streamIdentity('live/cam1', 'other/', false), { streamName: 'live/cam1' });
    // with accounts in paths, a path without an account segment names no stream (never the default account's)
    assert.deepEqual(streamIdentity('cam1', '', true), { streamName: 'cam1', accountMissing: true });
    assert.equal(nameable(streamIdentity('cam1', '', true)), false);
    assert.equal(nameable(streamIdentity('/cam1', '', true)), false);
  });
});

describe('the refusal status of a decision', () => {
  const statuses = { 401: { status: 401 as const }, 403: { status: 403 as const }, 503: { status: 503 as const } };
  it('maps each decided status by style, and the store being down to 503 in every style', () => {
    const table: Array<[UnauthorizedStyle, boolean, 401 | 403 | 503, 401 | 403 | 503]> = [
      ['by-reason', true, 401, 401],
      ['by-reason', true, 403, 403],
      ['by-reason', false, 401, 401],
      ['by-reason', true, 503, 503],
      ['never', true, 401, 403],
      ['never', false, 401, 403],
      ['never', true, 403, 403],
      ['never', true, 503, 503],
      ['without-credentials', true, 401, 403],
      ['without-credentials', true, 403, 403],
      ['without-credentials', false, 401, 401],
      ['without-credentials', false, 403, 401],
      ['without-credentials', false, 503, 503],
    ];
    for (const [style, given, decided, expected] of table) {
      assert.equal(refusalStatus(statuses[decided], style, given), expected, `${style}, credentials ${given}, decided ${decided}`);
    }
  });

  it('follows the reasons table for every reason', () => {
    for (const [reason, r] of Object.entries(REASONS)) {
      if (reason === 'allowed') continue;
      assert.equal(refusalStatus(r, 'by-reason'), r.status, reason);
      assert.equal(refusalStatus(r, 'never'), r.status === 503 ? 503 : 403, reason);
    }
  });
});

describe('refusal texts', () => {
  it('come from the reasons table', () => {
    for (const reason of Object.keys(REASONS) as Reason[]) {
      assert.equal(refusalMessage(reason), REASONS[reason].message);
      assert.deepEqual(refusalBody(reason), { allowed: false, reason, message: REASONS[reason].message });
    }
    assert.deepEqual(refusalBody('stream_not_allowed'), { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' });
  });
});

describe('caller request readers', () => {
  it('finds the token of a query string, a bare query or a URL', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      [undefined, undefined],
      ['', undefined],
      ['?token=abc&x=1', 'abc'],
      ['token=abc', 'abc'],
      ['rtmp://h/live?token=t%2B1', 't+1'],
      ['rtmp://h/live', undefined],
      ['?token=', undefined],
      ['?x=1', undefined],
    ];
    for (const [q, expected] of cases) assert.equal(tokenFromQuery(q), expected, String(q));
  });

  it('counts repeated byte totals only when there are some, for a known session', () => {
    assert.deepEqual(bytesSignal('srs', 's#1', '100', '7.9'), [{ kind: 'usage', caller: 'srs', sessionId: 's#1', bytesOut: 100, bytesIn: 7 }]);
    assert.deepEqual(bytesSignal('srs', 's#1', '0', undefined), []);
    assert.deepEqual(bytesSignal('srs', 's#1', '-5', 'x'), []);
    assert.deepEqual(bytesSignal('srs', undefined, '100', '1'), []);
  });
});
