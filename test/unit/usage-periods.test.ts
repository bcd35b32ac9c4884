// Series periods: the keys a day or month series has for a range of UTC days, an hour series for a
// range of UTC hours; and the hour and retention a report is stamped with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UsageService, periodKey, periodKeys, rangeKeys } from '../../src/analytics/usage.js';
import type { Store, UsageRecord } from '../../src/store/store.js';

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

  it('lists every hour of [start, stop) oldest first, across midnight, month ends and a leap day', () => {
    assert.deepEqual(rangeKeys({ resolution: 'Hour', start: '2024-02-29T22', stop: '2024-03-01T01' }), [
      '2024-02-29T22:00:00Z',
      '2024-02-29T23:00:00Z',
      '2024-03-01T00:00:00Z',
    ]);
    assert.deepEqual(rangeKeys({ resolution: 'Hour', start: '2026-01-01T05', stop: '2026-01-01T05' }), []);
    assert.equal(rangeKeys({ resolution: 'Hour', start: '2026-01-01T00', stop: '2026-02-01T00' }).length, 744);
    assert.deepEqual(rangeKeys({ resolution: 'Month', start: '2026-01-31', stop: '2026-02-02' }), periodKeys('2026-01-31', '2026-02-02', 'Month'));
  });

  it("stamps a report with its UTC hour, kept until the retention's last day ends; an hour already past it counts per day only", async () => {
    const added: UsageRecord[] = [];
    const addUsage = async (u: UsageRecord) => {
      added.push(u);
      return true;
    };
    const store = { addUsage } as unknown as Store;
    const now = Date.parse('2026-03-10T15:20:00Z');
    const usage = new UsageService(store, async () => null, () => now, 31);
    const report = (at: string) => usage.ingest({ accountId: 'A', streamName: 'cam1', bytesOut: 1, at: Date.parse(at) });
    await report('2026-03-10T15:59:59.999Z');
    await report('2026-02-07T00:00:00Z'); // the oldest day kept: 2026-03-10 less 31 days
    await report('2026-02-06T23:59:59.999Z');
    await usage.ingest({ accountId: 'A', streamName: 'cam1', bytesOut: 1 }); // now
    assert.deepEqual(
      added.map((u) => [u.day, u.hourly]),
      [
        ['2026-03-10', { hour: '2026-03-10T15', keepUntilMs: Date.parse('2026-04-11T00:00:00Z') }],
        ['2026-02-07', { hour: '2026-02-07T00', keepUntilMs: Date.parse('2026-03-11T00:00:00Z') }],
        ['2026-02-06', undefined],
        ['2026-03-10', { hour: '2026-03-10T15', keepUntilMs: Date.parse('2026-04-11T00:00:00Z') }],
      ],
    );
    assert.equal(usage.oldestHourlyDay(), '2026-02-07');
  });
});
