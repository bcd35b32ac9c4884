// Token and account lookups for decisions, through bounded caches that are checked against the
// store's account version before they are trusted: from the store's memory where it can vouch for
// it (SQLite's kept versions, Redis's version watch), else one small read. Store calls here never
// wait longer than storeTimeoutMs.
import { LRUCache } from 'lru-cache';
import { securesViewing, tokenHash, type TokenRecord } from '../domain/tokens.js';
import { restrictsViewerCountries } from '../domain/viewer-rules.js';
import { keptCountryToken, type SecuredStream } from '../domain/secured-streams.js';
import type { LiveStream, Store } from '../store/store.js';
import { compileRules, type CompiledRules } from '../policy/rules.js';
import type { ViewerCountries } from '../policy/types.js';
import { SecuringPatterns } from './securing-patterns.js';
import { selectIssuer, selectorKey, type IssuerRecord, type JwtSelector } from '../domain/issuers.js';

/**
 * Token value → its SHA-256, for the values decided lately: a viewer or media server presents the
 * same token on every request, and the hash was the largest single step of a cached decision
 * (docs/decision-path.md#what-the-decision-path-does-to-be-fast, "Less work per decision"). Only values of plausible token length are kept. The credential
 * resolvers (src/admission/credential.ts) and the viewer sessions (src/sessions/viewer-sessions.ts)
 * read it.
 */
const hashes = new Map<string, string>();
const HASHES_MAX = 10_000;
export function hashOf(value: string): string {
  let h = hashes.get(value);
  if (h === undefined) {
    h = tokenHash(value);
    if (value.length <= 256) {
      // emptied when full: a Map, so a hit costs no LRU bookkeeping
      if (hashes.size >= HASHES_MAX) hashes.clear();
      hashes.set(value, h);
    }
  }
  return h;
}

export class StoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`store unavailable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

/** An issuer as read for a decision, with the account version it is current at (docs/api.md#credential-issuers). */
/** An account's active issuers as an HTTP request reads them (TokenLookup.accountIssuers). */
export interface AccountIssuers {
  /** Cookies its JWT issuers take credentials from. */
  cookieNames: readonly string[];
  /** Its signed-URL issuers (docs/api.md#signed-url-issuers). */
  signed: readonly IssuerRecord[];
}

export interface IssuerEntry {
  issuer: IssuerRecord;
  ver: number;
}

/** A selector's cache key, computed once per remembered peek. */
const keyOf = (sel: JwtSelector): string => sel.key ?? selectorKey(sel);

export interface TokenEntry {
  token: TokenRecord;
  /** The account version read before the record: the entry is current while the version is. */
  ver: number;
}

/** A publish token with country lists (active or not), as the account entry keeps it. */
interface GeoToken {
  token: TokenRecord;
  /** Its lists alone, as the viewers of a stream it publishes are held to them. */
  alone: ViewerCountries;
}

/** What a version of the account knows of its viewers' country lists. */
interface AccountGeo {
  /** The account's defaults (`/api/geo/account`), when it has any. */
  defaults: ViewerCountries | undefined;
  /** Active publish tokens with country lists, by id (ascending). */
  tokens: GeoToken[];
  byId: Map<number, GeoToken>;
  /** Answers already computed for this version, by stream name (cleared when full). */
  byStream: Map<string, StreamGeo>;
}

interface StreamGeo {
  value: ViewerCountries | undefined;
  /** Epoch ms from which the answer must be recomputed: when the live entry it read expires. */
  until: number;
}

export interface AccountEntry {
  id: string;
  ver: number;
  exists: boolean;
  secureViewer: boolean;
  /** The securing tokens' exact stream names. */
  exact: Set<string>;
  /** Their patterns, compiled in the background; shared by the account's successive versions. */
  patterns: SecuringPatterns;
  /** The generation of `patterns` that answers for this version. */
  gen: number;
  /** Answers already computed for this version, by stream name (cleared when full). */
  answers: Map<string, boolean>;
  /** Its viewer country rules; undefined when it has none (no defaults, no publish token with lists). */
  geo: AccountGeo | undefined;
  /** The account's ipRulesOnRtmp (docs/api.md#rtmp): false lifts address rules on RTMP, RTSP and SRT. */
  ipRulesOnRtmp: boolean;
  /** The account's default cluster as stored (docs/api.md#clusters), when set. */
  defaultCluster: string | undefined;
}

/** lru-cache get options, made once: the decision path passes them on every call. */
const ALLOW_STALE = { allowStale: true } as const;

/** Stream names whose answer an account version remembers. */
const ANSWERS_PER_ACCOUNT = 256;

/** A token's compiled rules, kept per token id: a new revision replaces the old one. */
interface CompiledEntry {
  rev: number;
  /** The stream rules the matcher was built from: a revision that keeps them keeps the matcher. */
  streamsKey: string;
  rules: CompiledRules;
}

export interface LookupOptions {
  cacheMaxEntries: number;
  cacheTtlMs: number;
  storeTimeoutMs: number;
  /** How long a live-stream entry lasts unless started again (the lifecycle's enforcement.liveTtlSeconds). */
  liveTtlSeconds?: number;
}

export interface LookupStats {
  hits: number;
  misses: number;
}

export class TokenLookup {
  private readonly byHash: LRUCache<string, TokenEntry>;
  private readonly byId: LRUCache<number, TokenEntry>;
  private readonly accounts: LRUCache<string, AccountEntry>;
  private readonly compiled: LRUCache<number, CompiledEntry>;
  /** Issuers by the selector of the JWTs they claim (no two issuers claim one selector). */
  private readonly issuers: LRUCache<string, IssuerEntry>;
  /** The cookie names an account's issuers read credentials from, by account, at a version. */
  private readonly accountIssuerSets: LRUCache<string, AccountIssuers & { ver: number }>;
  readonly stats: LookupStats = { hits: 0, misses: 0 };
  private readonly inFlight = new Map<string, Promise<TokenEntry | null>>();

  constructor(
    private readonly store: Store,
    private readonly opts: LookupOptions,
  ) {
    const common = { max: opts.cacheMaxEntries, ttl: opts.cacheTtlMs || undefined };
    this.byHash = new LRUCache(common);
    this.byId = new LRUCache(common);
    // Weighed by patterns held: compiled programs live in native memory the JS heap does not see,
    // so the cache bounds them (at most ACCOUNT_PATTERN_BUDGET patterns compiled at once).
    const maxAccounts = Math.max(1000, Math.ceil(opts.cacheMaxEntries / 10));
    this.accounts = new LRUCache({
      max: maxAccounts,
      ttl: common.ttl,
      // A version check makes an entry current; its age only matters with the store away
      // (securedCached). Kept past its ttl, an entry still hands its compiled patterns on.
      noDeleteOnStaleGet: true,
      maxSize: maxAccounts + ACCOUNT_PATTERN_BUDGET,
      sizeCalculation: (e) => 1 + e.patterns.size,
    });
    this.compiled = new LRUCache({ max: opts.cacheMaxEntries });
    this.issuers = new LRUCache({ max: Math.max(1000, Math.ceil(opts.cacheMaxEntries / 10)) });
    this.accountIssuerSets = new LRUCache({ max: Math.max(1000, Math.ceil(opts.cacheMaxEntries / 10)) });
  }

  /** Runs a store call with the decision-path deadline; any failure becomes StoreUnavailable. */
  timed<T>(p: Promise<T>): Promise<T> {
    // The work is done before the promise exists: a timer could not interrupt it, and arming one
    // per call (or another async frame) is measurable on the decision path (docs/performance.md).
    if (this.store.inProcess) return p.then(undefined, (e: unknown) => Promise.reject(new StoreUnavailable(e)));
    return this.raced(p);
  }

  /** `p`, or StoreUnavailable at the deadline: one promise and one timer per call, no race or async frame. */
  private raced<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        p.catch(() => {}); // the late answer, if any, is dropped
        reject(new StoreUnavailable(new Error(`no answer within ${this.opts.storeTimeoutMs} ms`)));
      }, this.opts.storeTimeoutMs);
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(new StoreUnavailable(e));
        },
      );
    });
  }

  /** The account's version: from the store's memory when it vouches for it (no deadline timer), else read. */
  private version(accountId: string): number | Promise<number> {
    return this.store.accountVersionKnown?.(accountId) ?? this.timed(this.store.accountVersion(accountId));
  }

  /** The cached entry (record and the account version it was read at), without asking the store (may be stale). */
  peekEntryByHash(hash: string): TokenEntry | undefined {
    return this.byHash.get(hash);
  }

  peekEntryById(id: number): TokenEntry | undefined {
    return this.byId.get(id);
  }

  /**
   * The cached entry for a token value hash when the store's in-process account version confirms
   * it current, without a wait; undefined when only a store read can tell. Counts nothing: the
   * caller counts the hit when it uses the entry.
   */
  entryByHashNow(hash: string): TokenEntry | undefined {
    const hit = this.byHash.get(hash);
    return hit !== undefined && this.knownCurrent(hit.token.accountId, hit.ver) ? hit : undefined;
  }

  /** Whether the store's in-process version of the account is `ver` (false when it keeps none in memory). */
  private knownCurrent(accountId: string, ver: number): boolean {
    return this.store.accountVersionKnown !== undefined && this.store.accountVersionKnown(accountId) === ver;
  }

  /** entryByHashNow for a token id (an issuer's policy token, a self-signed token's parent). */
  entryByIdNow(id: number): TokenEntry | undefined {
    const hit = this.byId.get(id);
    return hit !== undefined && this.knownCurrent(hit.token.accountId, hit.ver) ? hit : undefined;
  }

  /** The cached issuer claiming `sel` when the store's in-process account version confirms it current, without a wait. */
  issuerNow(sel: JwtSelector): IssuerEntry | undefined {
    const hit = this.issuers.get(keyOf(sel));
    return hit !== undefined && this.knownCurrent(hit.issuer.accountId, hit.ver) ? hit : undefined;
  }

  /** The current record for a token value hash (null: no such token). */
  async byHashFresh(hash: string): Promise<TokenRecord | null> {
    return (await this.entryByHash(hash))?.token ?? null;
  }

  /** The current record of a token id in any account (parents of self-signed JWTs). */
  async byIdFresh(id: number): Promise<TokenRecord | null> {
    return (await this.entryById(id))?.token ?? null;
  }

  /** The current record for a token value hash with the account version it is current at (null: no such token). */
  entryByHash(hash: string): Promise<TokenEntry | null> {
    // A refresh gives the token a new value: a record whose value moved on no longer answers to this hash.
    return this.current(this.byHash, hash, () => this.store.findTokenByHash(hash), (found, now) => now.token === found.token);
  }

  entryById(id: number): Promise<TokenEntry | null> {
    return this.current(this.byId, id, () => this.store.findTokenById(id), () => true);
  }

  /** A cached entry if the account version says it is current; else the store's record, cached. */
  private async current<K extends string | number>(
    cache: LRUCache<K, TokenEntry>,
    key: K,
    find: () => Promise<TokenRecord | null>,
    stillAnswers: (found: TokenRecord, now: TokenRecord) => boolean,
  ): Promise<TokenEntry | null> {
    const hit = cache.get(key);
    if (hit && (await this.version(hit.token.accountId)) === hit.ver) {
      this.stats.hits++;
      return hit;
    }
    this.stats.misses++;
    // Single flight: a burst of first uses of one token shares one load instead of stampeding the
    // store. Only the request that started the load may take it unchecked: a joiner may have
    // checked after a write the load did not see, so it compares versions first.
    const flightKey = `${typeof key}:${key}`;
    const running = this.inFlight.get(flightKey);
    if (running) {
      const entry = await running;
      if (!entry) return null;
      if ((await this.version(entry.token.accountId)) === entry.ver) return entry;
    }
    const flight = (async (): Promise<TokenEntry | null> => {
      const found = hit?.token ?? (await this.timed(find()));
      const entry = found ? await this.load(found) : null;
      if (!found || !entry || !stillAnswers(found, entry.token)) {
        cache.delete(key);
        return null;
      }
      cache.set(key, entry);
      return entry;
    })();
    if (!running) {
      this.inFlight.set(flightKey, flight);
      void flight.finally(() => this.inFlight.delete(flightKey)).catch(() => {});
    }
    return flight;
  }

  /** The cached issuer claiming a JWT with `sel`, without asking the store (may be stale). */
  peekIssuer(sel: JwtSelector): IssuerEntry | undefined {
    return this.issuers.get(keyOf(sel));
  }

  /**
   * The issuer claiming a JWT with `sel` (src/domain/issuers.ts selectIssuer), current by its
   * account's version, else null. No two issuers of the deployment claim one selector, so a cached
   * issuer whose account version has not moved is still the one: any write of it (or its
   * deletion, which frees its selector for another account) moves that version. A selector no
   * issuer claims costs one indexed store read, as an unknown token value does; it is not cached,
   * so an issuer created on another instance is used at once.
   */
  async issuerEntry(sel: JwtSelector): Promise<IssuerEntry | null> {
    const key = keyOf(sel);
    const hit = this.issuers.get(key);
    if (hit && (await this.version(hit.issuer.accountId)) === hit.ver) return hit;
    const found = selectIssuer(await this.timed(this.store.issuersOf(sel.iss)), sel);
    // version first, then the record (as for tokens): an entry is never newer-versioned than its content
    const ver = found && (await this.version(found.accountId));
    const issuer = found && (await this.timed(this.store.getIssuer(found.accountId, found.id)));
    if (!issuer || selectIssuer([issuer], sel) !== issuer) {
      this.issuers.delete(key);
      return null;
    }
    const entry = { issuer, ver: ver as number };
    this.issuers.set(key, entry);
    return entry;
  }

  /**
   * What the account's active issuers take from an HTTP request (docs/api.md#credential-issuers):
   * the cookie names of its JWT issuers and its signed-URL issuers, current by the account version:
   * read once per version, without a wait while the store's memory vouches for the version.
   */
  accountIssuers(accountId: string): AccountIssuers | Promise<AccountIssuers> {
    const hit = this.accountIssuerSets.get(accountId);
    const known = this.store.accountVersionKnown?.(accountId);
    if (hit !== undefined && known === hit.ver) return hit;
    return (async () => {
      const ver = known ?? (await this.version(accountId));
      if (hit !== undefined && hit.ver === ver) return hit;
      const active = (await this.timed(this.store.listIssuers(accountId))).filter((i) => i.isActive);
      const entry = {
        ver,
        cookieNames: [...new Set(active.filter((i) => i.type === 'jwt' && i.cookieName !== null).map((i) => i.cookieName!))],
        signed: active.filter((i) => i.type !== 'jwt' && i.settings !== null),
      };
      this.accountIssuerSets.set(accountId, entry);
      return entry;
    })();
  }

  /** accountIssuers from memory alone: the set when the store's in-process account version confirms it, else undefined. */
  accountIssuersNow(accountId: string): AccountIssuers | undefined {
    const hit = this.accountIssuerSets.get(accountId);
    return hit !== undefined && this.store.accountVersionKnown?.(accountId) === hit.ver ? hit : undefined;
  }

  /** The cookie names the account's active JWT issuers take credentials from (accountIssuers). */
  issuerCookieNames(accountId: string): readonly string[] | Promise<readonly string[]> {
    const a = this.accountIssuers(accountId);
    return a instanceof Promise ? a.then((x) => x.cookieNames) : a.cookieNames;
  }

  /** Version first, then the record: an entry is never newer-versioned than its content. */
  private async load(t: TokenRecord): Promise<TokenEntry | null> {
    const ver = await this.version(t.accountId);
    const token = await this.timed(this.store.getToken(t.accountId, t.kind, t.id));
    return token ? { token, ver } : null;
  }

  /** Drops what is cached of a token (after the store said our copy is stale). */
  forget(t: TokenRecord, hash?: string): void {
    if (hash) this.byHash.delete(hash);
    this.byId.delete(t.id);
  }

  /** Whether viewing `streamName` of the account needs a subscribe token. */
  async secured(accountId: string, streamName: string): Promise<boolean> {
    return securedBy(await this.account(accountId), streamName);
  }

  /** The account's current entry: one version read, and a load when the cached entry is older. */
  async account(accountId: string): Promise<AccountEntry> {
    const e = this.accounts.get(accountId, ALLOW_STALE);
    const ver = await this.version(accountId);
    if (e && e.ver === ver) {
      if (this.accounts.getRemainingTTL(accountId) <= 0) this.accounts.set(accountId, e);
      return e;
    }
    return this.loadAccountAt(accountId, ver);
  }

  /**
   * The account's entry when the cache holds it at `ver` (a version this decision already read,
   * with its token), else undefined: then loadAccountAt(accountId, ver) without a second read.
   */
  accountAt(accountId: string, ver: number): AccountEntry | undefined {
    const e = this.accounts.get(accountId, ALLOW_STALE);
    if (e === undefined || e.ver !== ver) return undefined;
    if (this.accounts.getRemainingTTL(accountId) <= 0) this.accounts.set(accountId, e);
    return e;
  }

  /**
   * Loads the account's entry for version `ver` (read by the caller before: the content is at least
   * that new). The caller waits under the store deadline; the load itself runs to its end and is
   * cached, whoever still waits for it.
   */
  loadAccountAt(accountId: string, ver: number): Promise<AccountEntry> {
    // Single flight per account version: a burst of token-less decisions on a cold cache loads
    // the securing tokens once. Without it, at 1M tokens (2,500 securing ones) 32 concurrent
    // loads overran the store deadline and answered 503s (seen in the benchmark's scale run).
    // The deadline is the waiting decision's, not the load's: a load cut off at the deadline was
    // never cached, so an account whose viewer-rule tokens take longer than the deadline to read
    // (50,000 of them at 10M tokens) was read again by every decision and never decided
    // (docs/decision-path.md#the-accounts-entry-at-a-new-version).
    const key = `${accountId}\u0000${ver}`;
    let load = this.accountLoads.get(key);
    if (!load) {
      load = this.loadAccount(accountId, ver);
      this.accountLoads.set(key, load);
      void load.finally(() => this.accountLoads.delete(key)).catch(() => {});
    }
    return this.timed(load);
  }

  private readonly accountLoads = new Map<string, Promise<AccountEntry>>();

  private async loadAccount(accountId: string, ver: number): Promise<AccountEntry> {
    // One read of the tokens that set viewer rules: securing ones and those with country lists.
    const [account, ruled, kept] = await Promise.all([this.store.getAccount(accountId), this.store.viewerRuleTokens(accountId), this.store.securedStreams(accountId)]);
    const exact = new Set<string>();
    const patterns = new Set<string>();
    // The viewer rules of deleted publish tokens stay (docs/api.md#secured-streams).
    const keptLists = new Map<number, SecuredStream[]>();
    for (const s of kept) {
      if (s.subscribeRequiresAuth) (s.isRegex ? patterns : exact).add(s.streamName);
      if (s.allowedCountries.length > 0 || s.deniedCountries.length > 0) keptLists.set(s.tokenId, [...(keptLists.get(s.tokenId) ?? []), s]);
    }
    const geoTokens: GeoToken[] = [];
    for (const t of ruled) {
      if (securesViewing(t)) for (const s of t.streams) (s.isRegex ? patterns : exact).add(s.streamName);
      if (restrictsViewerCountries(t)) {
        const source = `publish token ${t.id}`;
        geoTokens.push({ token: t, alone: { source, lists: [{ allowed: t.allowedCountries, denied: t.deniedCountries, source }] } });
      }
    }
    for (const entries of keptLists.values()) {
      const t = keptCountryToken(accountId, entries, ver);
      if (t === undefined) continue;
      const source = `deleted publish token ${t.id}`;
      geoTokens.push({ token: t, alone: { source, lists: [{ allowed: t.allowedCountries, denied: t.deniedCountries, source }] } });
    }
    geoTokens.sort((a, b) => a.token.id - b.token.id);
    const allowed = account?.allowedCountries ?? [];
    const denied = account?.deniedCountries ?? [];
    const defaults: ViewerCountries | undefined =
      allowed.length > 0 || denied.length > 0 ? { source: 'account default', lists: [{ allowed, denied, source: 'account default' }] } : undefined;
    // The account's matcher outlives its versions: a write recompiles only the patterns it changed,
    // in the background; until they are compiled the account's token-less viewers are refused.
    const compiled = this.accounts.get(accountId, ALLOW_STALE)?.patterns ?? new SecuringPatterns();
    const e: AccountEntry = {
      id: accountId,
      ver,
      exists: account !== null,
      secureViewer: account?.secureViewer ?? false,
      exact,
      patterns: compiled,
      gen: compiled.want(patterns),
      answers: new Map(),
      geo:
        defaults === undefined && geoTokens.length === 0
          ? undefined
          : { defaults, tokens: geoTokens, byId: new Map(geoTokens.map((g) => [g.token.id, g])), byStream: new Map() },
      ipRulesOnRtmp: account?.ipRulesOnRtmp !== false,
      defaultCluster: account?.defaultCluster,
    };
    this.accounts.set(accountId, e);
    return e;
  }

  /** From the cache only (store unreachable): unknown accounts count as secured. */
  securedCached(accountId: string, streamName: string): boolean {
    const e = this.accounts.get(accountId);
    return e ? securedBy(e, streamName) : true;
  }

  /** The account entry this instance holds, within its ttl (store unreachable). */
  cachedAccount(accountId: string): AccountEntry | undefined {
    return this.accounts.get(accountId);
  }

  /**
   * The country lists the viewers of `streamName` are held to unless their own token sets some
   * (docs/api.md#country): the publishing token's while the stream is live; else
   * those of every publish token with lists (active or not) whose streams match (each must pass); else the
   * account's defaults. Synchronous when this version of the entry already knows the answer (a
   * promise only when the live registry must be read, once per stream and version).
   */
  viewerCountries(e: AccountEntry, streamName: string, now: number): ViewerCountries | undefined | Promise<ViewerCountries | undefined> {
    const g = e.geo;
    if (g === undefined) return undefined;
    const known = g.byStream.get(streamName);
    if (known !== undefined && now < known.until) return known.value;
    const matching = this.matchingGeoTokens(g, streamName);
    // No publish token with lists covers the name: whoever publishes it, the defaults apply.
    if (matching.length === 0) return remember(g, streamName, g.defaults, Infinity);
    return this.liveStream(e, streamName).then((live) => this.countriesGiven(g, streamName, matching, live));
  }

  /** viewerCountries from what this version already holds, without the store; null when it would need the store. */
  viewerCountriesCached(e: AccountEntry, streamName: string, now: number): ViewerCountries | undefined | null {
    const g = e.geo;
    if (g === undefined) return undefined;
    const known = g.byStream.get(streamName);
    if (known !== undefined && now < known.until) return known.value;
    return this.matchingGeoTokens(g, streamName).length === 0 ? g.defaults : null;
  }

  private matchingGeoTokens(g: AccountGeo, streamName: string): GeoToken[] {
    return g.tokens.filter((t) => this.rulesOf(t.token).streams(streamName));
  }

  private countriesGiven(g: AccountGeo, streamName: string, matching: GeoToken[], live: LiveStream | null): ViewerCountries | undefined {
    if (live !== null && live.tokenId > 0) {
      // Live: its publishing token's lists, or the defaults when that token sets none.
      const started = Date.parse(live.startedOn);
      const until = this.liveTtlMs > 0 && Number.isFinite(started) ? started + this.liveTtlMs : Infinity;
      return remember(g, streamName, g.byId.get(live.tokenId)?.alone ?? g.defaults, until);
    }
    if (matching.length === 1) return remember(g, streamName, matching[0].alone, Infinity);
    const value: ViewerCountries = {
      source: `publish tokens ${matching.map((t) => t.token.id).join(', ')}`,
      lists: matching.map((t) => t.alone.lists[0]),
    };
    return remember(g, streamName, value, Infinity);
  }

  private get liveTtlMs(): number {
    return (this.opts.liveTtlSeconds ?? 0) * 1000;
  }

  private readonly liveLoads = new Map<string, Promise<LiveStream | null>>();

  /** The stream's live entry, read once per stream and account version however many decisions ask at once. */
  private liveStream(e: AccountEntry, streamName: string): Promise<LiveStream | null> {
    const key = `${e.id}\u0000${e.ver}\u0000${streamName}`;
    let load = this.liveLoads.get(key);
    if (!load) {
      load = this.timed(this.store.getLiveStream(e.id, streamName));
      this.liveLoads.set(key, load);
      void load.finally(() => this.liveLoads.delete(key)).catch(() => {});
    }
    return load;
  }

  rulesOf = (t: TokenRecord): CompiledRules => {
    const had = this.compiled.get(t.id);
    if (had?.rev === t.rev) return had.rules;
    // One entry per token: an older revision's matcher is dropped, not kept beside the new one,
    // and a revision that did not touch the streams (a label, an expiry) reuses the matcher.
    const streamsKey = JSON.stringify(t.streams);
    const rules = compileRules(t, had?.streamsKey === streamsKey ? had.rules.streams : undefined);
    this.compiled.set(t.id, { rev: t.rev, streamsKey, rules });
    return rules;
  };
}

/** How many securing patterns the account cache keeps compiled across all accounts. */
const ACCOUNT_PATTERN_BUDGET = 20_000;

function remember(g: AccountGeo, streamName: string, value: ViewerCountries | undefined, until: number): ViewerCountries | undefined {
  if (g.byStream.size >= ANSWERS_PER_ACCOUNT) g.byStream.clear();
  g.byStream.set(streamName, { value, until });
  return value;
}

/**
 * An unknown account has no open streams, and an account whose patterns are still compiling has
 * none yet: fail closed. Otherwise one Set lookup, then at most one RE2 test per chunk.
 */
export function securedBy(e: AccountEntry, streamName: string): boolean {
  if (!e.exists || e.secureViewer || e.exact.has(streamName)) return true;
  if (!e.patterns.isReady(e.gen)) return true;
  let answer = e.answers.get(streamName);
  if (answer === undefined) {
    answer = e.patterns.matches(streamName);
    if (e.answers.size >= ANSWERS_PER_ACCOUNT) e.answers.clear();
    e.answers.set(streamName, answer);
  }
  return answer;
}
