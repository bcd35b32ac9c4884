// Token-sharing detection (docs/api.md#token-sharing): the decision path hands each allowed use of
// a credential whose policy is on to `observe` (a map lookup, nothing awaited); a timer writes them
// in batches to the store's window (every instance adds to the same one), places each address, and
// holds the window to the policy. A flagged credential gets its account's action: `notify` (a signed
// TokenSharing webhook), `limit` (the newest device wins: the credential's sessions from other
// addresses end) or `disable` (the token is disabled, by the system actor, audited); once per
// credential and window whichever instance sees it first (a store mark), `limit` each time. A
// credential issuer's subject (a JWT's `sub`, a signed URL's id) is a credential of its own, under
// its policy token's policy; `disable` revokes the subject at its issuer.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { assessSharing, effectiveSharing, parseSubject, revocationListOf, type SharingAssessment, type SharingPolicy, type SharingSettings, type SharingUse } from '../domain/sharing.js';
import type { TokenKind, TokenRecord } from '../domain/tokens.js';
import { SHARING_MAX_ADDRESSES, type Store } from '../store/store.js';
import type { Metrics } from '../observability/metrics.js';
import type { PlaceLookup } from '../enforce/places.js';
import type { TokenSharingEvent } from '../lifecycle/events.js';

/**
 * The credential a use is of: a token (its self-signed JWTs count as the token), or a credential
 * issuer's subject (`issuerId` and `subject` set; `tokenId` is the issuer's policy token).
 */
export interface SharedCredential {
  accountId: string;
  kind: TokenKind;
  tokenId: number;
  issuerId?: number;
  /** `<claim>:<value>`, as the decision named it (src/domain/sharing.ts subjectOf). */
  subject?: string;
}

/**
 * The key of a credential in the store's window and marks: `<kind>:<token id>` for a token,
 * `issuer:<issuer id>:<digest of the subject>` for a subject (any length of subject, one key length).
 */
export const credentialKey = (c: Pick<SharedCredential, 'kind' | 'tokenId' | 'issuerId' | 'subject'>): string =>
  c.subject === undefined || c.issuerId === undefined ? `${c.kind}:${c.tokenId}` : `issuer:${c.issuerId}:${createHash('sha256').update(c.subject).digest('base64url').slice(0, 22)}`;

/** What a flag is, as the webhook, the log and the dashboard tell it. */
export interface SharingFlag extends SharedCredential {
  at: number;
  action: SharingPolicy['action'];
  assessment: SharingAssessment;
  /** The address of the most recent use (what `limit` keeps), and its time (epoch ms). */
  newestIp: string;
  newestAt: number;
  windowSeconds: number;
  /** The countries of the uses in the window. */
  countryCodes: string[];
}

/** What the actions do, given by the services (the webhook dispatcher, session control, the token service). */
export interface SharingActions {
  notify(flag: SharingFlag): Promise<void>;
  /** Ends the credential's sessions (a subject's: its policy token's that carry it) from other addresses than the newest; the number ended. */
  limit(flag: SharingFlag): Promise<number>;
  /** Disables the token, or revokes the subject at its issuer; false when it cannot (a subject no revocation list names). */
  disable(flag: SharingFlag): Promise<boolean>;
}

export interface SharingMonitorOptions {
  /** How often the queued uses are written (ms). */
  flushMs: number;
  /** Uses queued at most between two writes; more are dropped and counted. */
  queueSize: number;
}

export const SHARING_MONITOR_DEFAULTS: SharingMonitorOptions = { flushMs: 1000, queueSize: 10_000 };

/** An address's use of a credential is offered again only after this long (or a tenth of the window, if shorter). */
const REPEAT_MS = 60_000;
/** Credential-address pairs remembered for that. */
const REPEATS_TRACKED = 100_000;

interface Pending extends SharedCredential {
  ip: string;
  at: number;
  /** The token's override, as the decision read it. */
  token: SharingSettings | undefined;
  /** The account version the decision was made at. */
  ver: number;
}

/** An account's policy as this instance last read it, at an account version. */
interface KnownPolicy {
  ver: number;
  settings: SharingSettings | undefined;
}

/** Accounts whose policy is remembered. */
const ACCOUNTS_TRACKED = 10_000;

/** The tokenSharing webhook event of a flag (docs/api.md#token-sharing); `label` is the token's. */
export function tokenSharingEvent(flag: SharingFlag, label: string): TokenSharingEvent {
  const a = flag.assessment;
  const data: TokenSharingEvent['data'] = {
    accountId: flag.accountId,
    tokenId: flag.tokenId,
    tokenType: flag.kind,
    label,
    flags: a.flags,
    action: flag.action,
    windowSeconds: flag.windowSeconds,
    addresses: a.addresses,
    networks: a.networks,
    asns: a.asns,
    countries: a.countries,
    countryCodes: flag.countryCodes,
  };
  const subject = flag.subject === undefined ? null : parseSubject(flag.subject);
  if (flag.issuerId !== undefined && subject !== null) {
    data.issuerId = flag.issuerId;
    data.subject = subject.value;
    data.subjectClaim = subject.claim;
  }
  if (a.travel) data.travel = { fromCountry: a.travel.from.country, toCountry: a.travel.to.country, km: a.travel.km, kmh: a.travel.kmh };
  return { type: 'tokenSharing', event: 'Flagged', timestamp: flag.at, accountId: flag.accountId, filterName: label, data };
}

export class SharingMonitor {
  private queue: Pending[] = [];
  /**
   * When each credential's use from each address was last offered: plain maps (the decision path
   * reads them), forgotten whole once they hold REPEATS_TRACKED pairs. A token by its id (unique in
   * a store), a subject by `<issuer id> <subject>`.
   */
  private readonly seen = new Map<number | string, Map<string, number>>();
  private seenPairs = 0;
  /** Each account's policy as last read; forgotten whole past ACCOUNTS_TRACKED accounts. */
  private readonly policies = new Map<string, KnownPolicy>();
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly places: PlaceLookup,
    private readonly actions: SharingActions,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly opts: SharingMonitorOptions = SHARING_MONITOR_DEFAULTS,
  ) {}

  /**
   * On the decision path, after an allow of a token at account version `ver`: queues the use when
   * the token's policy is on — or not known yet at that version (the write reads the account) —
   * unless this address used this credential moments ago. A credential issuer's credential passes
   * its policy token, its issuer and its subject. Never awaits, never throws.
   */
  observe(t: Pick<TokenRecord, 'accountId' | 'kind' | 'id' | 'sharing'>, ip: string | undefined, ver: number, issuerId?: number, subject?: string): void {
    if (ip === undefined || ip === '') return;
    const token = t.sharing;
    const known = this.policies.get(t.accountId);
    let windowSeconds = token?.windowSeconds;
    if (known !== undefined && known.ver === ver) {
      if (!(token?.enabled ?? known.settings?.enabled ?? false)) return;
      windowSeconds ??= known.settings?.windowSeconds;
    }
    const at = this.now();
    const seenKey = subject === undefined ? t.id : `${issuerId} ${subject}`;
    let ips = this.seen.get(seenKey);
    const last = ips?.get(ip);
    if (last !== undefined && at - last < Math.min(REPEAT_MS, (windowSeconds ?? 3600) * 100)) return;
    if (this.queue.length >= this.opts.queueSize) {
      this.metrics.sharingUses.inc({ outcome: 'dropped' });
      return;
    }
    if (this.seenPairs >= REPEATS_TRACKED) {
      this.seen.clear();
      this.seenPairs = 0;
      ips = undefined;
    }
    if (ips === undefined) {
      ips = new Map();
      this.seen.set(seenKey, ips);
    }
    if (last === undefined) this.seenPairs++;
    ips.set(ip, at);
    const p: Pending = { accountId: t.accountId, kind: t.kind, tokenId: t.id, ip, at, token, ver };
    if (subject !== undefined && issuerId !== undefined) {
      p.issuerId = issuerId;
      p.subject = subject;
    }
    this.queue.push(p);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.opts.flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is queued. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Writes the queued uses, one store call per credential, and acts on each flagged one; resolves when done. */
  flush(): Promise<void> {
    if (this.writing) return this.writing.then(() => this.flush());
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue;
    this.queue = [];
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async write(batch: Pending[]): Promise<void> {
    const byCredential = new Map<string, Pending[]>();
    for (const p of batch) {
      const key = `${p.accountId}\n${credentialKey(p)}`;
      const list = byCredential.get(key);
      if (list) list.push(p);
      else byCredential.set(key, [p]);
    }
    for (const uses of byCredential.values()) {
      const first = uses[0];
      const newest = uses[uses.length - 1];
      try {
        // the policy as the newest use found it: the token's override over its account's
        const policy = effectiveSharing(await this.accountPolicy(newest.accountId, newest.ver), newest.token);
        if (!policy.enabled) continue;
        const placed: SharingUse[] = [];
        // the window keeps the most recent SHARING_MAX_ADDRESSES addresses: older ones of a burst are not written
        for (const u of uses.length > SHARING_MAX_ADDRESSES ? uses.slice(-SHARING_MAX_ADDRESSES) : uses) {
          const p = await this.places.placeOf(u.ip);
          placed.push(Object.assign({ at: u.at }, p));
        }
        const windowMs = policy.windowSeconds * 1000;
        const kept = await this.store.recordSharing(first.accountId, credentialKey(first), placed, windowMs);
        this.metrics.sharingUses.inc({ outcome: 'recorded' }, uses.length);
        const assessment = assessSharing(kept, policy, this.now());
        if (assessment.flags.length > 0) {
          const countryCodes = [...new Set(kept.flatMap((u) => (u.country === undefined ? [] : [u.country])))].sort();
          const latest = kept[0] ?? { ip: newest.ip, at: newest.at };
          const c: SharedCredential = { accountId: first.accountId, kind: first.kind, tokenId: first.tokenId };
          if (first.subject !== undefined) {
            c.issuerId = first.issuerId;
            c.subject = first.subject;
          }
          await this.act(c, policy, assessment, latest, countryCodes);
        }
      } catch (e) {
        this.metrics.sharingUses.inc({ outcome: 'failed' }, uses.length);
        this.logger.warn({ accountId: first.accountId, tokenId: first.tokenId, issuerId: first.issuerId, err: (e as Error).message }, 'token sharing: uses not recorded');
      }
    }
  }

  /** The account's settings at version `ver` (read once per version and instance). */
  private async accountPolicy(accountId: string, ver: number): Promise<SharingSettings | undefined> {
    const known = this.policies.get(accountId);
    if (known !== undefined && known.ver >= ver) return known.settings;
    const a = await this.store.getAccount(accountId);
    const settings = a?.sharing;
    if (this.policies.size >= ACCOUNTS_TRACKED) this.policies.clear();
    this.policies.set(accountId, { ver, settings });
    return settings;
  }

  private async act(c: SharedCredential, policy: SharingPolicy, assessment: SharingAssessment, latest: { ip: string; at: number }, countryCodes: string[]): Promise<void> {
    const flag: SharingFlag = Object.assign({ at: this.now(), action: policy.action, assessment, newestIp: latest.ip, newestAt: latest.at, windowSeconds: policy.windowSeconds, countryCodes }, c);
    // once per credential and window, whichever instance comes first
    const held = await this.store.swapMark(c.accountId, `sharing:${credentialKey(c)}`, JSON.stringify({ at: flag.at, flags: assessment.flags }), policy.windowSeconds * 1000, 'absent');
    const first = held === null;
    // a subject no revocation list names cannot be disabled: the newest device keeps it instead
    const subject = c.subject === undefined ? null : parseSubject(c.subject);
    if (policy.action === 'disable' && subject !== null && revocationListOf(subject.claim) === null) flag.action = 'limit';
    if (first) {
      this.metrics.sharingFlags.inc({ action: flag.action });
      // (a subject is logged by its store key, not its value: it may name a person)
      this.logger.warn(
        {
          accountId: c.accountId,
          tokenId: c.tokenId,
          kind: c.kind,
          ...(c.issuerId !== undefined ? { issuerId: c.issuerId, subjectKey: credentialKey(c) } : {}),
          flags: assessment.flags,
          action: flag.action,
          addresses: assessment.addresses,
          networks: assessment.networks,
          countries: assessment.countries,
        },
        'token sharing: credential flagged',
      );
      await this.actions.notify(flag);
    }
    if (flag.action === 'limit') await this.actions.limit(flag);
    if (flag.action === 'disable' && first && !(await this.actions.disable(flag))) await this.actions.limit(flag);
  }
}
