// Token-sharing signals (src/store/sharing.ts): per credential the last use of each address within
// a sliding window by the store's clock, newest first, capped, and per account and credential.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SHARING_MAX_ADDRESSES, type SharingStore, type SharingUse, type StoreLifecycle } from '../store/store.js';
import { T0 } from './fixtures.js';
import type { Fresh } from './factory.js';

export type SharingUnderTest = SharingStore & StoreLifecycle;

const use = (ip: string, at: number, country = 'FR'): SharingUse => ({ at, ip, network: `${ip.slice(0, ip.lastIndexOf('.'))}.0/24`, asn: 3215, country, lat: 48.85, lon: 2.35 });
const ips = (us: SharingUse[]) => us.map((u) => `${u.ip}@${u.at - T0}`);

export function sharingTests(fresh: Fresh<SharingUnderTest>): void {
  describe('sharing signals', () => {
    it('keeps each address’s latest use within the window by the store’s clock, newest first, per account and credential', async () => {
      let now = T0;
      const s = await fresh(() => now);
      const hour = 3_600_000;
      assert.deepEqual(await s.recordSharing('S', 'token:1', [use('192.0.2.1', T0), use('192.0.2.2', T0 + 10)], hour), [use('192.0.2.2', T0 + 10), use('192.0.2.1', T0)]);
      now += 1000;
      // an earlier use never replaces a later one; a later one does, with its place
      const got = await s.recordSharing('S', 'token:1', [use('192.0.2.1', T0 + 500, 'DE'), use('192.0.2.2', T0 + 5)], hour);
      assert.deepEqual(ips(got), ['192.0.2.1@500', '192.0.2.2@10']);
      assert.equal(got[0].country, 'DE');
      assert.deepEqual(await s.recordSharing('S', 'token:2', [use('198.51.100.1', T0 + 1000)], hour), [use('198.51.100.1', T0 + 1000)], 'another credential');
      assert.deepEqual(await s.sharingUses('T', 'token:1', hour), [], 'another account');
      assert.deepEqual(ips(await s.sharingUses('S', 'token:1', hour)), ['192.0.2.1@500', '192.0.2.2@10']);
      // the window: a shorter one reads fewer; past it the uses are gone
      assert.deepEqual(ips(await s.sharingUses('S', 'token:1', 600)), ['192.0.2.1@500']);
      now = T0 + hour + 100;
      assert.deepEqual(ips(await s.sharingUses('S', 'token:1', hour)), ['192.0.2.1@500']);
      assert.deepEqual(ips(await s.recordSharing('S', 'token:1', [use('203.0.113.9', now)], hour)), [`203.0.113.9@${hour + 100}`, '192.0.2.1@500']);
      now = T0 + 2 * hour + 1000;
      assert.deepEqual(await s.sharingUses('S', 'token:1', hour), [], 'every use past the window');
      assert.deepEqual(await s.recordSharing('S', 'token:1', [], hour), []);
    });

    it(`keeps at most ${SHARING_MAX_ADDRESSES} addresses per credential, the most recent`, async () => {
      const s = await fresh(() => T0 + 10_000);
      const many = Array.from({ length: SHARING_MAX_ADDRESSES + 10 }, (_, i) => use(`10.${i >> 8}.${i & 255}.1`, T0 + i));
      const kept = await s.recordSharing('S', 'token:9', many, 3_600_000);
      assert.equal(kept.length, SHARING_MAX_ADDRESSES);
      assert.deepEqual(kept[0], many[many.length - 1]);
      assert.deepEqual(kept[kept.length - 1], many[10]);
      assert.equal((await s.sharingUses('S', 'token:9', 3_600_000)).length, SHARING_MAX_ADDRESSES);
    });
  });
}
