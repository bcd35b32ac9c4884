// Token and account lookups for decisions, through bounded caches that are checked against the
// store's account version (one small read) before they are trusted, so a revoked token is denied
// on every instance at its next decision. Store calls here never wait longer than storeTimeoutMs.
import { LRUCache } from 'lru-cache';
import type { TokenRecord } from '../domain/tokens.js';
import type { Store } from '../store/store.js';
import { compileRules, type CompiledRules } from '../policy/rules.js';
import { SecuringPatterns } from './securing-patterns.js';

export class StoreUnavailable extends Error {
  constructor(cause: unknown) {
    super(`store unavailable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

interface TokenEntry {
  token: TokenRecord;
  /** The account version read before the record: the entry is current while the version is. */
  ver: number;
}

interface AccountEntry {
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
}

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
  }

  /** Runs a store call with the decision-path deadline; any failure becomes StoreUnavailable. */
  async timed<T>(p: Promise<T>): Promise<T> {
    if (this.store.inProcess) {
      // The work is done before the promise exists: a timer could not interrupt it, and arming
      // one per call is measurable on the decision path (issue 8).
      try {
        return await p;
      } catch (e) {
        throw new StoreUnavailable(e);
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.opts.storeTimeoutMs} ms`)), this.opts.storeTimeoutMs);
    });
    try {
      return await Promise.race([p, deadline]);
    } catch (e) {
      p.catch(() => {}); // the late answer, if any, is dropped
      throw new StoreUnavailable(e);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The cached record for a token value hash, without asking the store (may be stale). */
  peekByHash(hash: string): TokenRecord | undefined {
    return this.byHash.get(hash)?.token;
  }

  peekById(id: number): TokenRecord | undefined {
    return this.byId.get(id)?.token;
  }

  /** The current record for a token value hash (null: no such token). */
  byHashFresh(hash: string): Promise<TokenRecord | null> {
    // A refresh gives the token a new value: a record whose value moved on no longer answers to this hash.
    return this.current(this.byHash, hash, () => this.store.findTokenByHash(hash), (found, now) => now.token === found.token);
  }

  /** The current record of a token id in any account (parents of self-signed JWTs). */
  byIdFresh(id: number): Promise<TokenRecord | null> {
    return this.current(this.byId, id, () => this.store.findTokenById(id), () => true);
  }

  /** A cached entry if the account version says it is current; else the store's record, cached. */
  private async current<K extends string | number>(
    cache: LRUCache<K, TokenEntry>,
    key: K,
    find: () => Promise<TokenRecord | null>,
    stillAnswers: (found: TokenRecord, now: TokenRecord) => boolean,
  ): Promise<TokenRecord | null> {
    const hit = cache.get(key);
    if (hit && (await this.timed(this.store.accountVersion(hit.token.accountId))) === hit.ver) {
      this.stats.hits++;
      return hit.token;
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
      if ((await this.timed(this.store.accountVersion(entry.token.accountId))) === entry.ver) return entry.token;
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
    return (await flight)?.token ?? null;
  }

  /** Version first, then the record: an entry is never newer-versioned than its content. */
  private async load(t: TokenRecord): Promise<TokenEntry | null> {
    const ver = await this.timed(this.store.accountVersion(t.accountId));
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
    let e = this.accounts.get(accountId, { allowStale: true });
    const ver = await this.timed(this.store.accountVersion(accountId));
    if (e && e.ver === ver && this.accounts.getRemainingTTL(accountId) <= 0) this.accounts.set(accountId, e);
    if (!e || e.ver !== ver) {
      // Single flight per account version: a burst of token-less decisions on a cold cache loads
      // the securing tokens once. Without it, at 1M tokens (2,500 securing ones) 32 concurrent
      // loads overran the store deadline and answered 503s (seen in the benchmark's scale run).
      const key = `${accountId}\u0000${ver}`;
      let load = this.accountLoads.get(key);
      if (!load) {
        load = this.loadAccount(accountId, ver);
        this.accountLoads.set(key, load);
        void load.finally(() => this.accountLoads.delete(key)).catch(() => {});
      }
      e = await load;
    }
    return securedBy(e, streamName);
  }

  private readonly accountLoads = new Map<string, Promise<AccountEntry>>();

  private async loadAccount(accountId: string, ver: number): Promise<AccountEntry> {
    const [account, securing] = await Promise.all([
      this.timed(this.store.getAccount(accountId)),
      this.timed(this.store.securingTokens(accountId)),
    ]);
    const exact = new Set<string>();
    const patterns = new Set<string>();
    for (const t of securing) for (const s of t.streams) (s.isRegex ? patterns : exact).add(s.streamName);
    // The account's matcher outlives its versions: a write recompiles only the patterns it changed,
    // in the background; until they are compiled the account's token-less viewers are refused.
    const compiled = this.accounts.get(accountId, { allowStale: true })?.patterns ?? new SecuringPatterns();
    const e: AccountEntry = {
      ver,
      exists: account !== null,
      secureViewer: account?.secureViewer ?? false,
      exact,
      patterns: compiled,
      gen: compiled.want(patterns),
      answers: new Map(),
    };
    this.accounts.set(accountId, e);
    return e;
  }

  /** From the cache only (store unreachable): unknown accounts count as secured. */
  securedCached(accountId: string, streamName: string): boolean {
    const e = this.accounts.get(accountId);
    return e ? securedBy(e, streamName) : true;
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

/**
 * An unknown account has no open streams, and an account whose patterns are still compiling has
 * none yet: fail closed. Otherwise one Set lookup, then at most one RE2 test per chunk.
 */
function securedBy(e: AccountEntry, streamName: string): boolean {
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
