// The recordings: started and completed by stream and path, listed, deleted once, and completed
// concurrently without a merge lost or doubled (src/store/recordings.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RecordingStore, StoreLifecycle } from '../store/store.js';
import { T0 } from './fixtures.js';
import type { Fresh } from './factory.js';

export type RecordingsUnderTest = RecordingStore & StoreLifecycle;

export function recordingTests(fresh: Fresh<RecordingsUnderTest>): void {
  describe('recordings', () => {
    it('starts and completes recordings by stream and path, lists newest first, deletes once', async () => {
      const s = await fresh();
      const base = { accountId: 'A', streamName: 'cam1', tokenId: 3, recordedOn: new Date(T0).toISOString() };
      const started = await s.startRecording({ ...base, path: '/r/1.mp4' });
      assert.equal(started.status, 'recording');
      const done = await s.completeRecording({ ...base, path: '/r/1.mp4', completedOn: new Date(T0 + 5000).toISOString(), recordedOn: new Date(T0 + 5000).toISOString() });
      assert.deepEqual([done.id, done.status, done.recordedOn, done.completedOn], [started.id, 'completed', base.recordedOn, new Date(T0 + 5000).toISOString()]);
      const other = await s.completeRecording({ ...base, streamName: 'cam2', path: '/r/2.flv', completedOn: base.recordedOn });
      assert.notEqual(other.id, started.id);
      await s.completeRecording({ ...base, accountId: 'B', completedOn: base.recordedOn });
      assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [other.id, started.id]);
      assert.deepEqual((await s.listRecordings('A', 'cam1')).map((r) => r.id), [started.id]);
      assert.equal(await s.deleteRecording('B', started.id), null);
      assert.equal((await s.deleteRecording('A', started.id))?.id, started.id);
      assert.equal(await s.deleteRecording('A', started.id), null);
      assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [other.id]);
    });
  });

  describe('recordings: concurrent writes', () => {
    const at = (ms: number) => new Date(T0 + ms).toISOString();

    it('20 recordings started and completed concurrently each complete their own start', async () => {
      const s = await fresh();
      const runs = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const base = { accountId: 'A', streamName: 'cam1', tokenId: i + 1, path: `/r/${i}.mp4` };
          const started = await s.startRecording({ ...base, recordedOn: at(i) });
          const done = await s.completeRecording({ ...base, tokenId: undefined, recordedOn: at(1000 + i), completedOn: at(2000 + i) });
          return { started, done };
        }),
      );
      for (const [i, { started, done }] of runs.entries()) {
        assert.deepEqual(done, { ...started, status: 'completed', completedOn: at(2000 + i) }, `path ${i}`);
      }
      const listed = await s.listRecordings('A');
      assert.deepEqual(
        listed.map((r) => [r.id, r.status, r.recordedOn]).sort((a, b) => Number(a[0]) - Number(b[0])),
        runs.map(({ started }) => [started.id, 'completed', started.recordedOn]).sort((a, b) => Number(a[0]) - Number(b[0])),
      );
    });

    it('10 concurrent completions of one open recording: exactly one completes it, each other one is stored as a new completed recording', async () => {
      const s = await fresh();
      const base = { accountId: 'A', streamName: 'cam1', path: '/r/x.mp4' };
      const started = await s.startRecording({ ...base, tokenId: 7, recordedOn: at(0) });
      const done = await Promise.all(Array.from({ length: 10 }, (_, i) => s.completeRecording({ ...base, recordedOn: at(100 + i), completedOn: at(200 + i) })));
      const merged = done.filter((r) => r.id === started.id);
      assert.equal(merged.length, 1);
      assert.deepEqual([merged[0].recordedOn, merged[0].tokenId, merged[0].status], [at(0), 7, 'completed']);
      assert.equal(new Set(done.map((r) => r.id)).size, 10, 'distinct ids');
      const listed = await s.listRecordings('A');
      assert.equal(listed.length, 10);
      assert.deepEqual(new Set(listed.map((r) => r.status)), new Set(['completed']));
      assert.deepEqual(listed.map((r) => r.id).sort((a, b) => a - b), done.map((r) => r.id).sort((a, b) => a - b));
    });

    it('deleting a completed recording leaves the open recording of the same stream and path to be completed', async () => {
      const s = await fresh();
      const base = { accountId: 'A', streamName: 'cam1', path: '/r/same.mp4' };
      const first = await s.startRecording({ ...base, recordedOn: at(0) });
      await s.completeRecording({ ...base, recordedOn: at(0), completedOn: at(10) });
      const second = await s.startRecording({ ...base, recordedOn: at(20) });
      assert.equal((await s.deleteRecording('A', first.id))?.id, first.id);
      const done = await s.completeRecording({ ...base, recordedOn: at(25), completedOn: at(30) });
      assert.deepEqual([done.id, done.recordedOn, done.status], [second.id, at(20), 'completed']);
      assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [second.id]);
    });
  });
}
