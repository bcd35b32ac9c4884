// The usage: reports summed exactly under concurrency, a report id counted once, and the reads per
// tracking id, per day, per hour and per account (src/store/usage.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoreLifecycle, UsageStore } from '../store/store.js';
import type { Fresh } from './factory.js';

export type UsageUnderTest = UsageStore & StoreLifecycle;

export function usageTests(fresh: Fresh<UsageUnderTest>): void {
  describe('usage', () => {
    it('sums 1,000 concurrent reports for one tracking id exactly', async () => {
      const s = await fresh();
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) => s.addUsage({ accountId: 'A', trackingId: 'trk', tokenId: 1, streamName: 'cam1', day: '2026-03-01', bytesOut: i + 1, bytesIn: 1 })),
      );
      assert.deepEqual(await s.usageByTracking('A', ['trk'], '2026-03-01', '2026-03-02'), [
        { trackingId: 'trk', streamName: 'cam1', bytesOut: 500500, bytesIn: 1000 },
      ]);
    });

    it('counts a reportId once per account, and sums per stream over [start, stop) days', async () => {
      const s = await fresh();
      const u = (day: string, streamName: string, bytesOut: number, trackingId: string | undefined = 'a', accountId = 'A') => ({ accountId, trackingId, tokenId: 2, streamName, day, bytesOut, bytesIn: 0 });
      assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 100), 'r1'), true);
      assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 100), 'r1'), false);
      assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 7, 'a', 'B'), 'r1'), true, 'another account may use the same id');
      await s.addUsage(u('2026-02-01', 'cam1', 10));
      await s.addUsage(u('2026-02-01', 'cam2', 5));
      await s.addUsage(u('2026-02-03', 'cam1', 1));
      await s.addUsage(u('2026-02-01', 'cam1', 1000, 'b'));
      await s.addUsage({ accountId: 'A', tokenId: 2, streamName: 'cam1', day: '2026-02-01', bytesOut: 9999, bytesIn: 0 }); // untracked
      assert.deepEqual(await s.usageByTracking('A', ['a', 'b', 'none'], '2026-01-31', '2026-02-04'), [
        { trackingId: 'a', streamName: 'cam1', bytesOut: 111, bytesIn: 0 },
        { trackingId: 'a', streamName: 'cam2', bytesOut: 5, bytesIn: 0 },
        { trackingId: 'b', streamName: 'cam1', bytesOut: 1000, bytesIn: 0 },
      ]);
      assert.deepEqual(await s.usageByTracking('A', ['a'], '2026-02-01', '2026-02-03'), [
        { trackingId: 'a', streamName: 'cam1', bytesOut: 10, bytesIn: 0 },
        { trackingId: 'a', streamName: 'cam2', bytesOut: 5, bytesIn: 0 },
      ]);
      assert.deepEqual(await s.usageByTracking('A', ['a'], '2026-02-04', '2026-03-01'), []);
    });

    // usageDaily answers in no particular order: compare sorted by (trackingId, streamName, day)
    const key = (r: { day: string; trackingId?: string; streamName: string }) => `${r.trackingId ?? ''}\u0000${r.streamName}\u0000${r.day}`;
    const sorted = <R extends { day: string; trackingId?: string; streamName: string }>(rows: R[]) => [...rows].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));

    it('reads usage per day: by tracking id and stream, and by stream over every tracking id and untracked usage', async () => {
      const s = await fresh();
      const add = (day: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string) =>
        s.addUsage({ accountId, trackingId, tokenId, streamName, day, bytesOut, bytesIn }, reportId);
      await add('2026-01-31', 'cam1', 1, 10, 'a');
      await add('2026-02-01', 'cam1', 2, 20, 'a', 1);
      await add('2026-02-01', 'cam1', 3, 30, 'a', 2); // another token of the same tracking id
      await add('2026-02-01', 'cam2', 4, 40, 'a');
      await add('2026-02-01', 'cam1', 5, 50, 'b');
      await add('2026-02-01', 'cam1', 6, 60, undefined, 7); // untracked, token 7
      await add('2026-02-01', 'cam1', 7, 70, undefined, 8); // untracked, token 8
      await add('2026-02-03', 'cam1', 8, 80, undefined, 0); // untracked, no token
      await add('2026-02-03', 'cam3', 9, 90, 'a');
      assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), true);
      assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), false, 'a repeated report counts in no read');
      await add('2026-02-01', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
      await add('2026-02-04', 'cam1', 2000, 2000, 'a'); // on stopDay

      assert.deepEqual(sorted(await s.usageDaily('A', { trackingIds: ['a', 'b', 'none', 'a'] }, '2026-01-31', '2026-02-04')), [
        { day: '2026-01-31', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        { day: '2026-02-01', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
        { day: '2026-02-03', trackingId: 'a', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
        { day: '2026-02-01', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
      ]);
      assert.deepEqual(sorted(await s.usageDaily('A', { streamNames: ['cam1', 'cam3', 'nothing', 'cam1'] }, '2026-01-31', '2026-02-04')), [
        { day: '2026-01-31', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { day: '2026-02-01', streamName: 'cam1', bytesOut: 2 + 3 + 5 + 6 + 7, bytesIn: 20 + 30 + 50 + 60 + 70 },
        { day: '2026-02-03', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
        { day: '2026-02-03', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
      ]);
      assert.deepEqual(await s.usageDaily('A', { streamNames: ['cam2'] }, '2026-02-02', '2026-02-03'), [], 'a day without usage has no row');
      assert.deepEqual(await s.usageDaily('A', { streamNames: ['cam1'] }, '2026-02-04', '2026-02-05'), [
        { day: '2026-02-04', streamName: 'cam1', bytesOut: 2000, bytesIn: 2000 },
      ]);
      assert.deepEqual(await s.usageDaily('B', { streamNames: ['cam1'] }, '2026-01-01', '2026-03-01'), [
        { day: '2026-02-01', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
      ]);
      assert.deepEqual(await s.usageDaily('A', { trackingIds: [] }, '2026-01-01', '2026-03-01'), []);
      assert.deepEqual(await s.usageDaily('A', { streamNames: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty name is no stream');
      assert.deepEqual(await s.usageDaily('A', { trackingIds: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty tracking id is not the untracked usage');
      assert.deepEqual(await s.usageDaily('C', { streamNames: ['cam1'] }, '2026-01-01', '2026-03-01'), []);
    });

    it('keeps per-day reads of 1,000 concurrent reports on one stream exact, tracked and untracked', async () => {
      const s = await fresh();
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          s.addUsage({ accountId: 'A', trackingId: i % 2 === 0 ? 'even' : undefined, tokenId: i % 5, streamName: 'cam1', day: i < 600 ? '2026-03-01' : '2026-03-02', bytesOut: i + 1, bytesIn: 1 }),
        ),
      );
      const sum = (from: number, to: number, pick: (i: number) => boolean = () => true) => {
        let n = 0;
        for (let i = from; i < to; i++) if (pick(i)) n += i + 1;
        return n;
      };
      assert.deepEqual(sorted(await s.usageDaily('A', { streamNames: ['cam1'] }, '2026-03-01', '2026-03-03')), [
        { day: '2026-03-01', streamName: 'cam1', bytesOut: sum(0, 600), bytesIn: 600 },
        { day: '2026-03-02', streamName: 'cam1', bytesOut: sum(600, 1000), bytesIn: 400 },
      ]);
      assert.deepEqual(sorted(await s.usageDaily('A', { trackingIds: ['even'] }, '2026-03-01', '2026-03-03')), [
        { day: '2026-03-01', trackingId: 'even', streamName: 'cam1', bytesOut: sum(0, 600, (i) => i % 2 === 0), bytesIn: 300 },
        { day: '2026-03-02', trackingId: 'even', streamName: 'cam1', bytesOut: sum(600, 1000, (i) => i % 2 === 0), bytesIn: 200 },
      ]);
    });

    it('reads usage per day by stream and tracking id: a row per tracking id, the untracked usage summed under "" when not zero', async () => {
      const s = await fresh();
      const add = (day: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string) =>
        s.addUsage({ accountId, trackingId, tokenId, streamName, day, bytesOut, bytesIn }, reportId);
      await add('2026-01-31', 'cam1', 1, 10, 'a');
      await add('2026-02-01', 'cam1', 2, 20, 'a', 1);
      await add('2026-02-01', 'cam1', 3, 30, 'a', 2);
      await add('2026-02-01', 'cam2', 4, 40, 'a');
      await add('2026-02-01', 'cam1', 5, 50, 'b');
      await add('2026-02-01', 'cam1', 6, 60, undefined, 7); // untracked, token 7
      await add('2026-02-01', 'cam1', 7, 70, undefined, 8); // untracked, token 8
      await add('2026-02-03', 'cam1', 8, 80, undefined, 0); // untracked, no token
      await add('2026-02-03', 'cam2', 0, 0, undefined, 3); // untracked, nothing: no row
      await add('2026-02-03', 'cam3', 9, 90, 'a');
      assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), true);
      assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), false);
      await add('2026-02-01', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
      await add('2026-02-04', 'cam1', 2000, 2000, 'a'); // on stopDay

      assert.deepEqual(sorted(await s.usageDaily('A', { streamTracking: ['cam1', 'cam3', 'nothing', 'cam1'] }, '2026-01-31', '2026-02-04')), [
        { day: '2026-02-01', trackingId: '', streamName: 'cam1', bytesOut: 13, bytesIn: 130 },
        { day: '2026-02-03', trackingId: '', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
        { day: '2026-01-31', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        { day: '2026-02-03', trackingId: 'a', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
        { day: '2026-02-01', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
      ]);
      assert.deepEqual(await s.usageDaily('A', { streamTracking: ['cam2'] }, '2026-02-01', '2026-02-05'), [
        { day: '2026-02-01', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
      ]);
      assert.deepEqual(await s.usageDaily('B', { streamTracking: ['cam1'] }, '2026-01-01', '2026-03-01'), [
        { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
      ]);
      assert.deepEqual(await s.usageDaily('A', { streamTracking: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty name is no stream');
      assert.deepEqual(await s.usageDaily('C', { streamTracking: ['cam1'] }, '2026-01-01', '2026-03-01'), []);
    });

    // usageHourly answers in no particular order, as usageDaily
    const hourKey = (r: { hour: string; trackingId?: string; streamName: string }) => `${r.trackingId ?? ''}\u0000${r.streamName}\u0000${r.hour}`;
    const byHour = <R extends { hour: string; trackingId?: string; streamName: string }>(rows: R[]) => [...rows].sort((x, y) => (hourKey(x) < hourKey(y) ? -1 : hourKey(x) > hourKey(y) ? 1 : 0));
    const byPeriod = <R extends { period: string }>(rows: R[]) => [...rows].sort((x, y) => (x.period < y.period ? -1 : 1));

    it('reads usage per hour for every selector, only reports added with an hour whose keepUntilMs has not passed; and per account by day and hour', async () => {
      const s = await fresh();
      const keep = Date.now() + 86400000;
      const add = (hour: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string, keepUntilMs = keep) =>
        s.addUsage({ accountId, trackingId, tokenId, streamName, day: hour.slice(0, 10), bytesOut, bytesIn, hourly: { hour, keepUntilMs } }, reportId);
      await add('2026-02-01T09', 'cam1', 1, 10, 'a');
      await add('2026-02-01T10', 'cam1', 2, 20, 'a', 1);
      await add('2026-02-01T10', 'cam1', 3, 30, 'a', 2); // another token of the same tracking id
      await add('2026-02-01T10', 'cam2', 4, 40, 'a');
      await add('2026-02-01T10', 'cam1', 5, 50, 'b');
      await add('2026-02-01T10', 'cam1', 6, 60, undefined, 7); // untracked, token 7
      await add('2026-02-01T10', 'cam1', 7, 70, undefined, 8); // untracked, token 8
      await add('2026-02-01T23', 'cam1', 8, 80, undefined, 0); // untracked, no token
      await add('2026-02-02T00', 'cam1', 9, 90, 'a'); // the next day
      assert.equal(await add('2026-02-02T00', 'cam1', 100, 100, 'a', 1, 'A', 'rep-h'), true);
      assert.equal(await add('2026-02-02T00', 'cam1', 100, 100, 'a', 1, 'A', 'rep-h'), false, 'a repeated report counts in no read');
      await add('2026-02-01T10', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
      await add('2026-02-02T01', 'cam1', 2000, 2000, 'a'); // on stopHour
      await s.addUsage({ accountId: 'A', trackingId: 'a', tokenId: 1, streamName: 'cam1', day: '2026-02-01', bytesOut: 50000, bytesIn: 0 }); // per day only
      await add('2026-02-01T11', 'cam1', 70000, 0, 'a', 1, 'A', undefined, Date.now() - 1); // its hour no longer kept: per day only

      assert.deepEqual(byHour(await s.usageHourly('A', { trackingIds: ['a', 'b', 'none', 'a'] }, '2026-02-01T09', '2026-02-02T01')), [
        { hour: '2026-02-01T09', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        { hour: '2026-02-02T00', trackingId: 'a', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
        { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
        { hour: '2026-02-01T10', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
      ]);
      assert.deepEqual(byHour(await s.usageHourly('A', { streamNames: ['cam1', 'cam2', 'nothing'] }, '2026-02-01T09', '2026-02-02T01')), [
        { hour: '2026-02-01T09', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { hour: '2026-02-01T10', streamName: 'cam1', bytesOut: 2 + 3 + 5 + 6 + 7, bytesIn: 20 + 30 + 50 + 60 + 70 },
        { hour: '2026-02-01T23', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
        { hour: '2026-02-02T00', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
        { hour: '2026-02-01T10', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
      ]);
      assert.deepEqual(byHour(await s.usageHourly('A', { streamTracking: ['cam1'] }, '2026-02-01T09', '2026-02-02T01')), [
        { hour: '2026-02-01T10', trackingId: '', streamName: 'cam1', bytesOut: 13, bytesIn: 130 },
        { hour: '2026-02-01T23', trackingId: '', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
        { hour: '2026-02-01T09', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
        { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        { hour: '2026-02-02T00', trackingId: 'a', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
        { hour: '2026-02-01T10', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
      ]);
      assert.deepEqual(await s.usageHourly('A', { streamNames: ['cam1'] }, '2026-02-01T11', '2026-02-01T12'), [], 'an hour whose keepUntilMs had passed is not kept');
      assert.deepEqual(await s.usageHourly('B', { streamTracking: ['cam1'] }, '2026-02-01T00', '2026-02-03T00'), [
        { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
      ]);
      assert.deepEqual(await s.usageHourly('A', { trackingIds: [''] }, '2026-02-01T00', '2026-02-03T00'), [], 'the empty tracking id is not the untracked usage');
      assert.deepEqual(await s.usageHourly('C', { streamNames: ['cam1'] }, '2026-02-01T00', '2026-02-03T00'), []);

      assert.deepEqual(byPeriod(await s.usageAccount('A', 'hour', '2026-02-01T09', '2026-02-02T01')), [
        { period: '2026-02-01T09', bytesOut: 1, bytesIn: 10 },
        { period: '2026-02-01T10', bytesOut: 2 + 3 + 4 + 5 + 6 + 7, bytesIn: 270 },
        { period: '2026-02-01T23', bytesOut: 8, bytesIn: 80 },
        { period: '2026-02-02T00', bytesOut: 109, bytesIn: 190 },
      ]);
      assert.deepEqual(byPeriod(await s.usageAccount('A', 'day', '2026-01-31', '2026-02-03')), [
        { period: '2026-02-01', bytesOut: 1 + 27 + 8 + 50000 + 70000, bytesIn: 10 + 270 + 80 },
        { period: '2026-02-02', bytesOut: 109 + 2000, bytesIn: 190 + 2000 },
      ]);
      assert.deepEqual(await s.usageAccount('A', 'day', '2026-02-02', '2026-02-03'), [{ period: '2026-02-02', bytesOut: 2109, bytesIn: 2190 }]);
      assert.deepEqual(await s.usageAccount('B', 'hour', '2026-02-01T00', '2026-02-03T00'), [{ period: '2026-02-01T10', bytesOut: 1000, bytesIn: 1000 }]);
      assert.deepEqual(await s.usageAccount('C', 'day', '2026-01-01', '2026-03-01'), []);
    });

    it('keeps per-hour and per-account reads of 1,000 concurrent reports exact, tracked and untracked', async () => {
      const s = await fresh();
      const keepUntilMs = Date.now() + 86400000;
      await Promise.all(
        Array.from({ length: 1000 }, (_, i) => {
          const hour = i < 600 ? '2026-03-01T23' : '2026-03-02T00';
          return s.addUsage({ accountId: 'A', trackingId: i % 2 === 0 ? 'even' : undefined, tokenId: i % 5, streamName: 'cam1', day: hour.slice(0, 10), bytesOut: i + 1, bytesIn: 1, hourly: { hour, keepUntilMs } });
        }),
      );
      const sum = (from: number, to: number, pick: (i: number) => boolean = () => true) => {
        let n = 0;
        for (let i = from; i < to; i++) if (pick(i)) n += i + 1;
        return n;
      };
      const odd = (i: number) => i % 2 === 1;
      assert.deepEqual(byHour(await s.usageHourly('A', { streamTracking: ['cam1'] }, '2026-03-01T23', '2026-03-02T01')), [
        { hour: '2026-03-01T23', trackingId: '', streamName: 'cam1', bytesOut: sum(0, 600, odd), bytesIn: 300 },
        { hour: '2026-03-02T00', trackingId: '', streamName: 'cam1', bytesOut: sum(600, 1000, odd), bytesIn: 200 },
        { hour: '2026-03-01T23', trackingId: 'even', streamName: 'cam1', bytesOut: sum(0, 600, (i) => !odd(i)), bytesIn: 300 },
        { hour: '2026-03-02T00', trackingId: 'even', streamName: 'cam1', bytesOut: sum(600, 1000, (i) => !odd(i)), bytesIn: 200 },
      ]);
      assert.deepEqual(byPeriod(await s.usageAccount('A', 'hour', '2026-03-01T23', '2026-03-02T01')), [
        { period: '2026-03-01T23', bytesOut: sum(0, 600), bytesIn: 600 },
        { period: '2026-03-02T00', bytesOut: sum(600, 1000), bytesIn: 400 },
      ]);
      assert.deepEqual(byPeriod(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-03')), [
        { period: '2026-03-01', bytesOut: sum(0, 600), bytesIn: 600 },
        { period: '2026-03-02', bytesOut: sum(600, 1000), bytesIn: 400 },
      ]);
    });
  });
}
