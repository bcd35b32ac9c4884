// The decision history's recorder (docs/api.md#decision-history): the decision path asks `wants`
// (sampling and each account's rates, no allocation) and hands the kept decisions to `push`; they
// are written in batches by a timer, never awaited by a decision. The queue is bounded: under
// overload a decision is dropped and counted, and nothing waits.
import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { maskAddresses, truncateAddress, type DecisionEntry, type DecisionPage, type DecisionQuery } from './entry.js';
import type { HistorySink, Retention } from './sink.js';

/** What history.* says a sink keeps. */
export const retentionOf = (cfg: Config['history']): Retention => ({ maxPerAccount: cfg.maxPerAccount, maxAgeSeconds: cfg.maxAgeSeconds, addressSeconds: cfg.addressSeconds });

/** A token bucket: `n` decisions may be kept now, refilled at the configured rate. */
interface Bucket {
  refusals: number;
  allows: number;
  at: number;
}

/** How often retention runs (age, count per account, addresses). */
const PRUNE_MS = 60_000;
/** How often the history looks for accounts that no longer exist, whose entries go with them. */
export const GONE_SWEEP_MS = 3_600_000;
/** Accounts whose rates are tracked at once (the least recent forgotten: they start full again). */
const ACCOUNTS_TRACKED = 10_000;
/** How long an account's existence, as the store answered, is believed before a write asks again. */
const EXISTS_MS = 60_000;
/** Store reads at shutdown for accounts not known to exist; the entries of any more are written unchecked. */
export const CLOSE_LOOKUPS = 100;

/**
 * What became of the decisions offered, one outcome each: kept (written), unchecked (written though
 * the store did not say whether its account exists), rate, queue, failed (the sink refused the
 * batch), no_account (an account that does not exist).
 */
export type HistoryTallies = Record<'kept' | 'unchecked' | 'rate' | 'queue' | 'failed' | 'no_account', number>;

export class DecisionHistory {
  private queue: DecisionEntry[] = [];
  private writing: Promise<void> | undefined;
  private soon = false;
  /** Set by close(): nothing more is queued, and the last writes ask the store little (CLOSE_LOOKUPS). */
  private closed = false;
  /**
   * The rates of the accounts known to exist (a decision resolved one of their tokens, or a write
   * found them in the store), and of no other: a made-up id never gets one, nor evicts one.
   */
  private readonly buckets = new LRUCache<string, Bucket>({ max: ACCOUNTS_TRACKED });
  /** The one bucket of every account not known to exist yet (see wants). */
  private readonly unverified: Bucket;
  /** Whether an account exists, as the store answered within EXISTS_MS: entries of an account that does not are never written. */
  private readonly exists: LRUCache<string, boolean>;
  private closeLookups = 0;
  readonly tallies: HistoryTallies = { kept: 0, unchecked: 0, rate: 0, queue: 0, failed: 0, no_account: 0 };
  private readonly flushTimer: NodeJS.Timeout;
  private readonly pruneTimer: NodeJS.Timeout;
  private readonly goneTimer: NodeJS.Timeout;

  constructor(
    private readonly cfg: Config['history'],
    private readonly sink: HistorySink,
    private readonly accountExists: (id: string) => Promise<boolean>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.unverified = this.fullBucket(now());
    this.exists = new LRUCache<string, boolean>({ max: ACCOUNTS_TRACKED, ttl: EXISTS_MS, ttlResolution: 0, perf: { now } });
    this.flushTimer = setInterval(() => void this.flush(), cfg.flushMs);
    this.flushTimer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_MS);
    this.pruneTimer.unref();
    this.goneTimer = setInterval(() => void this.sweepGone(), GONE_SWEEP_MS);
    this.goneTimer.unref();
  }

  /**
   * Whether a decision of `accountId` is kept: an allow at history.allowSampleRate, then the
   * account's rate (refusals and allows apart), then room in the queue. Counts what it drops.
   * `vouched`: the decision itself shows the account exists (it resolved one of its tokens). An
   * account not known to exist yet — any id a request names — shares one bucket with every other
   * such account until a write finds it in the store, so made-up ids cannot crowd out real
   * accounts' rates or cost more than that one bucket's rate; one known not to exist keeps nothing.
   * An account keeps its own bucket once known (until the LRU forgets it, or a write finds it gone).
   */
  wants(allowed: boolean, accountId: string, vouched = false): boolean {
    if (allowed && (this.cfg.allowSampleRate === 0 || Math.random() >= this.cfg.allowSampleRate)) return false;
    const now = this.now();
    // an account with a bucket is known to exist: one lookup, as every decision of a known account pays
    let b = this.buckets.get(accountId);
    if (b === undefined) {
      let known = this.exists.get(accountId);
      if (vouched && known !== true) {
        this.exists.set(accountId, true);
        known = true;
      }
      if (known === false) {
        this.tallies.no_account++;
        return false;
      }
      if (known === true) {
        b = this.fullBucket(now);
        this.buckets.set(accountId, b);
      } else b = this.unverified;
    }
    if (now > b.at) {
      const s = (now - b.at) / 1000;
      b.refusals = Math.min(Math.max(1, this.cfg.refusalsPerSecond * 10), b.refusals + s * this.cfg.refusalsPerSecond);
      b.allows = Math.min(Math.max(1, this.cfg.allowsPerSecond * 10), b.allows + s * this.cfg.allowsPerSecond);
      b.at = now;
    } else if (now < b.at) {
      // the clock stepped back: no time elapsed, and the refill counts from now on
      b.at = now;
    }
    const left = allowed ? b.allows : b.refusals;
    if (left < 1 || (allowed ? this.cfg.allowsPerSecond : this.cfg.refusalsPerSecond) === 0) {
      this.tallies.rate++;
      return false;
    }
    if (this.queue.length >= this.cfg.queueMax) {
      this.tallies.queue++;
      return false;
    }
    if (allowed) b.allows -= 1;
    else b.refusals -= 1;
    return true;
  }

  private fullBucket(at: number): Bucket {
    return { refusals: Math.max(1, this.cfg.refusalsPerSecond * 10), allows: Math.max(1, this.cfg.allowsPerSecond * 10), at };
  }

  /** Queues a kept decision (after `wants` said yes); a full batch is written on the next turn. */
  push(e: DecisionEntry): void {
    if (this.closed) return;
    if (e.clientIp !== undefined) {
      if (this.cfg.addressSeconds === 0) e.clientIp = undefined;
      else if (this.cfg.ipv4Prefix < 32 || this.cfg.ipv6Prefix < 128) e.clientIp = truncateAddress(e.clientIp, this.cfg.ipv4Prefix, this.cfg.ipv6Prefix);
    }
    // an address lives in clientIp alone (truncated, expiring), never in a detail
    if (e.detail !== undefined) e.detail = maskAddresses(e.detail);
    for (let i = 0; i < e.rules.length; i++) {
      const d = e.rules[i].detail;
      if (d !== undefined) {
        const masked = maskAddresses(d);
        if (masked !== d) e.rules[i] = Object.assign({}, e.rules[i], { detail: masked });
      }
    }
    this.queue.push(e);
    if (this.queue.length >= this.cfg.batchSize && !this.soon) {
      this.soon = true;
      setImmediate(() => {
        this.soon = false;
        void this.flush();
      });
    }
  }

  /** Writes what is queued, a batch at a time; one write at a time (a caller waits for the one running). */
  flush(): Promise<void> {
    if (this.writing !== undefined) return this.writing;
    if (this.queue.length === 0) return Promise.resolve();
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.cfg.batchSize);
      const kept: DecisionEntry[] = [];
      let unchecked = 0;
      for (const e of batch) {
        const known = await this.known(e.accountId);
        if (known === false) {
          this.tallies.no_account++;
          continue;
        }
        // an account the store did not answer for is kept, and counted (the hourly sweep removes it if it never existed)
        if (known === undefined) unchecked++;
        kept.push(e);
      }
      if (kept.length === 0) continue;
      try {
        await this.sink.append(kept);
        this.tallies.kept += kept.length - unchecked;
        this.tallies.unchecked += unchecked;
      } catch (err) {
        this.tallies.failed += kept.length;
        this.logger.warn({ err: (err as Error).message, dropped: kept.length }, 'decision history: a batch was not written');
      }
      // a batch at a time: the event loop serves requests between batches (SQLite writes in process)
      if (this.queue.length > 0) await setImmediate();
    }
  }

  /**
   * Whether the account exists: true, false, or undefined when the store did not answer. Asks the
   * store once per account every EXISTS_MS; a found account gets its own bucket, a gone one loses
   * it. While closing, an account with a bucket is taken as existing (no store read), and at most
   * CLOSE_LOOKUPS others are asked: shutdown never waits on a read per account.
   */
  private async known(accountId: string): Promise<boolean | undefined> {
    const k = this.exists.get(accountId);
    if (k !== undefined) return k;
    if (this.closed) {
      if (this.buckets.has(accountId)) return true;
      if (this.closeLookups >= CLOSE_LOOKUPS) return undefined;
      this.closeLookups++;
    }
    let found: boolean;
    try {
      found = await this.accountExists(accountId);
    } catch {
      return undefined;
    }
    this.exists.set(accountId, found);
    if (!found) this.buckets.delete(accountId);
    else if (!this.buckets.has(accountId)) this.buckets.set(accountId, this.fullBucket(this.now()));
    return found;
  }

  /** One account's kept decisions matching `q`, newest first; what is still queued is written first. */
  async query(accountId: string, q: DecisionQuery): Promise<DecisionPage> {
    await this.flush();
    return this.sink.query(accountId, q);
  }

  async prune(): Promise<void> {
    try {
      await this.sink.prune(this.now());
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'decision history: retention did not run');
    }
  }

  /**
   * The entries of accounts that no longer exist go with them (docs/api.md#decision-history). Reads
   * each account's existence from the store afresh; an account the store cannot answer for is kept.
   */
  async sweepGone(): Promise<void> {
    try {
      for (const accountId of await this.sink.accounts()) {
        let exists: boolean;
        try {
          exists = await this.accountExists(accountId);
        } catch {
          continue;
        }
        this.exists.set(accountId, exists);
        if (!exists) {
          this.buckets.delete(accountId);
          await this.erase(accountId);
        }
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'decision history: the sweep of deleted accounts did not run');
    }
  }

  /** Erases what was kept of an account, its queued entries included (an erasure request; the account's deletion). */
  async erase(accountId: string): Promise<void> {
    this.queue = this.queue.filter((e) => e.accountId !== accountId);
    await this.flush();
    await this.sink.deleteAccount(accountId, this.now());
  }

  /**
   * Stops the timers and writes what is queued (shutdown): decisions made from now on are not
   * kept, and the existence of the queued entries' accounts costs at most CLOSE_LOOKUPS store reads.
   */
  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.pruneTimer);
    clearInterval(this.goneTimer);
    this.closed = true;
    while (this.writing !== undefined || this.queue.length > 0) await this.flush();
    await this.sink.close();
  }
}
