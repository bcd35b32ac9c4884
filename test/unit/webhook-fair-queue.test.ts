// The per-account webhook queue: accounts take turns, none holds more in-flight slots than its cap,
// a full account loses its own deliveries, and a full queue takes room only from the longest account.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FairQueue } from '../../src/webhooks/fair-queue.js';

const takeAll = (q: FairQueue<string>) => {
  const out: string[] = [];
  for (let n = q.take(); n; n = q.take()) out.push(n.item);
  return out;
};

describe('FairQueue', () => {
  it('serves accounts with waiting work in turn, whoever queued first and most', () => {
    const q = new FairQueue<string>({ total: 100, perKey: 100, perKeyActive: 100 });
    for (let i = 1; i <= 5; i++) assert.deepEqual(q.push('flood', `f${i}`), { accepted: true });
    q.push('b', 'b1');
    q.push('c', 'c1');
    q.push('b', 'b2');
    assert.deepEqual(takeAll(q), ['f1', 'b1', 'c1', 'f2', 'b2', 'f3', 'f4', 'f5']);
    assert.equal(q.size, 0);
  });

  it('gives one account at most perKeyActive items in flight; another account is served meanwhile', () => {
    const q = new FairQueue<string>({ total: 100, perKey: 100, perKeyActive: 2 });
    for (let i = 1; i <= 5; i++) q.push('flood', `f${i}`);
    assert.deepEqual(takeAll(q), ['f1', 'f2']);
    q.push('victim', 'v1');
    assert.deepEqual(takeAll(q), ['v1'], 'the victim is served while the flood is at its cap');
    assert.deepEqual([q.activeFor('flood'), q.waitingFor('flood'), q.size], [2, 3, 3]);
    q.done('flood');
    assert.deepEqual(takeAll(q), ['f3']);
    q.done('victim');
    assert.equal(q.activeFor('victim'), 0);
    assert.throws(() => q.done('victim'), TypeError);
  });

  it('refuses an item beyond its own account share and still takes other accounts', () => {
    const q = new FairQueue<string>({ total: 100, perKey: 3, perKeyActive: 1 });
    for (let i = 1; i <= 3; i++) q.push('flood', `f${i}`);
    assert.deepEqual(q.push('flood', 'f4'), { accepted: false, reason: 'key-full' });
    assert.deepEqual(q.push('victim', 'v1'), { accepted: true });
    assert.deepEqual([q.waitingFor('flood'), q.waitingFor('victim'), q.size], [3, 1, 4]);
  });

  it('when the whole queue is full, the account holding the most gives up its newest item; the longest account itself is refused', () => {
    const q = new FairQueue<string>({ total: 5, perKey: 5, perKeyActive: 1 });
    for (let i = 1; i <= 5; i++) q.push('flood', `f${i}`);
    assert.deepEqual(q.push('victim', 'v1'), { accepted: true, evicted: { key: 'flood', item: 'f5' } });
    assert.deepEqual(q.push('flood', 'f6'), { accepted: false, reason: 'queue-full' });
    assert.deepEqual(q.push('other', 'o1'), { accepted: true, evicted: { key: 'flood', item: 'f4' } });
    // flood 3, victim 1, other 1: the victim's second item still displaces the flood.
    assert.deepEqual(q.push('victim', 'v2'), { accepted: true, evicted: { key: 'flood', item: 'f3' } });
    // flood 2, victim 2, other 1: a tie with the longest is refused rather than taken from a peer.
    assert.deepEqual(q.push('victim', 'v3'), { accepted: false, reason: 'queue-full' });
    assert.deepEqual(takeAll(q), ['f1', 'v1', 'o1']);
    assert.deepEqual([q.waitingFor('flood'), q.waitingFor('victim'), q.waitingFor('other'), q.size], [1, 1, 0, 2]);
  });

  it('clear() hands back every waiting item and keeps in-flight counts until done', () => {
    const q = new FairQueue<string>({ total: 10, perKey: 10, perKeyActive: 1 });
    q.push('a', 'a1');
    q.push('a', 'a2');
    q.push('b', 'b1');
    assert.equal(q.take()?.item, 'a1');
    assert.deepEqual(q.clear().sort(), ['a2', 'b1']);
    assert.deepEqual([q.size, q.activeFor('a'), q.take()], [0, 1, undefined]);
    q.done('a');
    assert.equal(q.activeFor('a'), 0);
  });

  it('keeps FIFO order within an account across many items (amortised shift)', () => {
    const q = new FairQueue<number>({ total: 10_000, perKey: 10_000, perKeyActive: 1 });
    for (let i = 0; i < 5000; i++) q.push('a', i);
    const got: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const n = q.take()!;
      got.push(n.item);
      q.done('a');
    }
    assert.deepEqual(got, Array.from({ length: 5000 }, (_, i) => i));
  });
});
