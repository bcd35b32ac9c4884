// The session registry on Redis: a record and live indexes (sorted sets by expiry) in the account's
// slot, a caller-id hint outside it, the gauge's counts, and the expiry cuts. Admission: session-admit.ts.
import type { AdmitResult, Session, SessionEndReason, SessionFilter, SessionLimits, SessionStore, SessionTouch } from '../sessions.js';
import { keys } from './keys.js';
import { Cluster } from 'ioredis';
import { ENDED_SESSION_KEEP_S, callerIdIsRegistryId, foundByCallerIdAlone, registryIdIsCallerId } from '../../domain/store-rules.js';
import { Reply, codeOf } from './codes.js';
import { SessionAdmission } from './session-admit.js';
import type { RedisConnection } from './connection.js';
import { SESSION_RECORDS_META, decodeSession, encodeSession, isSessionRecordForm, type SessionRecordForm } from './session-record.js';

/**
 * Sessions per session-touch-many call at most: its keys (three index keys and two of its own per
 * session at most) and its ZADD arguments stay well inside what one script call should carry.
 */
const TOUCH_MANY_MAX = 128;

/** How often an instance reads again which form records are written in (ms). */
const FORM_RECHECK_MS = 60_000;

/** How often an instance repeats a gauge count name to the set of names (ms). */
const COUNT_NAME_RESEND_MS = 60_000;

/** Where a session's keys are: account, registry id, token, stream (what its caller-id hint holds). */
interface SessionPointer {
  a: string;
  id: string;
  t?: number;
  s: string;
}

/** Where a registry record's keys are. */
const placeOf = (r: Session): SessionPointer => ({ a: r.accountId, id: r.id, t: r.tokenId, s: r.streamName });

/** Appends `value` to the list `map` holds under `key`. */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

export class RedisSessions implements SessionStore {
  /** When this instance last added each gauge count name to the set of names (countNameDue). */
  private readonly countNamesSent = new Map<string, number>();
  /** The session admission's calls of its script (session-admit.ts). */
  private readonly admissions: SessionAdmission;
  /** The form records are written in (session-record.ts), as the store's meta last said. */
  #form: SessionRecordForm = 'json';
  /** When the meta was last asked for (c.now()), and the first read, awaited by every write until it lands. */
  #formAskedAt = Number.NEGATIVE_INFINITY;
  #firstFormRead: Promise<void> | undefined;

  constructor(private readonly c: RedisConnection) {
    this.admissions = new SessionAdmission(
      (args) => c.run('sessionAdmit', ...args),
      (accountId, ids) => c.redis.mget(...ids.map((id) => keys.sessionRecord(accountId, id))),
    );
  }

  async startSession(s: Session, ttlSeconds: number): Promise<void> {
    await this.admitSession(s, ttlSeconds, {});
  }

  /** The keys the touch and end scripts take, from a record or a caller-id hint. */
  #sessionKeys(p: SessionPointer, caller: string, sessionId: string): string[] {
    return [
      keys.sessionRecord(p.a, p.id),
      keys.sessionsLive(p.a),
      keys.sessionsOfToken(p.a, p.t),
      keys.sessionsOfStream(p.a, p.s),
      keys.publishersOfStream(p.a, p.s),
      keys.sessionPointer(p.a, caller, sessionId),
    ];
  }

  /**
   * The form records are written in (an admission's, and a touched or ended one's whatever form it
   * had): the store's meta (SESSION_RECORDS_META), read before the first write and again every
   * FORM_RECHECK_MS without waiting, so every instance follows a switch within a minute. Unset or
   * unreadable: objects, which every build reads.
   */
  async #recordForm(now: number): Promise<SessionRecordForm> {
    if (now - this.#formAskedAt >= FORM_RECHECK_MS) {
      this.#formAskedAt = now;
      const read = this.c.redis.get(keys.meta(SESSION_RECORDS_META)).then(
        (v) => {
          this.#form = isSessionRecordForm(v) ? v : 'json';
        },
        () => {
          this.#formAskedAt = Number.NEGATIVE_INFINITY;
        },
      );
      this.#firstFormRead ??= read;
    }
    await this.#firstFormRead;
    return this.#form;
  }

  /** The scripts' argument saying the form a touched or ended record is written in: '1' rows, '0' objects. */
  static #rowsFlag(form: SessionRecordForm): '1' | '0' {
    return form === 'compact' ? '1' : '0';
  }

  async admitSession(s: Session, ttlSeconds: number, limits: SessionLimits): Promise<AdmitResult> {
    const now = this.c.now();
    const form = await this.#recordForm(now);
    const expires = Date.parse(s.lastSeenOn) + ttlSeconds * 1000;
    const pointer = placeOf(s);
    const countKey = `${s.caller}:${s.action}`;
    const [gaugeKey, member] = keys.sessionGauge(s);
    const pointerKey = keys.session(s.caller, s.sessionId);
    const hinted = this.#hinted(s.caller, form);
    const pointerJson = hinted ? JSON.stringify(pointer) : '';
    // The connection's pointer and the gauge's entries live outside the account's slot. On one Redis
    // server the script writes them too (one command per admission); a Cluster sends them after.
    const local = !(this.c.redis instanceof Cluster);
    const reply = await this.admissions.admit(
      s,
      [
        ...this.#sessionKeys(pointer, s.caller, s.sessionId),
        keys.tokenUses(s.accountId, s.tokenId),
        keys.tokenRecord(s.accountId, s.tokenId ?? 0)[0],
        ...(local ? [pointerKey, keys.sessionCountOf(s.caller, 'subscribe'), keys.sessionCountOf(s.caller, 'publish')] : []),
      ],
      [
        encodeSession(s, form),
        expires,
        now,
        s.id,
        limits.maxUses ?? '',
        limits.maxConcurrent ?? '',
        limits.publishConflict ?? '',
        s.action,
        s.tokenId ?? '',
        new Date(now).toISOString(),
        ENDED_SESSION_KEEP_S * 1000,
        limits.tokenRev ?? '',
        local ? '1' : '0',
        local ? pointerJson : '',
        local ? member : '',
        registryIdIsCallerId(s) ? '1' : '0',
      ],
    );
    if (!reply.admitted) return reply;
    const replaced = reply.replaced;
    // On a Cluster the pointer and the gauge's entries are sent after the script, at once and side by
    // side (each on its own node), and waited for: a Cluster may resend a command after a
    // redirection, so an unawaited write could land after a later read or removal of the same
    // connection (a re-ask, a media server's "done" finding no pointer). Lost with Redis itself, a
    // pointer makes a re-ask register the connection again. Separate commands, not a pipeline: an
    // ioredis pipeline copies every script method onto itself, and its bookkeeping outlived young
    // collections at admission rates, making each scavenge long
    // (docs/decision-path.md#session-admissions).
    const ignore = () => undefined;
    if (!local) {
      // every one settled, not the first to fail: a gauge write refused at once must not answer before the pointer lands
      await Promise.allSettled([
        hinted ? this.c.redis.set(pointerKey, pointerJson, 'PX', Math.max(1, expires - now)) : undefined,
        reply.goneId !== '' ? this.c.redis.zrem(...keys.sessionGauge({ caller: s.caller, action: reply.goneAction, accountId: s.accountId, id: reply.goneId })) : undefined,
        this.c.redis.zadd(gaugeKey, expires, member),
      ]);
    }
    if (this.#countNameDue(countKey, now)) this.c.redis.sadd(keys.sessionCountNames, countKey).catch(ignore);
    for (const r of replaced) this.c.redis.zrem(...keys.sessionGauge(r)).catch(ignore);
    return { admitted: true, replaced };
  }

  /**
   * Whether the gauge's set of count names should hear of `name` again: once a minute per name, not
   * on every admission (the set only lists which count keys exist; a flushed Redis hears it again
   * within the minute).
   */
  #countNameDue(name: string, now: number): boolean {
    const last = this.countNamesSent.get(name);
    if (last !== undefined && now - last < COUNT_NAME_RESEND_MS) return false;
    this.countNamesSent.set(name, now);
    return true;
  }

  /**
   * Whether a session of `caller` has a caller-id hint (keys.session) when written in `form`: every
   * session's but an HTTP viewer's, which is found through its account only (sessionLookupFinds);
   * while records are written as objects, for instances of earlier builds, which find every
   * session by its hint, an HTTP viewer's too.
   */
  #hinted(caller: string, form: SessionRecordForm): boolean {
    return form === 'json' || foundByCallerIdAlone(caller);
  }

  /**
   * Where the session of `caller` and `sessionId` is: in `accountId`'s slot when the account is
   * given (#recordsIn), else through the caller-id hint; null when unknown, or not to be found
   * this way (sessionLookupFinds in domain/store-rules.ts).
   */
  async #pointerOf(caller: string, sessionId: string, accountId?: string): Promise<SessionPointer | null> {
    if (accountId !== undefined) {
      const [r] = await this.#recordsIn(accountId, caller, [sessionId]);
      return r && placeOf(r);
    }
    if (!foundByCallerIdAlone(caller)) return null;
    const raw = await this.c.redis.get(keys.session(caller, sessionId));
    return raw ? (JSON.parse(raw) as SessionPointer) : null;
  }

  /**
   * The records of `caller`'s sessions `sessionIds` in one account, from its slot: an HTTP viewer's
   * is named by its caller id (callerIdIsRegistryId), so one MGET finds those; any other (or one an
   * earlier build registered) through its pointer, then the record it names (two MGETs, whatever
   * their number). A record is believed only when it is the caller id's.
   */
  async #recordsIn(accountId: string, caller: string, sessionIds: readonly string[]): Promise<Array<Session | null>> {
    const out: Array<Session | null> = sessionIds.map(() => null);
    const take = (raw: string | null, i: number) => {
      if (raw === null) return;
      const r = decodeSession(raw);
      if (r.caller === caller && r.sessionId === sessionIds[i]) out[i] = r;
    };
    let rest = sessionIds.map((_, i) => i);
    if (callerIdIsRegistryId(caller)) {
      (await this.c.redis.mget(...sessionIds.map((sid) => keys.sessionRecord(accountId, sid)))).forEach(take);
      rest = rest.filter((i) => out[i] === null);
      if (rest.length === 0) return out;
    }
    const ids = await this.c.redis.mget(...rest.map((i) => keys.sessionPointer(accountId, caller, sessionIds[i])));
    const found = rest.filter((_, k) => ids[k] !== null);
    if (found.length === 0) return out;
    const named = ids.filter((id): id is string => id !== null);
    const raws = await this.c.redis.mget(...named.map((id) => keys.sessionRecord(accountId, id)));
    for (let k = 0; k < raws.length; k++) take(raws[k], found[k]);
    return out;
  }

  async getSession(caller: string, sessionId: string, accountId?: string): Promise<Session | null> {
    // with the account, the record as its slot holds it (#recordsIn read it)
    if (accountId !== undefined) return (await this.#recordsIn(accountId, caller, [sessionId]))[0];
    const p = await this.#pointerOf(caller, sessionId);
    if (!p) return null;
    const s = await this.getSessionById(p.a, p.id);
    // the hint is believed only when the record agrees
    return s && s.caller === caller && s.sessionId === sessionId ? s : null;
  }

  async getSessionById(accountId: string, id: string): Promise<Session | null> {
    const raw = await this.c.redis.get(keys.sessionRecord(accountId, id));
    return raw ? decodeSession(raw) : null;
  }

  async touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string, accountId?: string): Promise<Session | null> {
    const p = await this.#pointerOf(caller, sessionId, accountId);
    if (!p) return null;
    const ttl = ttlSeconds * 1000;
    const form = await this.#recordForm(this.c.now());
    const rows = RedisSessions.#rowsFlag(form);
    const reply = await this.c.run('sessionTouch', ...this.#sessionKeys(p, caller, sessionId), ttl, at, Date.parse(at), rows);
    if (codeOf(reply) === Reply.GONE) return null;
    // {DONE, record} touched, {ENDED, record} as it is
    const s = decodeSession((reply as [number, string])[1]);
    if (s.endedReason === undefined) {
      const [gaugeKey, member] = keys.sessionGauge(s);
      void Promise.all([
        this.#hinted(caller, form) ? this.c.redis.pexpire(keys.session(caller, sessionId), ttl) : undefined,
        this.c.redis.zadd(gaugeKey, 'XX', Date.parse(at) + ttl, member),
      ]).catch(() => undefined);
    }
    return s;
  }

  async touchSessions(caller: string, touches: ReadonlyArray<SessionTouch>, ttlSeconds: number): Promise<Array<Session | null>> {
    const ttl = ttlSeconds * 1000;
    const out: Array<Session | null> = touches.map(() => null);
    // where each is: those with their account named through its slot, TOUCH_MANY_MAX at a time;
    // the others through their caller-id hints, side by side (each on its own node). Then one
    // script per account and TOUCH_MANY_MAX sessions.
    const pointers: Array<SessionPointer | null> = touches.map(() => null);
    const named = new Map<string, number[]>();
    const finding: Array<Promise<void>> = [];
    touches.forEach((t, i) => {
      if (t.accountId !== undefined) pushTo(named, t.accountId, i);
      else
        finding.push(
          this.#pointerOf(caller, t.sessionId).then((p) => {
            pointers[i] = p;
          }),
        );
    });
    for (const [accountId, all] of named) {
      for (let k = 0; k < all.length; k += TOUCH_MANY_MAX) {
        const part = all.slice(k, k + TOUCH_MANY_MAX);
        finding.push(
          this.#recordsIn(accountId, caller, part.map((i) => touches[i].sessionId)).then((records) => {
            records.forEach((r, j) => {
              pointers[part[j]] = r && placeOf(r);
            });
          }),
        );
      }
    }
    await Promise.all(finding);
    const form = await this.#recordForm(this.c.now());
    const rows = RedisSessions.#rowsFlag(form);
    const hinted = this.#hinted(caller, form);
    const byAccount = new Map<string, number[]>();
    pointers.forEach((p, i) => {
      if (p) pushTo(byAccount, p.a, i);
    });
    const calls: Array<Promise<void>> = [];
    for (const [accountId, all] of byAccount) {
      for (let k = 0; k < all.length; k += TOUCH_MANY_MAX) calls.push(this.#touchMany(caller, accountId, all.slice(k, k + TOUCH_MANY_MAX), touches, pointers, ttl, rows, out));
    }
    await Promise.all(calls);
    // as touchSession: the live ones' hints and gauge entries follow, not waited for (one ZADD per gauge key)
    const gauge = new Map<string, Array<string | number>>();
    const follow: Array<Promise<unknown>> = [];
    out.forEach((s, i) => {
      if (!s || s.endedReason !== undefined) return;
      const [gaugeKey, member] = keys.sessionGauge(s);
      pushTo(gauge, gaugeKey, Date.parse(touches[i].at) + ttl);
      pushTo(gauge, gaugeKey, member);
      if (hinted) follow.push(this.c.redis.pexpire(keys.session(caller, touches[i].sessionId), ttl));
    });
    for (const [gaugeKey, scored] of gauge) follow.push(this.c.redis.zadd(gaugeKey, 'XX', ...scored));
    void Promise.all(follow).catch(() => undefined);
    return out;
  }

  /** One session-touch-many call: the sessions `at` of `touches` (all of `accountId`), their answers into `out`. */
  async #touchMany(
    caller: string,
    accountId: string,
    at: number[],
    touches: ReadonlyArray<{ sessionId: string; at: string }>,
    pointers: Array<SessionPointer | null>,
    ttl: number,
    rows: '1' | '0',
    out: Array<Session | null>,
  ): Promise<void> {
    // each index key once: its KEYS position (KEYS[1] is the account's live sessions)
    const indexKeys: string[] = [];
    const positions = new Map<string, number>();
    const position = (key: string) => {
      let p = positions.get(key);
      if (p === undefined) {
        indexKeys.push(key);
        p = indexKeys.length + 1;
        positions.set(key, p);
      }
      return p;
    };
    const sessionKeys: string[] = [];
    const args: Array<string | number> = [];
    for (const i of at) {
      const p = pointers[i]!;
      const t = touches[i];
      args.push(t.at, Date.parse(t.at), position(keys.sessionsOfToken(accountId, p.t)), position(keys.sessionsOfStream(accountId, p.s)), position(keys.publishersOfStream(accountId, p.s)));
      sessionKeys.push(keys.sessionRecord(accountId, p.id), keys.sessionPointer(accountId, caller, t.sessionId));
    }
    const all = [keys.sessionsLive(accountId), ...indexKeys, ...sessionKeys];
    const reply = await this.c.run('sessionTouchMany', all.length, ...all, ttl, indexKeys.length, rows, ...args);
    if (codeOf(reply) !== Reply.DONE) throw new Error(`session-touch-many answered ${String(codeOf(reply))}`);
    (reply as [number, Array<string | null>])[1].forEach((raw, k) => {
      out[at[k]] = raw === null ? null : decodeSession(raw);
    });
  }

  async endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }, accountId?: string): Promise<Session | null> {
    const p = await this.#pointerOf(caller, sessionId, accountId);
    if (!p) return null;
    const keep = end.keepSeconds * 1000;
    const form = await this.#recordForm(this.c.now());
    const rows = RedisSessions.#rowsFlag(form);
    const reply = await this.c.run('sessionEnd', ...this.#sessionKeys(p, caller, sessionId), end.reason, end.at, keep, Date.parse(end.at), rows);
    // GONE (unknown) or ENDED (another call ended it)
    if (codeOf(reply) !== Reply.DONE) return null;
    const s = decodeSession((reply as [number, string])[1]);
    void Promise.all([
      this.#hinted(caller, form) ? this.c.redis.pexpire(keys.session(caller, sessionId), keep) : undefined,
      this.c.redis.zrem(...keys.sessionGauge(s)),
    ]).catch(() => undefined);
    return s;
  }

  async listSessions(accountId: string, f: SessionFilter, page: { offset: number; limit: number }): Promise<{ total: number; items: Session[] }> {
    if (page.limit === 0 && f.streamName !== undefined && f.tokenId === undefined && f.action !== undefined) {
      // a count of one stream's viewers or publishers (viewerConnection events): no record read
      const live = `(${this.c.now()}`;
      const [all, publishers] = await Promise.all([
        this.c.redis.zcount(keys.sessionsOfStream(accountId, f.streamName), live, '+inf'),
        this.c.redis.zcount(keys.publishersOfStream(accountId, f.streamName), live, '+inf'),
      ]);
      return { total: f.action === 'publish' ? publishers : all - publishers, items: [] };
    }
    const index =
      f.streamName !== undefined
        ? f.action === 'publish'
          ? keys.publishersOfStream(accountId, f.streamName)
          : keys.sessionsOfStream(accountId, f.streamName)
        : f.tokenId !== undefined
          ? keys.sessionsOfToken(accountId, f.tokenId)
          : keys.sessionsLive(accountId);
    const ids = await this.c.redis.zrangebyscore(index, `(${this.c.now()}`, '+inf');
    const raws = ids.length === 0 ? [] : await this.c.redis.mget(...ids.map((id) => keys.sessionRecord(accountId, id)));
    const all = raws
      .filter((r): r is string => r !== null)
      .map(decodeSession)
      .filter(
        (s) =>
          s.endedReason === undefined &&
          (f.streamName === undefined || s.streamName === f.streamName) &&
          (f.tokenId === undefined || s.tokenId === f.tokenId) &&
          (f.action === undefined || s.action === f.action),
      )
      .sort((x, y) => Date.parse(x.startedOn) - Date.parse(y.startedOn) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    return { total: all.length, items: all.slice(page.offset, page.offset + page.limit) };
  }

  async sessionCounts(): Promise<Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>> {
    const names = (await this.c.redis.smembers(keys.sessionCountNames)).sort();
    const now = this.c.now();
    return Promise.all(
      names.map(async (n) => {
        await this.c.redis.zremrangebyscore(keys.sessionCount(n), '-inf', now);
        const cut = n.lastIndexOf(':');
        return { caller: n.slice(0, cut), action: n.slice(cut + 1) as 'publish' | 'subscribe', count: await this.c.redis.zcard(keys.sessionCount(n)) };
      }),
    );
  }

  async scheduleExpiry(accountId: string, tokenId: number, atMs: number): Promise<void> {
    await this.c.redis.zadd(keys.expiryCuts, atMs, `${accountId}\n${tokenId}`);
  }

  async takeDueExpiries(nowMs: number, limit: number): Promise<Array<{ accountId: string; tokenId: number }>> {
    const due = await this.c.redis.zrangebyscore(keys.expiryCuts, '-inf', nowMs, 'LIMIT', 0, limit);
    const out: Array<{ accountId: string; tokenId: number }> = [];
    for (const m of due) {
      // whoever removes the member carries the cut out: once, whichever instance
      if ((await this.c.redis.zrem(keys.expiryCuts, m)) === 1) {
        const cut = m.lastIndexOf('\n');
        out.push({ accountId: m.slice(0, cut), tokenId: Number(m.slice(cut + 1)) });
      }
    }
    return out;
  }
}
