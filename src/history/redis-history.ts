// The decision history on Redis (docs/api.md#decision-history): a stream per account, capped by
// MAXLEN, in the account's slot. Stream entries cannot be
// edited, so client addresses live beside them in hashes per time bucket that expire once their
// addresses are history.addressSeconds old. Every instance writes and reads the same streams.
import type { RedisClient } from '../store/redis/connect.js';
import { keys } from '../store/redis/keys.js';
import { decisionIdTime, type DecisionEntry, type DecisionPage, type DecisionQuery } from './entry.js';
import type { HistorySink, Retention } from './sink.js';

/** Stream entries read per XREVRANGE. */
const PAGE = 500;
/** Entries one query reads at most before answering with a cursor (filters that match little). */
const SCAN_BUDGET = 20_000;
/** A stream id is the write's time, up to a flush (and clock skew) after the decision's: a range by decision time is widened by this. */
const WRITE_LAG_MS = 300_000;

/** The address buckets' width for a retention: an address outlives addressSeconds by at most one width. */
export const addressBucketMs = (addressSeconds: number): number => Math.min(3_600_000, Math.max(60_000, Math.floor((addressSeconds * 1000) / 24)));

type StreamEntry = [id: string, fields: string[]];

export class RedisHistory implements HistorySink {
  /** The address buckets' width (addressBucketMs). */
  private readonly width: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly r: Retention,
  ) {
    this.width = addressBucketMs(r.addressSeconds);
  }

  private bucketOf(at: number): number {
    return Math.floor(at / this.width);
  }

  async append(batch: readonly DecisionEntry[]): Promise<void> {
    const r = this.r;
    const byAccount = new Map<string, DecisionEntry[]>();
    for (const e of batch) {
      const list = byAccount.get(e.accountId);
      if (list === undefined) byAccount.set(e.accountId, [e]);
      else list.push(e);
    }
    const width = this.width;
    const writes: Array<Promise<unknown>> = [];
    for (const [accountId, entries] of byAccount) {
      // one pipeline per account: its keys share one Cluster slot
      const p = this.redis.pipeline();
      const stream = keys.history(accountId);
      const touched = new Set<number>();
      for (const e of entries) {
        const { clientIp, ...rest } = e;
        // exact MAXLEN: an account keeps no more than history.maxPerAccount
        p.xadd(stream, 'MAXLEN', String(r.maxPerAccount), '*', 'd', JSON.stringify(rest));
        if (clientIp !== undefined && r.addressSeconds > 0) {
          const bucket = this.bucketOf(e.at);
          p.hset(keys.historyAddresses(accountId, bucket), e.decisionId, clientIp);
          touched.add(bucket);
        }
      }
      for (const bucket of touched) p.pexpireat(keys.historyAddresses(accountId, bucket), (bucket + 1) * width + r.addressSeconds * 1000);
      writes.push(p.exec().then(failed));
    }
    writes.push(this.redis.sadd(keys.historyAccounts, ...byAccount.keys()));
    await Promise.all(writes);
  }

  async query(accountId: string, q: DecisionQuery): Promise<DecisionPage> {
    const stream = keys.history(accountId);
    let from = q.from;
    let to = q.to;
    if (q.decisionId !== undefined) {
      // a version 7 id carries its decision's time; another id was never kept
      const t = decisionIdTime(q.decisionId);
      if (t === undefined) return { items: [] };
      from = Math.max(from ?? 0, t);
      to = Math.min(to ?? Number.MAX_SAFE_INTEGER, t + 1);
    }
    let high = to === undefined ? '+' : String(Math.min(Number.MAX_SAFE_INTEGER, to + WRITE_LAG_MS));
    if (q.cursor !== undefined) {
      if (!/^\d+-\d+$/.test(q.cursor)) return { items: [] };
      high = `(${q.cursor}`;
    }
    const low = from === undefined ? '-' : String(Math.max(0, from - 1000));
    const items: DecisionEntry[] = [];
    let scanned = 0;
    let last: string | undefined;
    while (scanned < SCAN_BUDGET) {
      const page = (await this.redis.xrevrange(stream, high, low, 'COUNT', PAGE)) as StreamEntry[];
      if (page.length === 0) return { items };
      scanned += page.length;
      const entries = page.map(([, f]) => JSON.parse(f[1]) as DecisionEntry);
      await this.withAddresses(accountId, entries);
      for (let i = 0; i < page.length; i++) {
        last = page[i][0];
        const e = entries[i];
        if (!matches(e, q, from, to)) continue;
        items.push(e);
        if (items.length === q.limit) return i === page.length - 1 && page.length < PAGE ? { items } : { items, next: last };
      }
      if (page.length < PAGE) return { items };
      high = `(${last}`;
    }
    return { items, next: last };
  }

  /** Puts each entry's kept address back (the buckets its time falls in). */
  private async withAddresses(accountId: string, entries: DecisionEntry[]): Promise<void> {
    if (this.r.addressSeconds === 0) return;
    const p = this.redis.pipeline();
    for (const e of entries) p.hget(keys.historyAddresses(accountId, this.bucketOf(e.at)), e.decisionId);
    const replies = (await p.exec()) ?? [];
    for (let i = 0; i < entries.length; i++) {
      const [err, ip] = replies[i] ?? [null, null];
      if (err === null && typeof ip === 'string') entries[i].clientIp = ip;
    }
  }

  async prune(now: number): Promise<void> {
    const r = this.r;
    const accounts = await this.redis.smembers(keys.historyAccounts);
    for (const accountId of accounts) {
      const stream = keys.history(accountId);
      await this.redis.xtrim(stream, 'MINID', String(now - r.maxAgeSeconds * 1000));
      if ((await this.redis.exists(stream)) === 0) await this.redis.srem(keys.historyAccounts, accountId);
    }
  }

  async deleteAccount(accountId: string, now: number): Promise<void> {
    // every address bucket that can still exist: those of the last addressSeconds (and one width), in the account's slot
    const buckets: string[] = [keys.history(accountId)];
    const last = this.bucketOf(now + WRITE_LAG_MS);
    for (let b = this.bucketOf(now - this.r.addressSeconds * 1000 - this.width); b <= last; b++) buckets.push(keys.historyAddresses(accountId, b));
    for (let i = 0; i < buckets.length; i += 500) await this.redis.del(...buckets.slice(i, i + 500));
    await this.redis.srem(keys.historyAccounts, accountId);
  }

  async close(): Promise<void> {
    // the store owns the connection
  }
}

function failed(replies: Array<[Error | null, unknown]> | null): void {
  const e = replies?.find(([err]) => err !== null)?.[0];
  if (e) throw e;
}

function matches(e: DecisionEntry, q: DecisionQuery, from: number | undefined, to: number | undefined): boolean {
  if (q.decisionId !== undefined && e.decisionId !== q.decisionId) return false;
  if (q.tokenId !== undefined && e.tokenId !== q.tokenId) return false;
  if (q.streamName !== undefined && e.streamName !== q.streamName) return false;
  if (q.clientIp !== undefined && e.clientIp !== q.clientIp) return false;
  if (q.reason !== undefined && e.reason !== q.reason) return false;
  if (q.allowed !== undefined && e.allowed !== q.allowed) return false;
  if (from !== undefined && e.at < from) return false;
  if (to !== undefined && e.at >= to) return false;
  return true;
}
