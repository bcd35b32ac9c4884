// A registry session record for tests: a MediaMTX subscriber of cam1 unless `over` says otherwise.
import type { Session } from '../../src/store/store.js';

/** A session started and last seen at `at` (ms), its id derived from the caller and connection id. */
export function sessionRecord(over: Partial<Session> & { sessionId: string }, at = Date.now()): Session {
  return {
    id: `id-${over.caller ?? 'mediamtx'}-${over.sessionId}`,
    caller: 'mediamtx',
    action: 'subscribe',
    accountId: 'acc',
    streamName: 'cam1',
    startedOn: new Date(at).toISOString(),
    lastSeenOn: new Date(at).toISOString(),
    ...over,
  };
}
