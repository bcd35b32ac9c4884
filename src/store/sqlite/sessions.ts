// The session registry on SQLite: registry_sessions (live rows expire at expires_ms, ended rows are
// kept a while), token_uses and expiry_cuts. Admission follows admissionStep (domain/store-rules.ts).
import type { AdmitResult, Session, SessionEndReason, SessionFilter, SessionLimits, SessionStore, SessionTouch } from '../sessions.js';
import { ENDED_SESSION_KEEP_S, admissionStep, sessionLookupFinds, tokenUnchanged } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import type { SqliteConnection } from './connection.js';

export class SqliteSessions implements SessionStore {
  constructor(private readonly c: SqliteConnection) {}

  async startSession(s: Session, ttlSeconds: number): Promise<void> {
    await this.admitSession(s, ttlSeconds, {});
  }

  async admitSession(s: Session, ttlSeconds: number, limits: SessionLimits): Promise<AdmitResult> {
    return this.c.tx(() => {
      if (limits.tokenRev !== undefined) {
        const rev = this.c.stmt('SELECT rev FROM tokens WHERE id = ? AND account_id = ?').pluck().get(s.tokenId ?? 0, s.accountId) as number | undefined;
        if (!tokenUnchanged(limits, rev ?? null)) return { admitted: false, reason: 'token_changed' };
      }
      const now = this.c.now();
      this.c.stmt('DELETE FROM registry_sessions WHERE expires_ms <= ?').run(now);
      const uses = (this.c.stmt('SELECT uses FROM token_uses WHERE account_id = ? AND token_id = ?').pluck().get(s.accountId, s.tokenId ?? 0) as number | undefined) ?? 0;
      // the same connection's earlier record is not counted: an admission replaces it, a refusal keeps it
      const live =
        s.tokenId === undefined
          ? 0
          : (this.c.stmt('SELECT COUNT(*) FROM registry_sessions WHERE account_id = ? AND token_id = ? AND ended = 0 AND NOT (caller = ? AND caller_sid = ?)')
              .pluck()
              .get(s.accountId, s.tokenId, s.caller, s.sessionId) as number);
      const publishers =
        s.action === 'publish'
          ? (this.c.stmt("SELECT data FROM registry_sessions WHERE account_id = ? AND stream_name = ? AND ended = 0 AND action = 'publish' AND NOT (caller = ? AND caller_sid = ?)")
              .pluck()
              .all(s.accountId, s.streamName, s.caller, s.sessionId) as string[]).map((d) => JSON.parse(d) as Session)
          : [];
      const step = admissionStep({ uses, liveOfToken: live, publishers: publishers.map((p) => p.tokenId) }, s, limits);
      if (!step.admit) return { admitted: false, reason: step.reason };
      // the same connection registered again: its earlier record goes (as in the Redis script)
      this.c.stmt('DELETE FROM registry_sessions WHERE caller = ? AND caller_sid = ?').run(s.caller, s.sessionId);
      const replaced: Session[] = [];
      if (step.replace) {
        for (const p of publishers) {
          const ended = this.#endSessionNow(p.caller, p.sessionId, { reason: 'replaced', at: s.lastSeenOn, keepSeconds: ENDED_SESSION_KEEP_S }, p.accountId);
          if (ended) replaced.push(ended);
        }
      }
      this.c.stmt(
        `INSERT INTO registry_sessions (id, caller, caller_sid, account_id, token_id, stream_name, action, started_ms, expires_ms, ended, data)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
      ).run(s.id, s.caller, s.sessionId, s.accountId, s.tokenId ?? null, s.streamName, s.action, Date.parse(s.startedOn), Date.parse(s.lastSeenOn) + ttlSeconds * 1000, JSON.stringify(s));
      if (s.tokenId !== undefined) {
        this.c.stmt('INSERT INTO token_uses (account_id, token_id, uses) VALUES (?, ?, 1) ON CONFLICT (account_id, token_id) DO UPDATE SET uses = uses + 1').run(s.accountId, s.tokenId);
      }
      return { admitted: true, replaced };
    });
  }

  async getSession(caller: string, sessionId: string, accountId?: string): Promise<Session | null> {
    const r = this.c.stmt('SELECT data, account_id FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND expires_ms > ?').get(caller, sessionId, this.c.now()) as
      | { data: string; account_id: string }
      | undefined;
    return r && sessionLookupFinds(caller, r.account_id, accountId) ? (JSON.parse(r.data) as Session) : null;
  }

  async getSessionById(accountId: string, id: string): Promise<Session | null> {
    const d = this.c.stmt('SELECT data FROM registry_sessions WHERE id = ? AND account_id = ? AND expires_ms > ?').pluck().get(id, accountId, this.c.now()) as string | undefined;
    return d ? (JSON.parse(d) as Session) : null;
  }

  async touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string, accountId?: string): Promise<Session | null> {
    return this.c.tx(() => this.#touchNow(caller, sessionId, ttlSeconds, at, accountId));
  }

  async touchSessions(caller: string, touches: ReadonlyArray<SessionTouch>, ttlSeconds: number): Promise<Array<Session | null>> {
    return this.c.tx(() => touches.map((t) => this.#touchNow(caller, t.sessionId, ttlSeconds, t.at, t.accountId)));
  }

  /** touchSession inside a transaction the caller holds. */
  #touchNow(caller: string, sessionId: string, ttlSeconds: number, at: string, accountId: string | undefined): Session | null {
    const r = this.c.stmt('SELECT data, ended, account_id FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND expires_ms > ?').get(caller, sessionId, this.c.now()) as
      | { data: string; ended: number; account_id: string }
      | undefined;
    if (!r || !sessionLookupFinds(caller, r.account_id, accountId)) return null;
    const s = JSON.parse(r.data) as Session;
    if (r.ended) return s;
    const next: Session = copyWith(s, { lastSeenOn: at });
    this.c.stmt('UPDATE registry_sessions SET expires_ms = ?, data = ? WHERE caller = ? AND caller_sid = ?').run(Date.parse(at) + ttlSeconds * 1000, JSON.stringify(next), caller, sessionId);
    return next;
  }

  async endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }, accountId?: string): Promise<Session | null> {
    return this.c.tx(() => this.#endSessionNow(caller, sessionId, end, accountId));
  }

  /** endSession inside a transaction the caller holds. */
  #endSessionNow(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }, accountId: string | undefined): Session | null {
    const r = this.c.stmt('SELECT data, account_id FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND ended = 0 AND expires_ms > ?').get(caller, sessionId, this.c.now()) as
      | { data: string; account_id: string }
      | undefined;
    if (!r || !sessionLookupFinds(caller, r.account_id, accountId)) return null;
    const ended: Session = copyWith(JSON.parse(r.data) as Session, { endedReason: end.reason, endedOn: end.at });
    this.c.stmt('UPDATE registry_sessions SET ended = 1, expires_ms = ?, data = ? WHERE caller = ? AND caller_sid = ?').run(
      Date.parse(end.at) + end.keepSeconds * 1000,
      JSON.stringify(ended),
      caller,
      sessionId,
    );
    return ended;
  }

  async listSessions(accountId: string, f: SessionFilter, page: { offset: number; limit: number }): Promise<{ total: number; items: Session[] }> {
    const where = ['account_id = ?', 'ended = 0', 'expires_ms > ?'];
    const args: Array<string | number> = [accountId, this.c.now()];
    const add = (cond: string, value: string | number | undefined): void => {
      if (value === undefined) return;
      where.push(cond);
      args.push(value);
    };
    add('stream_name = ?', f.streamName);
    add('token_id = ?', f.tokenId);
    add('action = ?', f.action);
    const cond = where.join(' AND ');
    const total = this.c.db.prepare(`SELECT COUNT(*) FROM registry_sessions WHERE ${cond}`).pluck().get(...args) as number;
    const rows = this.c.db.prepare(`SELECT data FROM registry_sessions WHERE ${cond} ORDER BY started_ms, id LIMIT ? OFFSET ?`).pluck().all(...args, page.limit, page.offset) as string[];
    return { total, items: rows.map((d) => JSON.parse(d) as Session) };
  }

  async sessionCounts(): Promise<Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>> {
    return this.c.stmt('SELECT caller, action, COUNT(*) AS count FROM registry_sessions WHERE ended = 0 AND expires_ms > ? GROUP BY caller, action ORDER BY caller, action').all(
      this.c.now(),
    ) as Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>;
  }

  async scheduleExpiry(accountId: string, tokenId: number, atMs: number): Promise<void> {
    this.c.stmt('INSERT OR REPLACE INTO expiry_cuts (account_id, token_id, at_ms) VALUES (?, ?, ?)').run(accountId, tokenId, atMs);
  }

  async takeDueExpiries(nowMs: number, limit: number): Promise<Array<{ accountId: string; tokenId: number }>> {
    return this.c.tx(() => {
      const rows = this.c.stmt('SELECT account_id AS accountId, token_id AS tokenId FROM expiry_cuts WHERE at_ms <= ? ORDER BY at_ms LIMIT ?').all(nowMs, limit) as Array<{
        accountId: string;
        tokenId: number;
      }>;
      for (const r of rows) this.c.stmt('DELETE FROM expiry_cuts WHERE account_id = ? AND token_id = ?').run(r.accountId, r.tokenId);
      return rows;
    });
  }
}
