// The Redis store (standalone, Sentinel or Cluster) for many instances sharing state. Atomic
// multi-key changes are the Lua scripts in ./lua; lookups by secret or token value go through
// hint keys that are always verified against the authoritative record.
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { PUBLISH_SETTING_DEFAULTS, securesViewing, tokenHash } from '../../domain/tokens.js';
import { setsViewerRules } from '../../domain/viewer-rules.js';
import { bySecuredName, keptRules, securedAfterDelete, type SecuredStream } from '../../domain/secured-streams.js';
import type {
  Account,
  AccountGeoCascade,
  AccountPatch,
  BindResult,
  Delivery,
  ListQuery,
  LiveStream,
  NewRecording,
  Recording,
  Session,
  SessionEndReason,
  SessionFilter,
  SessionLimits,
  AdmitResult,
  Store,
  TokenChange,
  UsageDay,
  UsageHour,
  UsageRecord,
  UsageSelector,
  UsageSum,
  UsageTotal,
  Webhook,
} from '../store.js';
import { nameSortKey } from '../sort.js';
import { keys, idMember, nameMember, idFromMember } from './keys.js';
import type { RedisClient } from './connect.js';
import { Cluster, type Redis } from 'ioredis';
import { AccountExists, StoreUnavailable } from '../../errors.js';
import { DELIVERIES_KEPT, ENDED_SESSION_KEEP_S, completedRecording, type CompletedRecording } from '../../domain/store-rules.js';
import { compareAndSet, typeStoreFailures } from '../failures.js';
import { isRedisUnavailable } from './failures.js';
import { Reply, bindResult, casReply, codeOf } from './codes.js';
import { loadScript } from './lua-loader.js';
import { SessionAdmission } from './session-admit.js';
import { copyWith } from '../../domain/objects.js';
import { VersionWatch, globLiteral } from './version-watch.js';

export interface ScriptSpec {
  file: string;
  keys: number;
  varying?: true;
}

/**
 * The Lua scripts (docs/architecture.md#redis-scripts) by command name: the file, and the number of
 * KEYS each call passes (its header lists them). A script with `varying` takes that many and more,
 * as its ARGV say: each call passes the number of keys first.
 */
export const SCRIPTS = {
  tokenCreate: { file: 'token-create.lua', keys: 5 },
  tokenUpdate: { file: 'token-update.lua', keys: 5 },
  tokenDelete: { file: 'token-delete.lua', keys: 7 },
  securedRemove: { file: 'secured-remove.lua', keys: 2 },
  bindAddress: { file: 'bind-address.lua', keys: 2 },
  recordCas: { file: 'record-cas.lua', keys: 1 },
  secretSet: { file: 'secret-set.lua', keys: 1 },
  accountCreate: { file: 'account-create.lua', keys: 2 },
  accountUpdate: { file: 'account-update.lua', keys: 2 },
  recordingStart: { file: 'recording-start.lua', keys: 3 },
  recordingComplete: { file: 'recording-complete.lua', keys: 3 },
  recordingDelete: { file: 'recording-delete.lua', keys: 3 },
  deliveryAdd: { file: 'delivery-add.lua', keys: 2 },
  liveStart: { file: 'live-start.lua', keys: 3 },
  liveEnd: { file: 'live-end.lua', keys: 3 },
  livePrune: { file: 'live-prune.lua', keys: 1 },
  usageAdd: { file: 'usage-add.lua', keys: 6 },
  usageTotal: { file: 'usage-total.lua', keys: 1 },
  /** On one Redis server (not a Cluster) it also writes the connection's pointer and the gauge's entries. */
  sessionAdmit: { file: 'session-admit.lua', keys: 8, varying: true },
  sessionTouch: { file: 'session-touch.lua', keys: 6 },
  sessionEnd: { file: 'session-end.lua', keys: 6 },
  markSwap: { file: 'mark-swap.lua', keys: 1 },
  markTake: { file: 'mark-take.lua', keys: 1 },
} satisfies Record<string, ScriptSpec>;
type ScriptName = keyof typeof SCRIPTS;

const MAX_CAS_ATTEMPTS = 100;
/** How often an instance repeats a gauge count name to the set of names (ms). */
const COUNT_NAME_RESEND_MS = 60_000;

/** The store methods whose scripts can move an account version (account, token and live-stream writes). */
const VERSION_WRITES = [
  'createAccount',
  'createFirstAccount',
  'updateAccount',
  'setAccountSecret',
  'createToken',
  'updateToken',
  'deleteToken',
  'removeSecuredStream',
  'startLiveStream',
  'endLiveStream',
] as const satisfies ReadonlyArray<keyof Store>;

/** The meta key and value saying the viewer-rule sets hold disabled tokens too (upgrade()). */
const VIEWER_RULE_INDEX_META = 'viewer-rule-index';
const VIEWER_RULE_INDEX_VERSION = '2';

/** The secured-stream entries of one name and kind, read back from their hash value (one JSON entry per line). */
function securedEntries(streamName: string, isRegex: boolean, raw: string | null | undefined): SecuredStream[] {
  if (raw === null || raw === undefined) return [];
  return raw.split('\n').map((line) => {
    const v = JSON.parse(line) as Omit<SecuredStream, 'streamName' | 'isRegex'>;
    return Object.assign({ streamName, isRegex }, v);
  });
}

/** What the caller-id hint of a session holds: account, registry id, token, stream. */
interface SessionPointer {
  a: string;
  id: string;
  t?: number;
  s: string;
}
/** A reportId is remembered this long (a retried report arrives well within it). */
const USAGE_REPORT_TTL_S = 30 * 86400;
/** Daily usage buckets outlive the longest query range (366 days). */
const USAGE_KEEP_S = 400 * 86400;

/** The meta key and value saying the usage indexes cover data of earlier builds too (upgrade()). */
const USAGE_INDEX_META = 'usage-index';
const USAGE_INDEX_VERSION = '1';

/** The UTC days d with startDay <= d < stopDay (YYYY-MM-DD). */
function daysBetween(startDay: string, stopDay: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${startDay}T00:00:00Z`); t < Date.parse(`${stopDay}T00:00:00Z`); t += 86400000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/** The UTC hours h with startHour <= h < stopHour (YYYY-MM-DDTHH). */
function hoursBetween(startHour: string, stopHour: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${startHour}:00:00Z`); t < Date.parse(`${stopHour}:00:00Z`); t += 3600000) {
    out.push(new Date(t).toISOString().slice(0, 13));
  }
  return out;
}

/** A usage bucket's "<stream>\0o" / "<stream>\0i" fields as per-stream sums. */
function streamSums(h: Record<string, string>): Map<string, { bytesOut: number; bytesIn: number }> {
  const out = new Map<string, { bytesOut: number; bytesIn: number }>();
  for (const [field, value] of Object.entries(h)) {
    const streamName = field.slice(0, field.lastIndexOf('\u0000'));
    const b = out.get(streamName) ?? { bytesOut: 0, bytesIn: 0 };
    if (field.endsWith('\u0000o')) b.bytesOut += Number(value);
    else b.bytesIn += Number(value);
    out.set(streamName, b);
  }
  return out;
}

/**
 * A token record is one string "<rev>:<json>" (under 1 KiB per token; docs/operations.md#what-a-token-costs-on-redis). The JSON leaves out
 * what the key already says (id, account) and every field at its default, which decodeToken puts
 * back: a typical record shrinks from ~480 to ~260 bytes, and a string costs far less than a hash
 * whose JSON field is too long to be kept as a listpack.
 */
const DEFAULTS: Record<TokenKind, Record<string, unknown>> = {
  subscribe: { isActive: true, allowedOrigins: [], allowedIpAddresses: [], allowedCountries: [], deniedCountries: [] },
  publish: {
    isActive: true,
    allowedOrigins: [],
    allowedIpAddresses: [],
    allowedCountries: [],
    deniedCountries: [],
    ...PUBLISH_SETTING_DEFAULTS,
  },
};

const isDefault = (value: unknown, def: unknown): boolean =>
  value === def || (Array.isArray(value) && Array.isArray(def) && value.length === 0 && def.length === 0);

export function encodeToken(t: NewTokenRecord | TokenRecord): string {
  const defaults = DEFAULTS[t.kind];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) {
    if (k === 'id' || k === 'rev' || k === 'accountId' || v === undefined) continue;
    if (k === 'updatedOn' && v === t.addedOn) continue;
    if (k === 'streams') {
      out.streams = (v as TokenRecord['streams']).map((s) => (s.isRegex ? { streamName: s.streamName, isRegex: true } : { streamName: s.streamName }));
      continue;
    }
    if (k in defaults && isDefault(v, defaults[k])) continue;
    out[k] = v;
  }
  return JSON.stringify(out);
}

export function decodeToken(accountId: string, id: number, raw: string | null | undefined): TokenRecord | null {
  if (!raw) return null;
  const colon = raw.indexOf(':');
  const rev = Number(raw.slice(0, colon));
  const j = JSON.parse(raw.slice(colon + 1)) as Record<string, unknown> & { kind: TokenKind; addedOn: string; streams: Array<{ streamName: string; isRegex?: boolean }> };
  const defaults = DEFAULTS[j.kind];
  const t: Record<string, unknown> = { kind: j.kind, accountId };
  for (const [k, def] of Object.entries(defaults)) t[k] = Array.isArray(def) ? [] : def;
  Object.assign(t, j);
  t.accountId = accountId;
  t.updatedOn = j.updatedOn ?? j.addedOn;
  t.streams = j.streams.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex === true }));
  t.id = id;
  t.rev = rev;
  return t as unknown as TokenRecord;
}

function accountFrom(h: Record<string, string>): Account | null {
  if (!h.id) return null;
  const a: Account = { id: h.id, name: h.name, createdOn: h.createdOn, secureViewer: h.secureViewer === '1' };
  if (h.secretHash) a.secretHash = h.secretHash;
  // viewer country defaults: comma-separated codes, absent or '' when none
  if (h.allowedCountries) a.allowedCountries = h.allowedCountries.split(',');
  if (h.deniedCountries) a.deniedCountries = h.deniedCountries.split(',');
  // the distribution settings (docs/api.md#clusters): absent or '' when never set
  if (h.defaultCluster) a.defaultCluster = h.defaultCluster;
  if (h.geoCascade) a.geoCascade = JSON.parse(h.geoCascade) as AccountGeoCascade;
  // absent (accounts written before the setting existed) or '1': on
  if (h.ipRulesOnRtmp === '0') a.ipRulesOnRtmp = false;
  return a;
}

export interface RedisStoreOptions {
  now?: () => number;
  /** Management writes wait for this many replicas (WAIT) before they are acknowledged. */
  waitReplicas?: number;
  waitTimeoutMs?: number;
  /**
   * Above 0: hold account versions in memory while a subscription proves them current
   * (version-watch.ts), so a version moved elsewhere is seen within this many ms at most
   * (redis.versionLagMs). Not on a Cluster, whose published messages cross the cluster bus out of
   * step with the subscriber's pings: there every decision reads the version.
   */
  versionLagMs?: number;
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly inProcess = false;
  private readonly now: () => number;
  private closed = false;

  /** Account-version reads in flight, by account (shared by concurrent decisions). */
  private readonly versionReads = new Map<string, Promise<number>>();
  /** When this instance last added each gauge count name to the set of names (countNameDue). */
  private readonly countNamesSent = new Map<string, number>();
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
  private readonly watch: VersionWatch | undefined;
  /** The session admission's calls of its script (session-admit.ts). */
  private readonly admissions: SessionAdmission;

  constructor(
    private readonly redis: RedisClient,
    opts: RedisStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.waitReplicas = opts.waitReplicas ?? 0;
    this.waitTimeoutMs = opts.waitTimeoutMs ?? 1000;
    const lag = opts.versionLagMs ?? 0;
    this.watch = lag > 0 && !(redis instanceof Cluster) ? new VersionWatch(redis.duplicate(), { keyPrefix: redis.options.keyPrefix ?? '', maxLagMs: lag }) : undefined;
    for (const [name, s] of Object.entries(SCRIPTS) as Array<[ScriptName, ScriptSpec]>) {
      redis.defineCommand(name, { numberOfKeys: s.varying ? undefined : s.keys, lua: loadScript(s.file) });
    }
    this.admissions = new SessionAdmission(
      (args) => this.run('sessionAdmit', ...args),
      (accountId, ids) => this.redis.mget(...ids.map((id) => keys.sessionRecord(accountId, id))),
    );
    typeStoreFailures(this, isRedisUnavailable);
    // Every write that can move an account version forgets the shared version reads, when it
    // starts and when it is acknowledged, and the watched versions when it is acknowledged: a
    // decision that starts after such a write of this instance never joins a read sent before it,
    // nor waits for the write's message to arrive.
    const self = this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of VERSION_WRITES) {
      const m = self[name];
      self[name] = (...args: unknown[]) => {
        this.versionReads.clear();
        return m.apply(this, args).finally(() => {
          this.versionReads.clear();
          this.watch?.forget();
        });
      };
    }
  }

  /**
   * With waitReplicas, a management write is acknowledged only when that many replicas have it, so
   * a Sentinel failover cannot lose it. WAIT covers every earlier write of this connection.
   */
  private async replicated(): Promise<void> {
    if (this.waitReplicas === 0 || this.redis instanceof Cluster) return;
    const n = await (this.redis as Redis).wait(this.waitReplicas, this.waitTimeoutMs);
    if (n < this.waitReplicas) {
      const message = `Write not confirmed by ${this.waitReplicas} replica(s) within ${this.waitTimeoutMs} ms; retry`;
      throw new StoreUnavailable(new Error(message), message);
    }
  }

  private run(name: ScriptName, ...args: Array<string | number>): Promise<unknown> {
    return (this.redis as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[name](...args);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watch?.close();
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  // ---- accounts ----

  /**
   * The account's record and version in one script. The keys outside its slot come first: the
   * list entry and the secret hint are verified against the record on read, so a crash between
   * them and the record leaves nothing a reader believes.
   */
  async createAccount(a: Account): Promise<Account> {
    if (a.secretHash) await this.redis.set(keys.secret(a.secretHash), a.id);
    await this.redis.zadd(keys.accountList, 'NX', Date.parse(a.createdOn), a.id);
    await this.redis.set(keys.bootstrap, a.id, 'NX');
    const fields = [
      ['id', a.id],
      ['name', a.name],
      ['createdOn', a.createdOn],
      ['secureViewer', a.secureViewer ? '1' : '0'],
      ['allowedCountries', (a.allowedCountries ?? []).join(',')],
      ['deniedCountries', (a.deniedCountries ?? []).join(',')],
      ...(a.defaultCluster ? [['defaultCluster', a.defaultCluster]] : []),
      ...(a.geoCascade ? [['geoCascade', JSON.stringify(a.geoCascade)]] : []),
      ...(a.ipRulesOnRtmp === false ? [['ipRulesOnRtmp', '0']] : []),
      ...(a.secretHash ? [['secretHash', a.secretHash]] : []),
    ].flat();
    const r = codeOf(await this.run('accountCreate', keys.account(a.id), keys.version(a.id), ...fields));
    if (r === Reply.EXISTS) {
      if (a.secretHash) await this.redis.del(keys.secret(a.secretHash));
      throw new AccountExists(a.id);
    }
    await this.replicated();
    return { ...a };
  }

  async createFirstAccount(a: Account): Promise<boolean> {
    // The bootstrap marker is set by every account creation: NX wins only on an empty store.
    const won = await this.redis.set(keys.bootstrap, a.id, 'NX');
    if (won !== 'OK') return false;
    await this.createAccount(a);
    return true;
  }

  async getAccount(id: string): Promise<Account | null> {
    return accountFrom(await this.redis.hgetall(keys.account(id)));
  }

  async listAccounts(): Promise<Account[]> {
    const ids = await this.redis.zrange(keys.accountList, 0, -1);
    const all = await Promise.all(ids.map((id) => this.getAccount(id)));
    return all.filter((a): a is Account => a !== null);
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    const fields: string[] = [];
    if (patch.secureViewer !== undefined) fields.push('secureViewer', patch.secureViewer ? '1' : '0');
    if (patch.name !== undefined) fields.push('name', patch.name);
    if (patch.allowedCountries !== undefined) fields.push('allowedCountries', patch.allowedCountries.join(','));
    if (patch.deniedCountries !== undefined) fields.push('deniedCountries', patch.deniedCountries.join(','));
    if (patch.defaultCluster !== undefined) fields.push('defaultCluster', patch.defaultCluster);
    if (patch.geoCascade !== undefined) fields.push('geoCascade', JSON.stringify(patch.geoCascade));
    if (patch.ipRulesOnRtmp !== undefined) fields.push('ipRulesOnRtmp', patch.ipRulesOnRtmp ? '1' : '0');
    // one script: the change, the version and the record read back (no other writer in between)
    const reply = await this.run('accountUpdate', keys.account(id), keys.version(id), ...fields);
    if (codeOf(reply) === Reply.GONE) return null;
    if (fields.length > 0) await this.replicated();
    // {DONE, field, value, ...}
    const flat = reply as string[];
    const h: Record<string, string> = {};
    for (let i = 1; i < flat.length; i += 2) h[flat[i]] = flat[i + 1];
    return accountFrom(h);
  }

  async setAccountSecret(id: string, secretHash: string | null, expected?: string): Promise<boolean> {
    // the hint first (it is verified against the account on read), then the account itself in one
    // script that answers the hash it replaced, whose hint goes; of two racing rotations with the
    // same expected hash exactly one wins, and an unconditional one never needs another attempt
    if (secretHash) await this.redis.set(keys.secret(secretHash), id);
    const reply = await this.run('secretSet', keys.account(id), expected !== undefined ? '1' : '0', expected ?? '', secretHash ?? '');
    if (codeOf(reply) !== Reply.DONE) {
      if (secretHash) await this.redis.del(keys.secret(secretHash));
      return false;
    }
    const previous = (reply as [number, string])[1];
    if (previous && previous !== secretHash) await this.redis.del(keys.secret(previous));
    await this.replicated();
    return true;
  }

  async findAccountBySecretHash(secretHash: string): Promise<Account | null> {
    const id = await this.redis.get(keys.secret(secretHash));
    if (!id) return null;
    const a = await this.getAccount(id);
    return a && a.secretHash === secretHash ? a : null;
  }

  // ---- tokens ----

  async createToken(t: NewTokenRecord): Promise<TokenRecord> {
    const id = await this.redis.incr(keys.tokenSeq);
    await this.redis.hset(...keys.tokenValue(tokenHash(t.token)), `${t.accountId}:${id}`);
    await this.redis.hset(...keys.tokenId(id), t.accountId);
    const ok = await this.run(
      'tokenCreate',
      keys.token(t.accountId, id),
      keys.byName(t.accountId, t.kind),
      keys.byAdded(t.accountId, t.kind),
      keys.version(t.accountId),
      keys.securing(t.accountId),
      encodeToken(t),
      nameMember(nameSortKey(t.label), id),
      Date.parse(t.addedOn),
      idMember(id),
      setsViewerRules(t) ? '1' : '0',
      id,
    );
    if (codeOf(ok) !== Reply.DONE) throw new Error(`token id ${id} already taken (sequence reset?)`);
    await this.replicated();
    return copyWith(t, { id, rev: 1 });
  }

  private async readToken(accountId: string, id: number): Promise<TokenRecord | null> {
    return decodeToken(accountId, id, await this.redis.get(keys.token(accountId, id)));
  }

  async getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null> {
    const t = await this.readToken(accountId, id);
    return t && t.kind === kind && t.accountId === accountId ? t : null;
  }

  async listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]> {
    const start = (q.page - 1) * q.itemsOnPage;
    const stop = start + q.itemsOnPage - 1;
    const members =
      q.sortBy === 'Name'
        ? q.descending
          ? await this.redis.zrevrange(keys.byName(accountId, kind), start, stop)
          : await this.redis.zrange(keys.byName(accountId, kind), start, stop)
        : q.descending
          ? await this.redis.zrevrange(keys.byAdded(accountId, kind), start, stop)
          : await this.redis.zrange(keys.byAdded(accountId, kind), start, stop);
    return this.readTokens(accountId, members.map(idFromMember));
  }

  /** Records of several tokens of one account in one pipeline; ids deleted meanwhile are skipped. */
  private async readTokens(accountId: string, ids: number[]): Promise<TokenRecord[]> {
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.get(keys.token(accountId, id));
    const res = (await pipe.exec()) ?? [];
    const out: TokenRecord[] = [];
    res.forEach(([err, raw], i) => {
      if (err) throw err;
      const t = decodeToken(accountId, ids[i], raw as string | null);
      if (t) out.push(t);
    });
    return out;
  }

  async updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange): Promise<TokenRecord | null> {
    return compareAndSet(`token ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const current = await this.getToken(accountId, kind, id);
      if (!current) return { done: null };
      const { next, clearBound } = change(current);
      const newHash = tokenHash(next.token);
      const oldHash = tokenHash(current.token);
      if (newHash !== oldHash) await this.redis.hset(...keys.tokenValue(newHash), `${accountId}:${id}`);
      const reply = await this.run(
        'tokenUpdate',
        keys.token(accountId, id),
        keys.byName(accountId, kind),
        keys.bound(accountId, id),
        keys.version(accountId),
        keys.securing(accountId),
        current.rev,
        encodeToken(next),
        nameMember(nameSortKey(current.label), id),
        nameMember(nameSortKey(next.label), id),
        clearBound ? '1' : '0',
        setsViewerRules(next) ? '1' : '0',
        id,
      );
      const step = casReply<TokenRecord | null>(reply, (rev) => copyWith(next, { id, rev }), () => null);
      if (step !== 'retry' && step.done) {
        if (newHash !== oldHash) await this.redis.hdel(...keys.tokenValue(oldHash));
        await this.replicated();
      }
      return step; // MOVED: somebody else wrote first; the change runs again on their version
    });
  }

  async deleteToken(accountId: string, kind: TokenKind, id: number): Promise<boolean> {
    return compareAndSet(`token ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const current = await this.getToken(accountId, kind, id);
      if (!current) return { done: false };
      const reply = await this.run(
        'tokenDelete',
        keys.token(accountId, id),
        keys.byName(accountId, kind),
        keys.byAdded(accountId, kind),
        keys.bound(accountId, id),
        keys.version(accountId),
        keys.securing(accountId),
        keys.secured(accountId),
        current.rev,
        nameMember(nameSortKey(current.label), id),
        idMember(id),
        id,
        ...securedAfterDelete(current, new Date(this.now()).toISOString()).flatMap((e) => [
          keys.securedField(e.streamName, e.isRegex),
          JSON.stringify(Object.assign({ tokenId: e.tokenId, addedOn: e.addedOn }, keptRules(e))),
        ]),
      );
      // MOVED: changed since we read it, so the index members may differ: read again
      const step = casReply(reply, () => true, () => false);
      if (step !== 'retry' && step.done) {
        // the hints live in other Cluster slots: separate commands
        await this.redis.hdel(...keys.tokenValue(tokenHash(current.token)));
        await this.redis.hdel(...keys.tokenId(id));
        await this.replicated();
      }
      return step;
    });
  }

  async securedStreams(accountId: string): Promise<SecuredStream[]> {
    const all = await this.redis.hgetall(keys.secured(accountId));
    const out: SecuredStream[] = [];
    for (const [field, value] of Object.entries(all)) out.push(...securedEntries(field.slice(2), field.startsWith('r:'), value));
    return out.sort(bySecuredName);
  }

  async removeSecuredStream(accountId: string, streamName: string): Promise<SecuredStream[]> {
    const [, exact, regex] = (await this.run('securedRemove', keys.secured(accountId), keys.version(accountId), keys.securedField(streamName, false), keys.securedField(streamName, true))) as [
      number,
      string | null,
      string | null,
    ];
    const out = [...securedEntries(streamName, false, exact), ...securedEntries(streamName, true, regex)].sort(bySecuredName);
    if (out.length > 0) await this.replicated();
    return out;
  }

  /**
   * Data of earlier builds indexed only active publish tokens as setting viewer rules: a disabled
   * securing token must be in the set too (securesViewing). Once per store (meta key), idempotent:
   * instances starting together add the same members, and a member whose token no longer sets
   * rules is skipped on read (viewerRuleTokens filters).
   */
  async upgrade(): Promise<void> {
    await this.upgradeViewerRuleIndex();
    await this.upgradeUsageIndexes();
  }

  private async upgradeViewerRuleIndex(): Promise<void> {
    if ((await this.getMeta(VIEWER_RULE_INDEX_META)) === VIEWER_RULE_INDEX_VERSION) return;
    for (const accountId of await this.redis.zrange(keys.accountList, 0, -1)) {
      const ids = (await this.redis.zrange(keys.byAdded(accountId, 'publish'), 0, -1)).map(idFromMember);
      for (let i = 0; i < ids.length; i += 500) {
        const ruled = (await this.readTokens(accountId, ids.slice(i, i + 500))).filter(setsViewerRules).map((t) => String(t.id));
        if (ruled.length > 0) await this.redis.sadd(keys.securing(accountId), ...ruled);
      }
    }
    await this.setMeta(VIEWER_RULE_INDEX_META, VIEWER_RULE_INDEX_VERSION);
  }

  /**
   * Usage kept by earlier builds lacks two indexes the account and tracking/streams reads use: the
   * account's total in each day's per-stream index, and each stream's set of tracking ids of the
   * day. One SCAN of the usage keys (every master of a Cluster), once per store (meta key).
   * Idempotent and exact beside writers of this build: a total is recomputed from its hash's
   * stream fields in one script, and a set only gains members.
   */
  private async upgradeUsageIndexes(): Promise<void> {
    if ((await this.getMeta(USAGE_INDEX_META)) === USAGE_INDEX_VERSION) return;
    const prefix = this.redis.options.keyPrefix ?? '';
    const pattern = globLiteral(prefix) + keys.usageGlob;
    for (const node of this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis]) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        await this.indexOldUsage(found.map((k) => k.slice(prefix.length)));
      } while (cursor !== '0');
    }
    await this.setMeta(USAGE_INDEX_META, USAGE_INDEX_VERSION);
  }

  /**
   * upgradeUsageIndexes for some usage keys (prefix removed): the daily stream indexes and daily
   * tracking buckets among them, one account at a time (a Cluster pipelines only within a slot).
   */
  private async indexOldUsage(found: string[]): Promise<void> {
    const byAccount = new Map<string, { indexes: string[]; buckets: Array<{ key: string; trackingId: string; day: string }> }>();
    const of = (accountId: string) => {
      const a = byAccount.get(accountId) ?? { indexes: [], buckets: [] };
      byAccount.set(accountId, a);
      return a;
    };
    for (const key of found) {
      const index = /^\{a:(.+?)\}:u:s:\d{4}-\d{2}-\d{2}$/.exec(key);
      if (index) of(index[1]).indexes.push(key);
      const bucket = /^\{a:(.+?)\}:u:t:(.*):(\d{4}-\d{2}-\d{2})$/.exec(key);
      if (bucket) of(bucket[1]).buckets.push({ key, trackingId: bucket[2], day: bucket[3] });
    }
    for (const [accountId, { indexes, buckets }] of byAccount) {
      const read = this.redis.pipeline();
      for (const key of indexes) (read as unknown as Record<ScriptName, (...a: Array<string | number>) => unknown>).usageTotal(key, ...keys.usageTotalFields);
      for (const b of buckets) read.hkeys(b.key).pttl(b.key);
      const res = (await read.exec()) ?? [];
      for (const [err] of res) if (err) throw err;
      if (buckets.length === 0) continue;
      const write = this.redis.pipeline();
      buckets.forEach((b, j) => {
        const fields = res[indexes.length + 2 * j][1] as string[];
        const ttl = res[indexes.length + 2 * j + 1][1] as number;
        for (const streamName of new Set(fields.map((f) => f.slice(0, f.lastIndexOf('\u0000'))))) {
          const set = keys.usageStreamTracking(accountId, b.day, streamName);
          write.sadd(set, b.trackingId);
          // kept as long as the bucket it indexes
          if (ttl > 0) write.pexpire(set, ttl);
        }
      });
      for (const [err] of (await write.exec()) ?? []) if (err) throw err;
    }
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const ref = await this.redis.hget(...keys.tokenValue(hash));
    if (!ref) return null;
    const i = ref.lastIndexOf(':');
    const t = await this.readToken(ref.slice(0, i), Number(ref.slice(i + 1)));
    return t && tokenHash(t.token) === hash ? t : null;
  }

  async findTokenById(id: number): Promise<TokenRecord | null> {
    const accountId = await this.redis.hget(...keys.tokenId(id));
    if (!accountId) return null;
    const t = await this.readToken(accountId, id);
    return t && t.accountId === accountId ? t : null;
  }

  async securingTokens(accountId: string): Promise<TokenRecord[]> {
    // The set holds every viewer-rule token (securing, or restricting viewer countries).
    const ids = (await this.redis.smembers(keys.securing(accountId))).map(Number).sort((a, b) => a - b);
    // One pipeline, not a round trip per token: an account may have thousands (seen in the benchmark).
    return (await this.readTokens(accountId, ids)).filter(securesViewing);
  }

  async viewerRuleTokens(accountId: string): Promise<TokenRecord[]> {
    const ids = (await this.redis.smembers(keys.securing(accountId))).map(Number).sort((a, b) => a - b);
    return (await this.readTokens(accountId, ids)).filter(setsViewerRules);
  }

  /** From the watch, while it vouches for the version (docs/performance.md#watched-account-versions). */
  accountVersionKnown(accountId: string): number | undefined {
    return this.watch?.current(accountId);
  }

  /**
   * From the watch when it vouches for the version, else read: concurrent decisions of one account
   * share the read in flight (one round trip for all of them instead of one each;
   * docs/performance.md). A decision joins only a read sent while no write of this instance was
   * acknowledged since (writes forget the shared reads); a write made on another instance is seen
   * by the next read sent after it, at most one round trip later than with a read of its own.
   */
  accountVersion(accountId: string): Promise<number> {
    const known = this.watch?.current(accountId);
    if (known !== undefined) return Promise.resolve(known);
    const running = this.versionReads.get(accountId);
    if (running !== undefined) return running;
    const epoch = this.watch?.begin() ?? -1;
    const read = this.redis.get(keys.version(accountId)).then((v) => {
      const ver = Number(v ?? 0);
      this.watch?.remember(accountId, ver, epoch);
      return ver;
    });
    this.versionReads.set(accountId, read);
    const done = () => {
      if (this.versionReads.get(accountId) === read) this.versionReads.delete(accountId);
    };
    read.then(done, done);
    return read;
  }

  // ---- webhooks ----

  private async readWebhook(accountId: string, id: number): Promise<Webhook | null> {
    const h = (await this.redis.hgetall(keys.webhook(accountId, id))) as { json?: string; rev?: string };
    if (!h.json || !h.rev) return null;
    const w = JSON.parse(h.json) as Webhook;
    return w.accountId === accountId ? copyWith(w, { id, rev: Number(h.rev) }) : null;
  }

  async createWebhook(w: Omit<Webhook, 'id' | 'rev'>): Promise<Webhook> {
    const id = await this.redis.incr(keys.webhookSeq);
    await this.redis
      .multi()
      .hset(keys.webhook(w.accountId, id), 'json', JSON.stringify(w), 'rev', 1)
      .zadd(keys.webhooks(w.accountId), id, String(id))
      .exec();
    await this.replicated();
    return copyWith(w, { id, rev: 1 });
  }

  async getWebhook(accountId: string, id: number): Promise<Webhook | null> {
    return this.readWebhook(accountId, id);
  }

  async updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook): Promise<Webhook | null> {
    return compareAndSet(`webhook ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const cur = await this.readWebhook(accountId, id);
      if (!cur) return { done: null };
      const { id: _i, rev: _r, ...next } = change(cur);
      const reply = await this.run('recordCas', keys.webhook(accountId, id), cur.rev, JSON.stringify(next));
      const step = casReply<Webhook | null>(reply, (rev) => copyWith(next, { id, rev }), () => null);
      if (step !== 'retry' && step.done) await this.replicated();
      return step;
    });
  }

  async deleteWebhook(accountId: string, id: number): Promise<boolean> {
    if (!(await this.readWebhook(accountId, id))) return false;
    const res = await this.redis
      .multi()
      .del(keys.webhook(accountId, id), keys.deliveries(accountId, id))
      .zrem(keys.webhooks(accountId), String(id))
      .exec();
    const deleted = Number(res?.[0]?.[1] ?? 0) > 0;
    if (deleted) await this.replicated();
    return deleted;
  }

  async listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]> {
    const ids = q.descending
      ? await this.redis.zrevrangebyscore(keys.webhooks(accountId), q.startingId ?? '+inf', '-inf', 'LIMIT', 0, q.itemCount)
      : await this.redis.zrangebyscore(keys.webhooks(accountId), q.startingId ?? '-inf', '+inf', 'LIMIT', 0, q.itemCount);
    const all = await Promise.all(ids.map((id) => this.readWebhook(accountId, Number(id))));
    return all.filter((w): w is Webhook => w !== null);
  }

  async addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void> {
    await this.run('deliveryAdd', keys.webhook(accountId, webhookId), keys.deliveries(accountId, webhookId), JSON.stringify(d), DELIVERIES_KEPT);
  }

  async listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]> {
    if (!(await this.redis.exists(keys.webhook(accountId, webhookId)))) return [];
    return (await this.redis.lrange(keys.deliveries(accountId, webhookId), 0, DELIVERIES_KEPT - 1)).map((x) => JSON.parse(x) as Delivery);
  }

  // ---- recordings ----

  private readonly openField = (streamName: string, path?: string) => `${streamName}\u0000${path ?? ''}`;

  async startRecording(r: NewRecording): Promise<Recording> {
    // the id comes from a sequence outside the account's slot: an id taken by a crash is only skipped
    const rec: Recording = copyWith(r, { id: await this.redis.incr(keys.recordingSeq), status: 'recording' });
    await this.run(
      'recordingStart',
      keys.recording(r.accountId, rec.id),
      keys.recordings(r.accountId),
      keys.openRecordings(r.accountId),
      JSON.stringify(rec),
      rec.id,
      this.openField(r.streamName, r.path),
    );
    await this.replicated();
    return rec;
  }

  async completeRecording(r: CompletedRecording): Promise<Recording> {
    const field = this.openField(r.streamName, r.path);
    let newId: number | undefined; // taken once, kept across attempts
    const rec = await compareAndSet(`recording of ${r.streamName}`, MAX_CAS_ATTEMPTS, async () => {
      const openId = await this.redis.hget(keys.openRecordings(r.accountId), field);
      const raw = openId ? await this.redis.get(keys.recording(r.accountId, Number(openId))) : null;
      const merged = completedRecording(raw ? (JSON.parse(raw) as Recording) : null, r);
      let id = merged.id;
      if (id === undefined) {
        newId ??= await this.redis.incr(keys.recordingSeq);
        id = newId;
      }
      const rec: Recording = copyWith(merged, { id });
      const reply = await this.run(
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
    await this.replicated();
    return rec;
  }

  async listRecordings(accountId: string, streamName?: string): Promise<Recording[]> {
    const ids = await this.redis.zrevrange(keys.recordings(accountId), 0, -1);
    if (ids.length === 0) return [];
    const raws = await this.redis.mget(...ids.map((id) => keys.recording(accountId, Number(id))));
    return raws
      .filter((x): x is string => x !== null)
      .map((x) => JSON.parse(x) as Recording)
      .filter((r) => streamName === undefined || r.streamName === streamName);
  }

  async deleteRecording(accountId: string, id: number): Promise<Recording | null> {
    const reply = await this.run('recordingDelete', keys.recording(accountId, id), keys.recordings(accountId), keys.openRecordings(accountId), id);
    if (codeOf(reply) === Reply.GONE) return null;
    await this.replicated();
    return JSON.parse((reply as [number, string])[1]) as Recording;
  }

  // ---- usage ----

  async addUsage(u: UsageRecord, reportId?: string): Promise<boolean> {
    const bucket = keys.usage(u.accountId, u.trackingId, u.tokenId, u.day);
    const tracked = u.trackingId !== undefined;
    const now = this.now();
    const hourly = u.hourly !== undefined && u.hourly.keepUntilMs > now ? u.hourly : undefined;
    const ok = await this.run(
      'usageAdd',
      bucket,
      reportId !== undefined ? keys.usageReport(u.accountId, reportId) : bucket,
      keys.usageStreams(u.accountId, u.day),
      tracked ? keys.usageStreamTracking(u.accountId, u.day, u.streamName) : bucket,
      tracked && hourly ? keys.usage(u.accountId, u.trackingId, undefined, hourly.hour) : bucket,
      hourly ? keys.usageStreams(u.accountId, hourly.hour) : bucket,
      reportId !== undefined ? '1' : '0',
      `${u.streamName}\u0000o`,
      `${u.streamName}\u0000i`,
      u.bytesOut,
      u.bytesIn,
      USAGE_REPORT_TTL_S,
      USAGE_KEEP_S,
      tracked ? '1' : '0',
      u.trackingId ?? '',
      // the hourly keys go when their retention ends (a later write may move it with the setting)
      hourly ? Math.ceil(hourly.keepUntilMs / 1000) : '0',
      ...keys.usageTotalFields,
    );
    return codeOf(ok) === Reply.DONE;
  }

  async usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]> {
    const days = daysBetween(startDay, stopDay);
    const ids = trackingIds.filter((t) => t !== '');
    if (ids.length === 0 || days.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) for (const day of days) pipe.hgetall(keys.usage(accountId, id, undefined, day));
    const res = (await pipe.exec()) ?? [];
    const sums = new Map<string, UsageTotal>();
    let i = 0;
    for (const id of ids) {
      for (let d = 0; d < days.length; d++, i++) {
        const [err, h] = res[i];
        if (err) throw err;
        for (const [field, value] of Object.entries(h as Record<string, string>)) {
          const cut = field.lastIndexOf('\u0000');
          const streamName = field.slice(0, cut);
          const key = `${id}\u0000${streamName}`;
          const t = sums.get(key) ?? { trackingId: id, streamName, bytesOut: 0, bytesIn: 0 };
          if (field.endsWith('\u0000o')) t.bytesOut += Number(value);
          else t.bytesIn += Number(value);
          sums.set(key, t);
        }
      }
    }
    return [...sums.values()].sort((a, b) => (a.trackingId === b.trackingId ? (a.streamName < b.streamName ? -1 : 1) : a.trackingId < b.trackingId ? -1 : 1));
  }

  async usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]> {
    const rows = await this.usageRows(accountId, selector, daysBetween(startDay, stopDay), (day) => day);
    return rows.map(({ period, ...r }) => Object.assign({ day: period }, r));
  }

  async usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]> {
    // an hour's tracking ids are in its day's set
    const rows = await this.usageRows(accountId, selector, hoursBetween(startHour, stopHour), (hour) => hour.slice(0, 10));
    return rows.map(({ period, ...r }) => Object.assign({ hour: period }, r));
  }

  /**
   * usageDaily / usageHourly over the given periods (days or hours; `dayOf` names a period's day):
   * the tracking buckets, the per-stream index, and for streamTracking the stream's tracking-id set
   * of the day, whose buckets hold the tracked rows; the untracked row is the stream's total less
   * them. Pipelined: O(periods × streams) reads (× tracking ids for streamTracking).
   */
  private async usageRows(
    accountId: string,
    selector: UsageSelector,
    periods: string[],
    dayOf: (period: string) => string,
  ): Promise<Array<{ period: string; trackingId?: string; streamName: string; bytesOut: number; bytesIn: number }>> {
    const byTracking = 'trackingIds' in selector;
    const names = [...new Set(byTracking ? selector.trackingIds : 'streamNames' in selector ? selector.streamNames : selector.streamTracking)].filter((n) => n !== '');
    if (names.length === 0 || periods.length === 0) return [];
    const out: Array<{ period: string; trackingId?: string; streamName: string; bytesOut: number; bytesIn: number }> = [];
    if (byTracking) {
      // one bucket per tracking id and period: every stream of it
      const pipe = this.redis.pipeline();
      for (const id of names) for (const p of periods) pipe.hgetall(keys.usage(accountId, id, undefined, p));
      const res = (await pipe.exec()) ?? [];
      let i = 0;
      for (const trackingId of names) {
        for (const period of periods) {
          const [err, h] = res[i++];
          if (err) throw err;
          for (const [streamName, b] of streamSums(h as Record<string, string>)) out.push({ period, trackingId, streamName, ...b });
        }
      }
      return out;
    }
    // one index hash per period: only the asked streams' fields
    const fields = names.flatMap((n) => [`${n}\u0000o`, `${n}\u0000i`]);
    const perStream = this.redis.pipeline();
    for (const p of periods) perStream.hmget(keys.usageStreams(accountId, p), ...fields);
    const days = [...new Set(periods.map(dayOf))];
    const withTracking = 'streamTracking' in selector;
    if (withTracking) for (const day of days) for (const n of names) perStream.smembers(keys.usageStreamTracking(accountId, day, n));
    const res = (await perStream.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    const totals = periods.map((_, p) => res[p][1] as Array<string | null>);
    if (!withTracking) {
      periods.forEach((period, p) => {
        names.forEach((streamName, n) => {
          const o = totals[p][2 * n];
          const i = totals[p][2 * n + 1];
          if (o !== null || i !== null) out.push({ period, streamName, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) });
        });
      });
      return out;
    }
    const trackingIds = new Map<string, string[]>(); // "<day>\0<stream>" → its tracking ids
    let k = periods.length;
    for (const day of days) for (const n of names) trackingIds.set(`${day}\u0000${n}`, (res[k++][1] as string[]).sort());
    const reads: Array<{ period: string; streamName: string; trackingId: string }> = [];
    const perTracking = this.redis.pipeline();
    for (const period of periods) {
      for (const streamName of names) {
        for (const trackingId of trackingIds.get(`${dayOf(period)}\u0000${streamName}`) ?? []) {
          reads.push({ period, streamName, trackingId });
          perTracking.hmget(keys.usage(accountId, trackingId, undefined, period), `${streamName}\u0000o`, `${streamName}\u0000i`);
        }
      }
    }
    const tracked = reads.length > 0 ? ((await perTracking.exec()) ?? []) : [];
    const sums = new Map<string, { bytesOut: number; bytesIn: number }>(); // "<period>\0<stream>" → tracked bytes
    reads.forEach((r, j) => {
      const [err, v] = tracked[j];
      if (err) throw err;
      const [o, i] = v as Array<string | null>;
      if (o === null && i === null) return;
      const row = { period: r.period, trackingId: r.trackingId, streamName: r.streamName, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) };
      out.push(row);
      const key = `${r.period}\u0000${r.streamName}`;
      const s = sums.get(key) ?? { bytesOut: 0, bytesIn: 0 };
      sums.set(key, { bytesOut: s.bytesOut + row.bytesOut, bytesIn: s.bytesIn + row.bytesIn });
    });
    periods.forEach((period, p) => {
      names.forEach((streamName, n) => {
        const s = sums.get(`${period}\u0000${streamName}`) ?? { bytesOut: 0, bytesIn: 0 };
        // usage kept before the stream index existed is not in it: never below zero
        const bytesOut = Math.max(0, Number(totals[p][2 * n] ?? 0) - s.bytesOut);
        const bytesIn = Math.max(0, Number(totals[p][2 * n + 1] ?? 0) - s.bytesIn);
        if (bytesOut !== 0 || bytesIn !== 0) out.push({ period, trackingId: '', streamName, bytesOut, bytesIn });
      });
    });
    return out;
  }

  async usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]> {
    const periods = unit === 'day' ? daysBetween(start, stop) : hoursBetween(start, stop);
    if (periods.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const p of periods) pipe.hmget(keys.usageStreams(accountId, p), ...keys.usageTotalFields);
    const res = (await pipe.exec()) ?? [];
    const out: UsageSum[] = [];
    periods.forEach((period, p) => {
      const [err, v] = res[p];
      if (err) throw err;
      const [o, i] = v as Array<string | null>;
      if (o !== null || i !== null) out.push({ period, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) });
    });
    return out;
  }

  // ---- metadata ----

  async getMeta(key: string): Promise<string | null> {
    return this.redis.get(keys.meta(key));
  }

  async setMeta(key: string, value: string, onlyIfAbsent = false): Promise<boolean> {
    const r = onlyIfAbsent ? await this.redis.set(keys.meta(key), value, 'NX') : await this.redis.set(keys.meta(key), value);
    return r === 'OK';
  }

  // ---- bind on usage ----

  async boundAddresses(accountId: string, tokenId: number): Promise<string[]> {
    return this.redis.zrange(keys.bound(accountId, tokenId), 0, -1);
  }

  async bindAddress(token: TokenRecord, address: string): Promise<BindResult> {
    return bindResult(
      await this.run('bindAddress', keys.token(token.accountId, token.id), keys.bound(token.accountId, token.id), token.rev, address, token.bindIpsOnUsage ?? 0),
    );
  }

  // ---- live streams ----

  async startLiveStream(s: LiveStream, ttlSeconds: number): Promise<void> {
    const now = this.now();
    const entry = copyWith(s, { expiresMs: now + ttlSeconds * 1000 });
    // one script: the entry, and the account version when the stream's publishing token changed
    await this.run('liveStart', keys.live(s.accountId), keys.version(s.accountId), keys.securing(s.accountId), s.streamName, JSON.stringify(entry), s.tokenId, now);
  }

  async endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null> {
    const raw = await this.redis.hget(keys.live(accountId), streamName);
    if (!raw) return null;
    const { expiresMs: _e, ...s } = JSON.parse(raw) as LiveStream & { expiresMs: number };
    if (feedId !== undefined && s.feedId !== feedId) return null;
    // removed only if still the entry read above (a newer start of the stream stays live)
    const removed = await this.run('liveEnd', keys.live(accountId), keys.version(accountId), keys.securing(accountId), streamName, raw);
    return codeOf(removed) === Reply.DONE ? s : null;
  }

  async startSession(s: Session, ttlSeconds: number): Promise<void> {
    await this.admitSession(s, ttlSeconds, {});
  }

  /** The keys the touch and end scripts take, from a record or a caller-id hint. */
  private sessionKeys(p: SessionPointer, caller: string, sessionId: string): string[] {
    return [
      keys.sessionRecord(p.a, p.id),
      keys.sessionsLive(p.a),
      keys.sessionsOfToken(p.a, p.t),
      keys.sessionsOfStream(p.a, p.s),
      keys.publishersOfStream(p.a, p.s),
      keys.sessionPointer(p.a, caller, sessionId),
    ];
  }

  async admitSession(s: Session, ttlSeconds: number, limits: SessionLimits): Promise<AdmitResult> {
    const now = this.now();
    const expires = Date.parse(s.lastSeenOn) + ttlSeconds * 1000;
    const pointer: SessionPointer = { a: s.accountId, id: s.id, t: s.tokenId, s: s.streamName };
    const countKey = `${s.caller}:${s.action}`;
    const [gaugeKey, member] = keys.sessionGauge(s);
    const pointerKey = keys.session(s.caller, s.sessionId);
    const pointerJson = JSON.stringify(pointer);
    // The connection's pointer and the gauge's entries live outside the account's slot. On one Redis
    // server the script writes them too (one command per admission); a Cluster sends them after.
    const local = !(this.redis instanceof Cluster);
    const reply = await this.admissions.admit(
      s,
      [
        ...this.sessionKeys(pointer, s.caller, s.sessionId),
        keys.tokenUses(s.accountId, s.tokenId),
        keys.token(s.accountId, s.tokenId ?? 0),
        ...(local ? [pointerKey, keys.sessionCountOf(s.caller, 'subscribe'), keys.sessionCountOf(s.caller, 'publish')] : []),
      ],
      [
        JSON.stringify(s),
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
      ],
    );
    if (!reply.admitted) return reply;
    const replaced = reply.replaced;
    // On a Cluster the pointer is not waited for: commands on one connection run in order, so every
    // later read of it through this client (a re-ask, a media server's "done") finds it, and the
    // admission answers a round trip sooner. Lost with Redis itself, it makes a re-ask register the
    // connection again. The gauge's counts are not worth a wait either. Separate commands, not a
    // pipeline: an ioredis pipeline copies every script method onto itself, and its bookkeeping
    // outlived young collections at admission rates (1,500/s promoted ~6 MB per scavenge, each
    // scavenge ~20 ms; docs/performance.md#session-admissions).
    const ignore = () => undefined;
    if (!local) {
      this.redis.set(pointerKey, pointerJson, 'PX', Math.max(1, expires - now)).catch(ignore);
      // Waited for: a Cluster may resend a command after a redirection, so an unawaited entry could
      // land after the removal a later admission of the same connection sends for it.
      await Promise.all([
        reply.goneId !== '' ? this.redis.zrem(...keys.sessionGauge({ caller: s.caller, action: reply.goneAction, accountId: s.accountId, id: reply.goneId })) : undefined,
        this.redis.zadd(gaugeKey, expires, member),
      ]).catch(ignore);
    }
    if (this.countNameDue(countKey, now)) this.redis.sadd(keys.sessionCountNames, countKey).catch(ignore);
    for (const r of replaced) this.redis.zrem(...keys.sessionGauge(r)).catch(ignore);
    return { admitted: true, replaced };
  }

  /**
   * Whether the gauge's set of count names should hear of `name` again: once a minute per name, not
   * on every admission (the set only lists which count keys exist; a flushed Redis hears it again
   * within the minute).
   */
  private countNameDue(name: string, now: number): boolean {
    const last = this.countNamesSent.get(name);
    if (last !== undefined && now - last < COUNT_NAME_RESEND_MS) return false;
    this.countNamesSent.set(name, now);
    return true;
  }

  private async pointerOf(caller: string, sessionId: string): Promise<SessionPointer | null> {
    const raw = await this.redis.get(keys.session(caller, sessionId));
    return raw ? (JSON.parse(raw) as SessionPointer) : null;
  }

  async getSession(caller: string, sessionId: string): Promise<Session | null> {
    const p = await this.pointerOf(caller, sessionId);
    if (!p) return null;
    const s = await this.getSessionById(p.a, p.id);
    // the hint is believed only when the record agrees
    return s && s.caller === caller && s.sessionId === sessionId ? s : null;
  }

  async getSessionById(accountId: string, id: string): Promise<Session | null> {
    const raw = await this.redis.get(keys.sessionRecord(accountId, id));
    return raw ? (JSON.parse(raw) as Session) : null;
  }

  async touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string): Promise<Session | null> {
    const p = await this.pointerOf(caller, sessionId);
    if (!p) return null;
    const ttl = ttlSeconds * 1000;
    const reply = await this.run('sessionTouch', ...this.sessionKeys(p, caller, sessionId), ttl, at, Date.parse(at));
    if (codeOf(reply) === Reply.GONE) return null;
    // {DONE, record} touched, {ENDED, record} as it is
    const s = JSON.parse((reply as [number, string])[1]) as Session;
    if (s.endedReason === undefined) {
      const [gaugeKey, member] = keys.sessionGauge(s);
      void Promise.all([
        this.redis.pexpire(keys.session(caller, sessionId), ttl),
        this.redis.zadd(gaugeKey, 'XX', Date.parse(at) + ttl, member),
      ]).catch(() => undefined);
    }
    return s;
  }

  async endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }): Promise<Session | null> {
    const p = await this.pointerOf(caller, sessionId);
    if (!p) return null;
    const keep = end.keepSeconds * 1000;
    const reply = await this.run('sessionEnd', ...this.sessionKeys(p, caller, sessionId), end.reason, end.at, keep);
    // GONE (unknown) or ENDED (another call ended it)
    if (codeOf(reply) !== Reply.DONE) return null;
    const s = JSON.parse((reply as [number, string])[1]) as Session;
    void Promise.all([
      this.redis.pexpire(keys.session(caller, sessionId), keep),
      this.redis.zrem(...keys.sessionGauge(s)),
    ]).catch(() => undefined);
    return s;
  }

  async listSessions(accountId: string, f: SessionFilter, page: { offset: number; limit: number }): Promise<{ total: number; items: Session[] }> {
    if (page.limit === 0 && f.streamName !== undefined && f.tokenId === undefined && f.action !== undefined) {
      // a count of one stream's viewers or publishers (viewerConnection events): no record read
      const live = `(${this.now()}`;
      const [all, publishers] = await Promise.all([
        this.redis.zcount(keys.sessionsOfStream(accountId, f.streamName), live, '+inf'),
        this.redis.zcount(keys.publishersOfStream(accountId, f.streamName), live, '+inf'),
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
    const ids = await this.redis.zrangebyscore(index, `(${this.now()}`, '+inf');
    const raws = ids.length === 0 ? [] : await this.redis.mget(...ids.map((id) => keys.sessionRecord(accountId, id)));
    const all = raws
      .filter((r): r is string => r !== null)
      .map((r) => JSON.parse(r) as Session)
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
    const names = (await this.redis.smembers(keys.sessionCountNames)).sort();
    const now = this.now();
    return Promise.all(
      names.map(async (n) => {
        await this.redis.zremrangebyscore(keys.sessionCount(n), '-inf', now);
        const cut = n.lastIndexOf(':');
        return { caller: n.slice(0, cut), action: n.slice(cut + 1) as 'publish' | 'subscribe', count: await this.redis.zcard(keys.sessionCount(n)) };
      }),
    );
  }

  async scheduleExpiry(accountId: string, tokenId: number, atMs: number): Promise<void> {
    await this.redis.zadd(keys.expiryCuts, atMs, `${accountId}\n${tokenId}`);
  }

  async takeDueExpiries(nowMs: number, limit: number): Promise<Array<{ accountId: string; tokenId: number }>> {
    const due = await this.redis.zrangebyscore(keys.expiryCuts, '-inf', nowMs, 'LIMIT', 0, limit);
    const out: Array<{ accountId: string; tokenId: number }> = [];
    for (const m of due) {
      // whoever removes the member carries the cut out: once, whichever instance
      if ((await this.redis.zrem(keys.expiryCuts, m)) === 1) {
        const cut = m.lastIndexOf('\n');
        out.push({ accountId: m.slice(0, cut), tokenId: Number(m.slice(cut + 1)) });
      }
    }
    return out;
  }

  async getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null> {
    const raw = await this.redis.hget(keys.live(accountId), streamName);
    if (!raw) return null;
    const { expiresMs, ...s } = JSON.parse(raw) as LiveStream & { expiresMs: number };
    return expiresMs > this.now() ? s : null;
  }

  async activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]> {
    const all = await this.redis.hgetall(keys.live(accountId));
    const now = this.now();
    const ids = new Set<number>();
    const expired: string[] = [];
    for (const [name, raw] of Object.entries(all)) {
      const e = JSON.parse(raw) as LiveStream & { expiresMs: number };
      if (e.expiresMs <= now) expired.push(name, raw);
      else if (streamName === undefined || name === streamName) ids.add(e.tokenId);
    }
    // Only entries still as read: a stream started again between the read and here keeps its entry.
    if (expired.length > 0) await this.run('livePrune', keys.live(accountId), ...expired);
    return [...ids].sort((a, b) => a - b);
  }

  // ---- marks ----

  async swapMark(accountId: string, name: string, value: string, ttlMs: number, when: 'always' | 'absent' | 'present' = 'always'): Promise<string | null> {
    // {DONE | EXISTS | GONE, the value held before}
    const [, held] = (await this.run('markSwap', keys.mark(accountId, name), value, Math.max(1, Math.ceil(ttlMs)), this.now(), when)) as [number, string | null];
    return typeof held === 'string' ? held : null;
  }

  async takeMark(accountId: string, name: string, value: string): Promise<boolean> {
    return codeOf(await this.run('markTake', keys.mark(accountId, name), value, this.now())) === Reply.DONE;
  }
}
