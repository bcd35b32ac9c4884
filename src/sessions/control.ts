// Control over running sessions (docs/api.md#running-sessions): admission into the session
// registry (with the token's limits on the decision path, else queued), re-asks, and every way a
// session ends by Streamgate's hand — a token change listed in enforcement.terminateOn, a stream
// stop, a cut by id, a replacing publisher, an expiry — each carried out once, whichever instance
// does it: the registry's atomic end decides who sends the events and calls the media server.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Admission, AdmissionStep, Admitter, Answer, DecisionResult, FailedRule, Reasked } from '../contracts/admission.js';
import type { Lifecycle } from '../lifecycle/lifecycle.js';
import type { TokenChecked } from '../lifecycle/events.js';
import type { Metrics } from '../observability/metrics.js';
import { decision, type Decision, type Reason } from '../policy/types.js';
import type { Session, SessionEndReason, Store } from '../store/store.js';
import type { TokenKind, TokenRecord } from '../domain/tokens.js';
import { ENDED_SESSION_KEEP_S, registryIdFor } from '../domain/store-rules.js';
import type { CutTarget } from './drivers/driver.js';
import { terminationTrigger, type TerminationTrigger } from './termination.js';
import { copyWith } from '../domain/objects.js';
import { newSessionId } from '../domain/session-ids.js';

/** Why Streamgate ended sessions: a terminateOn trigger, or an operator's or a publisher's act. */
export type EndTrigger = TerminationTrigger | 'stop' | 'replace' | 'sharing';

/** What cuts a session on its media server (src/sessions/drivers/cutter.ts); never awaited on a decision path. */
export interface SessionCutter {
  cut(target: CutTarget): Promise<unknown>;
}

/** One admission in progress (src/admission/pipeline.ts runs it): the step that may refuse it, and what follows the decision. */
export interface AdmissionRun {
  admit?: Admitter;
  /** Whether `admit` would leave this decision as it is without a store step (no limits to count, no conflict to check). */
  passes(d: Decision): boolean;
  settle(d: DecisionResult): void;
}

const PAGE = 500;
const SWEEP_MS = 250;

const fieldsOf = (d: Decision) => ({ streamName: d.streamName, accountId: d.accountId, tokenId: d.tokenId, trackingId: d.trackingId });

/** The decision log's rule of an admission's own refusal, and of a re-ask that keeps its session. */
const ADMISSION_RULE = 'session admission';
const KEPT_RULE = 'running session kept';

/** Why the registry refused an admission, for the decision log (docs/api.md#session-limits). */
function admissionDetail(reason: 'session_limit' | 'uses_exhausted' | 'stream_taken', limits: Decision['limits']): string {
  switch (reason) {
    case 'session_limit':
      return `the token allows ${limits?.maxConcurrent} session(s) at once (maxConcurrentSessions), and that many are live`;
    case 'uses_exhausted':
      return `the token's ${limits?.maxUses} use(s) (maxUses) are spent`;
    case 'stream_taken':
      return 'the stream already has a publisher (enforcement.publishConflict: reject)';
  }
}

/** A refusal's own explanation: the failed check's detail and its reason code. */
const refusalWhy = (reason: Reason, failed: FailedRule | undefined) => (failed?.detail !== undefined ? `${failed.detail} (${reason})` : reason);

export class SessionControl {
  private sweeper?: NodeJS.Timeout;
  private sweeping = false;
  private readonly endedListeners: Array<(s: Session) => void> = [];

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly lifecycle: Lifecycle,
    private readonly cutter: SessionCutter | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  private get ttl(): number {
    return this.config.enforcement.liveTtlSeconds;
  }

  private get terminateOn(): readonly TerminationTrigger[] {
    return this.config.enforcement.terminateOn;
  }

  private iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  /**
   * An admission of `caller`: with a token that has limits (or a publish under
   * enforcement.publishConflict reject/replace) the session is registered in the decision's own
   * store step — one round trip — and a refusal there answers the caller; otherwise it is queued
   * after the answer, costing the decision nothing.
   */
  begin(caller: string, a: Admission, serverAddress?: string, ttlSeconds = this.ttl): AdmissionRun {
    const access = a.access;
    // an admission that starts no registered session (HTTP callers, unnamed connections) prepares nothing
    const sessionId = a.starts ? access.sessionId : undefined;
    const at = sessionId !== undefined ? this.iso() : '';
    // what the registry record holds besides the decision's fields, made once per admission
    const id = sessionId !== undefined ? registryIdFor(caller, sessionId, newSessionId) : '';
    const feedId = sessionId !== undefined && access.action === 'publish' ? randomUUID() : undefined;
    const native = sessionId !== undefined && a.session ? { ...a.session.native } : undefined;
    /** The record the admission step registered, when it ran: the one the session_started signal carries. */
    let registered: Session | undefined;
    // The record, field by field: optional fields only when known (it is stored as it is), and no
    // spread-then-extend or delete, which would make every admission's record slow to build and
    // keep it past young-generation collections (src/domain/objects.ts).
    const complete = (d: Decision): Session => {
      const s: Session = { id, caller, sessionId: sessionId!, action: access.action, accountId: d.accountId!, streamName: d.streamName, startedOn: at, lastSeenOn: at };
      if (d.tokenId !== undefined) s.tokenId = d.tokenId;
      if (d.trackingId !== undefined) s.trackingId = d.trackingId;
      if (d.subject !== undefined) s.subject = d.subject;
      if (feedId !== undefined) s.feedId = feedId;
      if (access.clientIp !== undefined) s.clientIp = access.clientIp;
      if (access.protocol !== undefined) s.protocol = access.protocol;
      if (serverAddress !== undefined) s.serverAddress = serverAddress;
      if (native !== undefined) s.native = native;
      return s;
    };
    const conflict = access.action === 'publish' && this.config.enforcement.publishConflict !== 'allow' ? this.config.enforcement.publishConflict : undefined;
    const passes = (d: Decision) => sessionId === undefined || !d.allowed || (d.limits === undefined && conflict === undefined) || d.accountId === undefined;
    const admit: Admitter | undefined =
      sessionId === undefined
        ? undefined
        : async (d, timed) => {
            if (passes(d)) return d;
            const record = complete(d);
            const r = await timed(
              this.store.admitSession(record, ttlSeconds, { maxConcurrent: d.limits?.maxConcurrent, maxUses: d.limits?.maxUses, publishConflict: conflict, tokenRev: d.tokenRev }),
            );
            if (!r.admitted) {
              if (r.reason === 'token_changed') return r.reason;
              const refused = decision(r.reason, copyWith(fieldsOf(d), { limits: d.limits }));
              return { decision: refused, rule: ADMISSION_RULE, detail: admissionDetail(r.reason, d.limits) };
            }
            registered = record;
            for (const s of r.replaced) this.ended(s, 'replace');
            return d;
          };
    return {
      admit,
      passes,
      settle: (d) => {
        if (!d.allowed || !a.starts || d.accountId === undefined) return;
        this.lifecycle.signal({
          kind: 'session_started',
          caller,
          sessionId: access.sessionId,
          action: access.action,
          accountId: d.accountId,
          streamName: d.streamName,
          tokenId: d.tokenId,
          trackingId: d.trackingId,
          record: registered ?? (sessionId !== undefined ? complete(d) : undefined),
          registered: registered !== undefined,
          // that step checked the token's revision when the decision named one
          tokenChecked: registered !== undefined && d.tokenRev !== undefined ? { expiresOn: d.expiresOn } : undefined,
          ttlSeconds: ttlSeconds !== this.ttl ? ttlSeconds : undefined,
        });
      },
    };
  }

  /**
   * A caller asks again for a connection it admitted (nginx-rtmp on_update): the session's
   * lastSeenOn moves (a publisher's live entry too). A session Streamgate ended is refused
   * (session_terminated); otherwise the decision is taken again, and a refusal ends the session
   * only when its token change is listed in enforcement.terminateOn — the store not answering, or
   * a rule edited since the admission, keeps it, and the caller is told an allow. The decision is
   * counted and logged as told, with why (docs/api.md#running-sessions). `pipeline` runs the
   * admission pipeline with the step given; the pipeline registers the session again when the
   * answer says so (`registerAgain`).
   */
  async reask(caller: string, a: Admission, pipeline: (step: AdmissionStep) => Promise<DecisionResult>): Promise<Reasked> {
    const access = a.access;
    const at = this.iso();
    const session = access.sessionId ? await this.store.touchSession(caller, access.sessionId, this.ttl, at).catch(() => null) : null;
    if (session?.endedReason !== undefined && session.endedReason !== 'done') {
      const ended = session.endedReason;
      const refused = await pipeline({
        admit: async (d): Promise<Answer> => ({
          decision: decision('session_terminated', fieldsOf(d)),
          rule: ADMISSION_RULE,
          detail: `Streamgate ended this session (${ended}): its re-asks are refused`,
        }),
      });
      return { decision: refused, registerAgain: false };
    }
    if (session && session.action === 'publish' && session.feedId) {
      const live = { accountId: session.accountId, streamName: session.streamName, tokenId: session.tokenId ?? 0, feedId: session.feedId, startedOn: session.startedOn, caller };
      this.store.startLiveStream(live, this.ttl).catch((e: Error) => this.logger.warn({ err: e.message }, 'live stream refresh failed'));
    }
    /** The listed token change behind a refusal: the session ends. */
    let ends: TerminationTrigger | undefined;
    let kept = false;
    const d = await pipeline({
      answer: async (decided, failed) => {
        if (decided.allowed) return undefined;
        const why = refusalWhy(decided.reason, failed);
        const trigger =
          decided.reason === 'store_unavailable'
            ? undefined
            : await terminationTrigger(decided.reason, async () =>
                session?.tokenId !== undefined ? (await this.store.findTokenById(session.tokenId).catch(() => null)) !== null : false,
              );
        if (trigger !== undefined && this.terminateOn.includes(trigger)) {
          ends = trigger;
          return { decision: decided, rule: failed?.rule ?? decided.reason, detail: `${why}; enforcement.terminateOn lists ${trigger}: the running session is ended` };
        }
        kept = true;
        const because =
          trigger !== undefined
            ? `enforcement.terminateOn does not list ${trigger}`
            : decided.reason === 'store_unavailable'
              ? 'a store that does not answer ends no session'
              : 'not a token change that ends running sessions';
        // every field of the decision stays (the token's, its limits), answered as an allow
        return { decision: copyWith(decided, decision('allowed', fieldsOf(decided))), rule: KEPT_RULE, detail: `${why}; ${because}: the running session is kept` };
      },
    });
    if (ends !== undefined && session && session.endedReason === undefined) {
      await this.end([session], ends === 'expire' ? 'token_expired' : 'token_revoked', ends, false);
    }
    // a running connection the registry does not know (its entry lapsed, or the store was replaced): registered again
    return { decision: d, registerAgain: d.allowed && !kept && session === null && access.sessionId !== undefined };
  }

  /** An allow, with lifetimeMs when expiry ends sessions and the token expires (OvenMediaEngine's `lifetime`). */
  withLifetime(d: DecisionResult): DecisionResult {
    if (!d.allowed || d.expiresOn === undefined || !this.terminateOn.includes('expire')) return d;
    return copyWith(d, { lifetimeMs: Math.max(1, Date.parse(d.expiresOn) - this.now()) });
  }

  /**
   * Ends live sessions with `reason`; for each one this call ended (not one ended meanwhile,
   * here or on another instance), the media server is asked to drop it and the events go out.
   * `hold`: the session's credential is refused (session_terminated) for
   * enforcement.terminatedHoldSeconds, or until its token is updated.
   */
  async end(sessions: readonly Session[], reason: SessionEndReason, trigger: EndTrigger, hold: boolean): Promise<Session[]> {
    const at = this.iso();
    const holdS = this.config.enforcement.terminatedHoldSeconds;
    const done: Session[] = [];
    for (const s of sessions) {
      const e = await this.store.endSession(s.caller, s.sessionId, { reason, at, keepSeconds: Math.max(ENDED_SESSION_KEEP_S, holdS) }, s.accountId);
      this.metrics.sessionTerminations.inc({ trigger, result: e ? 'ended' : 'already_ended' });
      if (!e) continue;
      done.push(e);
      this.ended(e, trigger);
    }
    if (hold && holdS > 0) await this.hold(done, this.now() + holdS * 1000);
    return done;
  }

  /** Called with every session Streamgate ends (HTTP viewer credentials follow it: src/sessions/viewer-sessions.ts). */
  onEnded(listener: (s: Session) => void): void {
    this.endedListeners.push(listener);
  }

  /** After the registry ended a session: its media server drops it, and the events go out. */
  private ended(s: Session, trigger: EndTrigger): void {
    for (const l of this.endedListeners) l(s);
    this.logger.info({ session: s.id, caller: s.caller, action: s.action, accountId: s.accountId, tokenId: s.tokenId, reason: s.endedReason, trigger }, 'session ended by Streamgate');
    this.lifecycle.signal({ kind: 'session_ended', caller: s.caller, sessionId: s.sessionId, ended: s });
    if (this.cutter) {
      void this.cutter.cut({ caller: s.caller, callerSessionId: s.sessionId, native: s.native ?? {}, direction: s.action, streamName: s.streamName, serverAddress: s.serverAddress });
    }
  }

  /** Holds the credentials of cut sessions: a hold on each token, from the session's address when known. */
  private async hold(sessions: readonly Session[], until: number): Promise<void> {
    const byToken = new Map<string, { s: Session; ips: Set<string | undefined> }>();
    for (const s of sessions) {
      if (s.tokenId === undefined) continue;
      const key = `${s.accountId}\n${s.tokenId}\n${s.action}`;
      const entry = byToken.get(key) ?? { s, ips: new Set() };
      entry.ips.add(s.clientIp);
      byToken.set(key, entry);
    }
    for (const { s, ips } of byToken.values()) {
      const kind: TokenKind = s.action === 'publish' ? 'publish' : 'subscribe';
      const nowMs = this.now();
      const add = [...ips].map((clientIp) => (clientIp === undefined ? { until: this.iso(until) } : { until: this.iso(until), clientIp }));
      await this.store
        .updateToken(s.accountId, kind, s.tokenId!, (cur) => ({
          next: copyWith(cur, { holds: [...(cur.holds ?? []).filter((h) => Date.parse(h.until) > nowMs), ...add] }),
          clearBound: false,
        }))
        .catch((e: Error) => this.logger.warn({ accountId: s.accountId, tokenId: s.tokenId, err: e.message }, 'session hold not stored'));
    }
  }

  /** Every live session of the account matching `filter`, all pages. */
  async all(accountId: string, filter: Parameters<Store['listSessions']>[1]): Promise<Session[]> {
    const out: Session[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.store.listSessions(accountId, filter, { offset, limit: PAGE });
      out.push(...page.items);
      if (page.items.length < PAGE || offset + PAGE >= page.total) return out;
    }
  }

  /** A token change (management): ends the token's sessions when the change is listed in terminateOn; schedules expiry cuts. */
  async tokenChanged(accountId: string, id: number, before: TokenRecord | null, after: TokenRecord | null): Promise<void> {
    const on = this.terminateOn;
    if (after?.expiresOn !== undefined && on.includes('expire')) await this.store.scheduleExpiry(accountId, id, Date.parse(after.expiresOn));
    let trigger: TerminationTrigger | undefined;
    if (after === null) trigger = 'delete';
    else if (before?.isActive && !after.isActive) trigger = 'disable';
    else if (before !== null && before.token !== after.token) trigger = 'refresh';
    if (trigger === undefined || !on.includes(trigger)) return;
    await this.end(await this.all(accountId, { tokenId: id }), 'token_revoked', trigger, false);
  }

  /** The account's API secret was deleted: with secretDeleted listed, every session of the account ends. */
  async secretDeleted(accountId: string): Promise<void> {
    if (!this.terminateOn.includes('secretDeleted')) return;
    await this.end(await this.all(accountId, {}), 'secret_deleted', 'secretDeleted', false);
  }

  /** POST /api/stream/stop: the stream's publishers end (held). The number ended. */
  async stopStream(accountId: string, streamName: string): Promise<number> {
    return (await this.end(await this.all(accountId, { streamName, action: 'publish' }), 'stopped', 'stop', true)).length;
  }

  /** POST /api/stream/stop/all: every publisher of the account ends (held). The number ended. */
  async stopAll(accountId: string): Promise<number> {
    return (await this.end(await this.all(accountId, { action: 'publish' }), 'stopped', 'stop', true)).length;
  }

  /**
   * Token sharing with the action `limit` (docs/api.md#token-sharing): the newest device wins, so
   * the token's live sessions from any other address that started before its use (epoch ms `at`)
   * end, held from their addresses; a session that started later (a use another instance has not
   * written yet) is left for the flag that names it. The number ended.
   */
  async keepNewest(accountId: string, tokenId: number, newest: { ip: string; at: number }, subject?: string): Promise<number> {
    const older = (await this.all(accountId, { tokenId })).filter((s) => s.subject === subject && s.clientIp !== newest.ip && Date.parse(s.startedOn) <= newest.at);
    return (await this.end(older, 'shared', 'sharing', true)).length;
  }

  /** DELETE /api/sessions/{id}: null when the account has no such live session. */
  async cut(accountId: string, id: string): Promise<Session | null> {
    const s = await this.store.getSessionById(accountId, id);
    if (!s || s.endedReason !== undefined) return null;
    return (await this.end([s], 'stopped', 'stop', true))[0] ?? null;
  }

  /**
   * A session just entered the registry: if its token changed in a listed way before it got there
   * (deleted, disabled or expired while the admission was under way), it is cut now; a token that
   * expires gets its expiry cut scheduled. `checked`: the admission's own store step found the token
   * at the revision decided on, so only its expiry is left to look at, and nothing is read.
   */
  async registered(s: Session, checked?: TokenChecked): Promise<void> {
    const on = this.terminateOn;
    if (s.tokenId === undefined || on.length === 0) return;
    // else one read of the record itself (a subscribe session's token is a subscribe token, a publish one's a publish token)
    const t = checked === undefined ? await this.store.getToken(s.accountId, s.action === 'publish' ? 'publish' : 'subscribe', s.tokenId) : undefined;
    const expiresOn = checked !== undefined ? checked.expiresOn : t?.expiresOn;
    const expired = expiresOn !== undefined && Date.parse(expiresOn) <= this.now();
    if (expiresOn !== undefined && on.includes('expire')) await this.store.scheduleExpiry(s.accountId, s.tokenId, Date.parse(expiresOn));
    const trigger: TerminationTrigger | undefined = t === null ? 'delete' : t !== undefined && !t.isActive ? 'disable' : expired ? 'expire' : undefined;
    if (trigger !== undefined && on.includes(trigger)) await this.end([s], trigger === 'expire' ? 'token_expired' : 'token_revoked', trigger, false);
  }

  /** With `expire` listed: checks for due expiry cuts every 250 ms (each carried out by one instance). */
  start(): void {
    if (!this.terminateOn.includes('expire') || this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const now = this.now();
      for (const due of await this.store.takeDueExpiries(now, 100)) {
        const found = await this.store.findTokenById(due.tokenId);
        if (!found || found.accountId !== due.accountId || found.expiresOn === undefined) continue;
        const at = Date.parse(found.expiresOn);
        // extended since it was scheduled: due later
        if (at > now) await this.store.scheduleExpiry(due.accountId, due.tokenId, at);
        else await this.end(await this.all(due.accountId, { tokenId: due.tokenId }), 'token_expired', 'expire', false);
      }
    } catch (e) {
      this.logger.warn({ err: (e as Error).message }, 'expiry cuts: sweep failed (retried at the next)');
    } finally {
      this.sweeping = false;
    }
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
