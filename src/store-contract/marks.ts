// The marks: a value per account and name, swapped and taken atomically, expiring by the store's
// clock (src/store/marks.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MarkStore, StoreLifecycle } from '../store/store.js';
import { T0 } from './fixtures.js';
import type { Fresh } from './factory.js';

export type MarksUnderTest = MarkStore & StoreLifecycle;

export function markTests(fresh: Fresh<MarksUnderTest>): void {
  describe('marks', () => {
    it("swapMark answers the value held before; 'absent' and 'present' write only then; marks are per account and expire by the store's clock", async () => {
      let now = T0;
      const s = await fresh(() => now);
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'present'), null, 'none held');
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'd:1', 1000, 'present'), null, "'present' set nothing");
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'absent'), null);
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'other', 1000, 'absent'), 'watched', "held: 'absent' writes nothing");
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'd:1', 1000, 'present'), 'watched');
      assert.equal(await s.swapMark('N', 'viewers:cam1', 'x', 1000), null, "another account's mark of the same name");
      assert.equal(await s.takeMark('M', 'viewers:cam1', 'watched'), false, 'it holds d:1');
      assert.equal(await s.takeMark('M', 'viewers:cam1', 'd:1'), true);
      assert.equal(await s.takeMark('M', 'viewers:cam1', 'd:1'), false, 'taken');
      assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'present'), null, 'taken: none held');
      assert.equal(await s.swapMark('N', 'viewers:cam1', 'y', 1000), 'x');

      assert.equal(await s.swapMark('M', 'a', 'v', 1000), null);
      now += 999;
      assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'absent'), 'v', 'alive 1 ms before its time');
      now += 1;
      assert.equal(await s.takeMark('M', 'a', 'v'), false, 'expired');
      assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'present'), null, 'expired: none held');
      assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'absent'), null);
      assert.equal(await s.swapMark('M', 'a', 'x', 5000), 'w', "'always' replaces");
      now += 4000;
      assert.equal(await s.swapMark('M', 'a', 'y', 5000, 'present'), 'x', 'and renews: alive after the old ttl');
    });

    it("concurrent 'absent' swaps: exactly one finds none; concurrent takes: exactly one removes it", async () => {
      const s = await fresh();
      const swaps = await Promise.all(Array.from({ length: 10 }, (_, i) => s.swapMark('M', 'attempt:cam1', `v${i}`, 10_000, 'absent')));
      assert.equal(swaps.filter((v) => v === null).length, 1);
      const winner = `v${swaps.indexOf(null)}`;
      assert.deepEqual(new Set(swaps.filter((v) => v !== null)), new Set([winner]));
      const takes = await Promise.all(Array.from({ length: 10 }, () => s.takeMark('M', 'attempt:cam1', winner)));
      assert.equal(takes.filter(Boolean).length, 1);
    });
  });
}
