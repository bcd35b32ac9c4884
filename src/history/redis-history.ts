// The decision history on Redis (docs/api.md#decision-history): a stream per account, capped by
// MAXLEN, in the account's slot. Stream entries cannot be
// edited, so client addresses live beside them in hashes per time bucket that expire once their
// addresses are history.addressSeconds old. Every instance writes and reads the same streams.
import type { RedisClient } from '../store/redis/connect.js';
import { keys } from '../store/redis/keys.js';
import { decisionIdTime, HistoryCursorInvalid, type DecisionEntry, type DecisionPage, type DecisionQuery } from './entry.js';
import { ERASURE_HELD_MS, type HistorySink, type Retention } from './sink.js';

/** Stream entries read per XREVRANGE. */
const PAGE = 500;

/** Entries one query reads at most before answering with a cursor (filters that match little). */
const SCAN_BUDGET = 20_000;
/** A stream id is the write's time, up to a flush (and clock skew) after the decision's: a range by decision time is widened by this. */
const WRITE_LAG_MS = 300_000;
/** How far Redis's clock (the stream ids) may run behind an instance's (the decisions' times). */
const CLOCK_SKEW_MS = 60_000;

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
    // an erasure on any instance holds back what instances had queued before it (keys.historyErased)
    const accountIds = [...byAccount.keys()];
    const erased = await Promise.all(accountIds.map((a) => this.redis.get(keys.historyErased(a))));
    for (let i = 0; i < accountIds.length; i++) {
      const at = erased[i] === null ? undefined : Number(erased[i]);
      if (at !== undefined) byAccount.set(accountIds[i], byAccount.get(accountIds[i])!.filter((e) => e.at > at));
    }
    for (const [accountId, entries] of byAccount) {
      if (entries.length === 0) continue;
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
    if (q.decisionId !== undefined) return this.byId(accountId, q);
    const stream = keys.history(accountId);
    const { from, to } = q;
    let high = to === undefined ? '+' : String(Math.min(Number.MAX_SAFE_INTEGER, to + WRITE_LAG_MS));
    if (q.cursor !== undefined) {
      if (!/^\d+-\d+$/.test(q.cursor)) throw new HistoryCursorInvalid();
      high = `(${q.cursor}`;
    }
    const low = from === undefined ? '-' : String(Math.max(0, from - CLOCK_SKEW_MS));
    const items: DecisionEntry[] = [];
    let scanned = 0;
    let last: string | undefined;
    while (scanned < SCAN_BUDGET) {
      const page = (await this.redis.xrevrange(stream, high, low, 'COUNT', PAGE)) as StreamEntry[];
      if (page.length === 0) return { items };
      scanned += page.length;
      // the filters an entry answers alone first; addresses only for those that pass
      const candidates: Array<{ id: string; e: DecisionEntry }> = [];
      for (const [id, f] of page) {
        const e = JSON.parse(f[1]) as DecisionEntry;
        if (matches(e, q)) candidates.push({ id, e });
      }
      await this.withAddresses(
        accountId,
        candidates.map((c) => c.e),
      );
      for (const c of candidates) {
        if (q.clientIp !== undefined && c.e.clientIp !== q.clientIp) continue;
        items.push(c.e);
        if (items.length === q.limit) {
          const end = c.id === page[page.length - 1][0] && page.length < PAGE;
          return end ? { items } : { items, next: c.id };
        }
      }
      last = page[page.length - 1][0];
      if (page.length < PAGE) return { items };
      high = `(${last}`;
    }
    return { items, next: last };
  }

  /**
   * One entry by its id: a version 7 id carries its decision's millisecond, and the entry was
   * written at most a flush (and the clocks' skew) later, so the stream is read forward from just
   * before that time. An id of another kind was never kept.
   */
  private async byId(accountId: string, q: DecisionQuery): Promise<DecisionPage> {
    const t = decisionIdTime(q.decisionId!);
    if (t === undefined) return { items: [] };
    const stream = keys.history(accountId);
    let low = String(Math.max(0, t - CLOCK_SKEW_MS));
    const high = String(t + WRITE_LAG_MS);
    for (let scanned = 0; scanned < SCAN_BUDGET; ) {
      const page = (await this.redis.xrange(stream, low, high, 'COUNT', PAGE)) as StreamEntry[];
      scanned += page.length;
      for (const [, f] of page) {
        const e = JSON.parse(f[1]) as DecisionEntry;
        if (e.decisionId !== q.decisionId) continue;
        await this.withAddresses(accountId, [e]);
        return { items: matches(e, q) && (q.clientIp === undefined || e.clientIp === q.clientIp) ? [e] : [] };
      }
      if (page.length < PAGE) break;
      low = `(${page[page.length - 1][0]}`;
    }
    return { items: [] };
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

  async accounts(): Promise<string[]> {
    return this.redis.smembers(keys.historyAccounts);
  }

  async deleteAccount(accountId: string, now: number): Promise<void> {
    // first: entries made until now and still queued on any instance are not written after it (append)
    await this.redis.set(keys.historyErased(accountId), String(now), 'PX', ERASURE_HELD_MS);
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

/** The filters an entry answers without its address (clientIp is matched once the address is read). */
function matches(e: DecisionEntry, q: DecisionQuery): boolean {
  if (q.decisionId !== undefined && e.decisionId !== q.decisionId) return false;
  if (q.tokenId !== undefined && e.tokenId !== q.tokenId) return false;
  if (q.streamName !== undefined && e.streamName !== q.streamName) return false;
  if (q.reason !== undefined && e.reason !== q.reason) return false;
  if (q.allowed !== undefined && e.allowed !== q.allowed) return false;
  if (q.from !== undefined && e.at < q.from) return false;
  if (q.to !== undefined && e.at >= q.to) return false;
  return true;
}
