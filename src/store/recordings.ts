// The recordings aggregate (rules both backends apply: completedRecording in domain/store-rules.ts).
import type { NewRecording, Recording } from '../domain/store-rules.js';
import type { AuditSealer } from '../domain/audit.js';

export type { NewRecording, Recording };

export interface RecordingStore {
  /** A recording began (status 'recording'). */
  startRecording(r: NewRecording): Promise<Recording>;
  /**
   * A recording is complete: completes the open recording of the same stream and path if there is
   * one, else stores a new completed recording (domain rule `completedRecording`). Of concurrent
   * completions of one open recording exactly one completes it.
   */
  completeRecording(r: NewRecording & { completedOn: string }): Promise<Recording>;
  /** The account's recordings (of one stream, when given), newest first. */
  listRecordings(accountId: string, streamName?: string): Promise<Recording[]>;
  /**
   * Removes a recording (and, if it is still open, its open mark); returns it, null when not found.
   * `audit`: the removal's entry, sealed (recording, null) in the same atomic step (src/store/audit.ts).
   */
  deleteRecording(accountId: string, id: number, audit?: AuditSealer<Recording>): Promise<Recording | null>;
}
