// The live streams: publishing tokens per stream and per account, ended by their feed, expired when
// lost, and the account version moved when a stream's publishing token changes
// (src/store/live-streams.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AccountStore, LiveStreamStore, StoreLifecycle, TokenStore } from '../store/store.js';
import { account, T0, tok } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the live streams part runs on: the live streams, and the account and tokens whose version they move. */
export type LiveStreamsUnderTest = LiveStreamStore & AccountStore & TokenStore & StoreLifecycle;

export function liveStreamTests(fresh: Fresh<LiveStreamsUnderTest>): void {
  describe('live streams', () => {
    it('lists publishing tokens per stream and per account, ends streams, and expires lost ones', async () => {
      let now = T0;
      const s = await fresh(() => now);
      const live = (accountId: string, streamName: string, tokenId: number, feedId: string) => ({
        accountId,
        streamName,
        tokenId,
        feedId,
        startedOn: new Date(now).toISOString(),
        caller: 'test',
      });
      await s.startLiveStream(live('A', 'cam1', 7, 'f1'), 60);
      await s.startLiveStream(live('A', 'cam2', 3, 'f2'), 600);
      await s.startLiveStream(live('B', 'cam1', 9, 'f3'), 600);
      assert.deepEqual(await s.activePublishTokenIds('A', 'cam1'), [7]);
      assert.deepEqual(await s.getLiveStream('A', 'cam1'), live('A', 'cam1', 7, 'f1'));
      assert.equal(await s.getLiveStream('A', 'nope'), null);
      assert.deepEqual(await s.activePublishTokenIds('A'), [3, 7]);
      assert.deepEqual(await s.activePublishTokenIds('A', 'nope'), []);
      assert.equal(await s.endLiveStream('A', 'cam2', 'other-feed'), null);
      assert.deepEqual(await s.endLiveStream('A', 'cam2', 'f2'), live('A', 'cam2', 3, 'f2'));
      assert.deepEqual(await s.activePublishTokenIds('A'), [7]);
      now += 61_000;
      assert.deepEqual(await s.activePublishTokenIds('A'), []);
      assert.deepEqual(await s.activePublishTokenIds('B'), [9]);
      // an expired entry cleared by a read does not stand in the way of the stream starting again
      await s.startLiveStream({ ...live('A', 'cam1', 8, 'f4'), startedOn: new Date(now).toISOString() }, 60);
      assert.deepEqual(await s.activePublishTokenIds('A'), [8]);
      assert.equal((await s.getLiveStream('A', 'cam1'))?.feedId, 'f4');
    });

    it("moves the account version when a stream's publishing token changes, once the account has viewer-rule tokens", async () => {
      let now = T0;
      const s = await fresh(() => now);
      await s.createAccount(account('A'));
      const live = (streamName: string, tokenId: number, feedId: string) => ({ accountId: 'A', streamName, tokenId, feedId, startedOn: new Date(now).toISOString(), caller: 'test' });
      const ver = () => s.accountVersion('A');
      let v = await ver();
      // no token of the account sets viewer rules: whoever publishes, no viewer decision changes
      await s.startLiveStream(live('cam1', 7, 'f1'), 60);
      await s.endLiveStream('A', 'cam1', 'f1');
      assert.equal(await ver(), v);
      await s.createToken(tok('A', 'publish', 'geo', T0, { deniedCountries: ['FR'] }));
      v = await ver();
      await s.startLiveStream(live('cam1', 7, 'f1'), 60);
      assert.equal(await ver(), v + 1, 'live now');
      await s.startLiveStream(live('cam1', 7, 'f2'), 60);
      assert.equal(await ver(), v + 1, 'the same token again: nothing changes for viewers');
      await s.startLiveStream(live('cam1', 8, 'f3'), 60);
      assert.equal(await ver(), v + 2, 'another publishing token');
      assert.equal(await s.endLiveStream('A', 'cam1', 'f2'), null);
      assert.equal(await ver(), v + 2, 'a feed that is not the live one ends nothing');
      await s.endLiveStream('A', 'cam1', 'f3');
      assert.equal(await ver(), v + 3, 'ended');
      await s.startLiveStream(live('cam2', 7, 'f4'), 60);
      now += 61_000;
      assert.equal(await s.getLiveStream('A', 'cam2'), null);
      await s.startLiveStream(live('cam2', 7, 'f5'), 60);
      assert.equal(await ver(), v + 5, 'the same token after its entry expired: live again');
      await s.startLiveStream(live('cam3', 7, 'f6'), 60);
      assert.equal(await s.accountVersion('B'), 0, 'other accounts untouched');
    });
  });
}
