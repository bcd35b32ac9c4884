// The caller's side of session-admit.lua's "ask for more keys" protocol
// (docs/architecture.md#redis-scripts). An admission replaces the connection's earlier record and
// may end the stream's other publishers; their keys are named by registry ids that only the script
// can read. The admission passes the keys it knows: those of the registration this instance last
// sent for the connection (a connection re-registered here, as a media server asking again for
// the same connection does, needs no more: one script call). The script answers NEEDS_KEYS,
// having written nothing, with the ids whose keys it lacks; their records are read (one MGET in
// the account's slot) and the script is called again with their keys, and verifies them again.
import type { AdmitResult, Session } from '../store.js';
import { StoreConflict } from '../../errors.js';
import { keys } from './keys.js';
import { Reply, admissionRefusal, codeOf, unexpectedReply } from './codes.js';
import { decodeSession } from './session-record.js';

/** What the keys of a registry record are built from. */
export interface Registration {
  accountId: string;
  id: string;
  tokenId?: number;
  streamName: string;
}

/**
 * Script calls per admission at most. Without concurrent writes two suffice (the second with every
 * key the first asked for); each further one follows a registration of the same connection or a
 * new publisher of the stream landing in between. Then StoreConflict, a retryable 503.
 */
export const ADMIT_ATTEMPTS = 3;
/** Connections whose last registration an instance remembers (a forgotten one costs one more call). */
const REMEMBERED = 10_000;

export type Admitted =
  | Extract<AdmitResult, { admitted: false }>
  | {
      admitted: true;
      /** The action and id of the connection's earlier record, which the script removed ('' = none). */
      goneAction: string;
      goneId: string;
      replaced: Session[];
    };

export class SessionAdmission {
  /**
   * By "<caller>\n<caller id>": the registration this instance last sent for the connection. A Map
   * emptied when full, not an LRU: it is read and written on every admission, and a forgotten
   * connection costs only one more script call.
   */
  private readonly lastSent = new Map<string, Registration>();

  constructor(
    /** Runs session-admit.lua: the number of keys, the keys, then ARGV. */
    private readonly run: (args: Array<string | number>) => Promise<unknown>,
    /** The registry records of an account by id (null: none). */
    private readonly readRecords: (accountId: string, ids: string[]) => Promise<Array<string | null>>,
  ) {}

  /**
   * Runs the admission of `s` with the script's fixed keys (KEYS[1..8], and on one Redis server
   * KEYS[9..11]) and ARGV[1..16] as the caller built them, adding the keys of other records.
   */
  async admit(s: Session, fixedKeys: string[], fixedArgs: Array<string | number>): Promise<Admitted> {
    const connection = `${s.caller}\n${s.sessionId}`;
    const last = this.lastSent.get(connection);
    // the keys of another account's record would name another Cluster slot
    let earlier = last !== undefined && last.accountId === s.accountId && last.id !== s.id ? last : undefined;
    let publishers: Registration[] = [];
    // remembered when sent: the next admission of the connection runs after this one on the connection
    const sent: Registration = { accountId: s.accountId, id: s.id, tokenId: s.tokenId, streamName: s.streamName };
    if (this.lastSent.size >= REMEMBERED) this.lastSent.clear();
    this.lastSent.set(connection, sent);
    for (let attempt = 1; ; attempt++) {
      const reply = await this.run(admitArgs(s, fixedKeys, fixedArgs, earlier, publishers));
      const code = codeOf(reply);
      if (code === Reply.DONE) {
        const r = reply as string[];
        return { admitted: true, goneAction: r[1], goneId: r[2], replaced: r.slice(3).map(decodeSession) };
      }
      if (code !== Reply.NEEDS_KEYS) {
        const reason = admissionRefusal(code);
        if (reason === undefined) throw unexpectedReply('session-admit', reply);
        // refused: the connection's record is still the earlier one
        if (this.lastSent.get(connection) === sent) {
          if (earlier !== undefined) this.lastSent.set(connection, earlier);
          else this.lastSent.delete(connection);
        }
        return { admitted: false, reason };
      }
      if (attempt === ADMIT_ATTEMPTS) throw new StoreConflict(`admission of session ${s.id}`, ADMIT_ATTEMPTS);
      const [, earlierId, ...publisherIds] = reply as string[];
      const read = await this.describe(s, earlierId === '' ? publisherIds : [earlierId, ...publisherIds]);
      if (earlierId !== '') earlier = read.shift();
      publishers = read.concat(publishers.filter((p) => !publisherIds.includes(p.id)));
    }
  }

  /**
   * What the keys of the records `ids` are built from, as read now. A record gone is given its
   * admission's token and stream: the script reads no record there and so touches none of them.
   */
  private async describe(s: Session, ids: string[]): Promise<Registration[]> {
    const raws = await this.readRecords(s.accountId, ids);
    return ids.map((id, i) => {
      const raw = raws[i];
      const rec = raw ? decodeSession(raw) : s;
      return { accountId: s.accountId, id, tokenId: rec.tokenId, streamName: rec.streamName };
    });
  }
}

/** session-admit.lua's arguments: the number of keys, KEYS, ARGV (its header lays them out). */
export function admitArgs(
  s: Session,
  fixedKeys: string[],
  fixedArgs: Array<string | number>,
  earlier: Registration | undefined,
  publishers: Registration[],
): Array<string | number> {
  const a = s.accountId;
  // re-registered as it was (the usual re-ask): its indexes are this admission's, KEYS[3..5]
  const same = earlier !== undefined && (earlier.tokenId ?? 0) === (s.tokenId ?? 0) && earlier.streamName === s.streamName;
  const out: Array<string | number> = [fixedKeys.length + (earlier === undefined ? 0 : same ? 1 : 4) + 2 * publishers.length];
  for (const k of fixedKeys) out.push(k);
  if (earlier !== undefined) {
    out.push(keys.sessionRecord(a, earlier.id));
    if (!same) out.push(keys.sessionsOfToken(a, earlier.tokenId), keys.sessionsOfStream(a, earlier.streamName), keys.publishersOfStream(a, earlier.streamName));
  }
  for (const p of publishers) out.push(keys.sessionRecord(a, p.id), keys.sessionsOfToken(a, p.tokenId));
  for (const v of fixedArgs) out.push(v);
  if (earlier !== undefined) out.push(earlier.id, same ? '=' : (earlier.tokenId ?? 0), earlier.streamName, keys.sessionGaugeMember(a, earlier.id));
  else out.push('', '', '', '');
  for (const p of publishers) out.push(p.id, p.tokenId ?? 0);
  return out;
}
