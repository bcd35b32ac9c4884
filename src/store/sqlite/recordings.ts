// Recordings on SQLite (the merge of a completion into its open recording: completedRecording in domain/store-rules.ts).
import type { NewRecording, Recording, RecordingStore } from '../recordings.js';
import { completedRecording, type CompletedRecording } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import type { SqliteConnection } from './connection.js';
import type { AuditSealer } from '../../domain/audit.js';
import { appendSealed } from './audit.js';

export class SqliteRecordings implements RecordingStore {
  constructor(private readonly c: SqliteConnection) {}

  #insertRecording(r: Omit<Recording, 'id'>): Recording {
    const info = this.c.stmt('INSERT INTO recordings (account_id, stream_name, path, status, data) VALUES (?, ?, ?, ?, ?)')
      .run(r.accountId, r.streamName, r.path ?? '', r.status, JSON.stringify(r));
    return copyWith(r, { id: Number(info.lastInsertRowid) });
  }

  async startRecording(r: NewRecording): Promise<Recording> {
    return this.c.tx(() => this.#insertRecording(copyWith(r, { status: 'recording' })));
  }

  async completeRecording(r: CompletedRecording): Promise<Recording> {
    return this.c.tx(() => {
      const open = this.c.stmt(
        "SELECT id, data FROM recordings WHERE account_id = ? AND stream_name = ? AND path = ? AND status = 'recording' ORDER BY id DESC LIMIT 1",
      ).get(r.accountId, r.streamName, r.path ?? '') as { id: number; data: string } | undefined;
      const next = completedRecording(open ? copyWith(JSON.parse(open.data) as Recording, { id: open.id }) : null, r);
      if (next.id === undefined) return this.#insertRecording(next);
      this.c.stmt("UPDATE recordings SET status = 'completed', data = ? WHERE id = ?").run(JSON.stringify(next), next.id);
      return next as Recording;
    });
  }

  async listRecordings(accountId: string, streamName?: string): Promise<Recording[]> {
    const rows = (
      streamName === undefined
        ? this.c.stmt('SELECT id, data FROM recordings WHERE account_id = ? ORDER BY id DESC').all(accountId)
        : this.c.stmt('SELECT id, data FROM recordings WHERE account_id = ? AND stream_name = ? ORDER BY id DESC').all(accountId, streamName)
    ) as Array<{ id: number; data: string }>;
    return rows.map((r) => copyWith(JSON.parse(r.data) as Recording, { id: r.id }));
  }

  async deleteRecording(accountId: string, id: number, audit?: AuditSealer<Recording>): Promise<Recording | null> {
    return this.c.tx(() => {
      const r = this.c.stmt('SELECT id, data FROM recordings WHERE id = ? AND account_id = ?').get(id, accountId) as { id: number; data: string } | undefined;
      if (!r) return null;
      this.c.stmt('DELETE FROM recordings WHERE id = ?').run(id);
      const removed = copyWith(JSON.parse(r.data) as Recording, { id: r.id });
      appendSealed(this.c, accountId, audit, removed, null);
      return removed;
    });
  }
}
