// Series periods: the keys a day or month series has for a range of UTC days.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { periodKey, periodKeys } from '../../src/analytics/usage.js';

describe('usage series periods', () => {
  it('keys a day by its start, and a month by its first day', () => {
    assert.equal(periodKey('2026-01-26', 'Day'), '2026-01-26T00:00:00Z');
    assert.equal(periodKey('2026-01-26', 'Month'), '2026-01-01T00:00:00Z');
    assert.equal(periodKey('2024-02-29', 'Month'), '2024-02-01T00:00:00Z');
  });

  it('lists every day of [start, stop) oldest first, across month and year ends and a leap day', () => {
    assert.deepEqual(periodKeys('2024-02-28', '2024-03-02', 'Day'), ['2024-02-28', '2024-02-29', '2024-03-01'].map((d) => `${d}T00:00:00Z`));
    assert.deepEqual(periodKeys('2025-12-31', '2026-01-02', 'Day'), ['2025-12-31T00:00:00Z', '2026-01-01T00:00:00Z']);
    assert.deepEqual(periodKeys('2026-01-01', '2026-01-01', 'Day'), []);
    assert.equal(periodKeys('2024-01-01', '2025-01-01', 'Day').length, 366);
  });

  it('lists every month a day of [start, stop) falls in, once, oldest first', () => {
    assert.deepEqual(periodKeys('2025-11-30', '2026-02-01', 'Month'), ['2025-11-01T00:00:00Z', '2025-12-01T00:00:00Z', '2026-01-01T00:00:00Z']);
    assert.deepEqual(periodKeys('2026-01-31', '2026-02-02', 'Month'), ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z']);
    assert.deepEqual(periodKeys('2026-03-05', '2026-03-06', 'Month'), ['2026-03-01T00:00:00Z']);
    assert.equal(periodKeys('2024-01-01', '2025-01-01', 'Month').length, 12);
  });
});
