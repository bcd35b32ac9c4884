// Recordings on Redis: a record per recording, the account's index, and the open recordings' hash.
import type { NewRecording, Recording, RecordingStore } from '../recordings.js';
import { keys } from './keys.js';
import { completedRecording, type CompletedRecording } from '../../domain/store-rules.js';
import { compareAndSet } from '../failures.js';
import { Reply, auditMoved, codeOf } from './codes.js';
import type { AuditSealer } from '../../domain/audit.js';
import { sealFor } from './audit.js';
import { copyWith } from '../../domain/objects.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';

export class RedisRecordings implements RecordingStore {
  constructor(private readonly c: RedisConnection) {}

  private readonly openField = (streamName: string, path?: string) => `${streamName}\u0000${path ?? ''}`;

  async startRecording(r: NewRecording): Promise<Recording> {
    // the id comes from a sequence outside the account's slot: an id taken by a crash is only skipped
    const rec: Recording = copyWith(r, { id: await this.c.redis.incr(keys.recordingSeq), status: 'recording' });
    await this.c.run(
      'recordingStart',
      keys.recording(r.accountId, rec.id),
      keys.recordings(r.accountId),
      keys.openRecordings(r.accountId),
      JSON.stringify(rec),
      rec.id,
      this.openField(r.streamName, r.path),
    );
    await this.c.replicated();
    return rec;
  }

  async completeRecording(r: CompletedRecording): Promise<Recording> {
    const field = this.openField(r.streamName, r.path);
    let newId: number | undefined; // taken once, kept across attempts
    const rec = await compareAndSet(`recording of ${r.streamName}`, MAX_CAS_ATTEMPTS, async () => {
      const openId = await this.c.redis.hget(keys.openRecordings(r.accountId), field);
      const raw = openId ? await this.c.redis.get(keys.recording(r.accountId, Number(openId))) : null;
      const merged = completedRecording(raw ? (JSON.parse(raw) as Recording) : null, r);
      let id = merged.id;
      if (id === undefined) {
        newId ??= await this.c.redis.incr(keys.recordingSeq);
        id = newId;
      }
      const rec: Recording = copyWith(merged, { id });
      const reply = await this.c.run(
        'recordingComplete',
        keys.openRecordings(r.accountId),
        keys.recording(r.accountId, rec.id),
        keys.recordings(r.accountId),
        field,
        openId ?? '',
        raw ?? '',
        JSON.stringify(rec),
        rec.id,
      );
      return codeOf(reply) === Reply.DONE ? { done: rec } : 'retry';
    });
    await this.c.replicated();
    return rec;
  }

  async listRecordings(accountId: string, streamName?: string): Promise<Recording[]> {
    const ids = await this.c.redis.zrevrange(keys.recordings(accountId), 0, -1);
    if (ids.length === 0) return [];
    const raws = await this.c.redis.mget(...ids.map((id) => keys.recording(accountId, Number(id))));
    return raws
      .filter((x): x is string => x !== null)
      .map((x) => JSON.parse(x) as Recording)
      .filter((r) => streamName === undefined || r.streamName === streamName);
  }

  async deleteRecording(accountId: string, id: number, audit?: AuditSealer<Recording>): Promise<Recording | null> {
    const reply = await compareAndSet(`recording ${id}`, MAX_CAS_ATTEMPTS, async () => {
      // sealed on the record read: the script removes it only if it is still that one
      const raw = audit === undefined ? null : await this.c.redis.get(keys.recording(accountId, id));
      if (audit !== undefined && raw === null) return { done: Reply.GONE };
      const sealed = await sealFor(this.c, accountId, raw === null ? undefined : audit, raw === null ? null : (JSON.parse(raw) as Recording), null);
      const r = await this.c.run('recordingDelete', keys.recording(accountId, id), keys.recordings(accountId), keys.openRecordings(accountId), ...sealed.keys, id, raw ?? '', ...sealed.argv);
      return auditMoved(r) || codeOf(r) === Reply.MOVED ? 'retry' : { done: r };
    });
    if (codeOf(reply) === Reply.GONE) return null;
    await this.c.replicated();
    return JSON.parse((reply as [number, string])[1]) as Recording;
  }
}
