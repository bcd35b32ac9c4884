// The session registry's ids (src/domain/session-ids.ts): their form, and no repeat across the
// random pool's refills.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newSessionId } from '../../src/domain/session-ids.js';

describe('registry session ids', () => {
  it('are 16 base64url characters, none repeated over several refills of the pool', () => {
    const n = 5000; // the pool holds 512: ten refills
    const ids = Array.from({ length: n }, () => newSessionId());
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{16}$/);
    assert.equal(new Set(ids).size, n);
  });

  it('spread over the whole alphabet in every position (no fixed or zero bytes)', () => {
    const ids = Array.from({ length: 4000 }, () => newSessionId());
    for (let pos = 0; pos < 16; pos++) {
      const seen = new Set(ids.map((id) => id[pos]));
      // 4,000 draws of 64 symbols: each position shows nearly all of them (a stuck byte shows one)
      assert.ok(seen.size >= 60, `position ${pos}: ${seen.size} symbols`);
    }
  });
});
