// Audit chains on Redis (src/store/audit.ts): per account a zset of the entries' JSON scored by
// seq and a head hash, both in the account's slot ({a:<id>}), so the script of a change appends its
// entry in the same step (lua/includes/audit.lua). The HMAC key stays in Node: a sealed write reads
// the head, seals, and passes the entry with the head it read; a script that finds the head moved
// writes nothing (AUDIT_MOVED) and the write seals again on the new head, through the bounded
// compare-and-set loop of its aggregate (docs/architecture.md#the-audit-chain).
import type { AuditEntry, AuditHead, AuditSealer } from '../../domain/audit.js';
import { AUDIT_CLOCK_ALLOWANCE_MS, type AuditEnds, type AuditQuery, type AuditStore, type StoredAudit } from '../audit.js';
import { compareAndSet } from '../failures.js';
import { keys } from './keys.js';
import { Reply, codeOf, unexpectedReply } from './codes.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';

/** What a sealed write's script takes for its audit: the two keys, and the four arguments (lua/includes/audit.lua). */
export interface AuditArgs {
  keys: [log: string, head: string];
  argv: [expected: string, seq: string, entry: string, mac: string];
}

const NOT_AUDITED: AuditArgs['argv'] = ['', '', '', ''];

/** The account's head as stored, else null. */
export async function readHead(c: RedisConnection, accountId: string): Promise<AuditHead | null> {
  const [seq, mac] = await c.redis.hmget(keys.auditHead(accountId), 'seq', 'mac');
  return seq === null ? null : { seq: Number(seq), mac: mac ?? '' };
}

/**
 * Reads the account's head and seals (before, after) on it: the audit keys and arguments of one
 * attempt of a write. Without a sealer, the keys with arguments that write no entry. The first
 * entry of an account names it in the deployment's list of chains first (a hint, outside its slot).
 * `read`: the head as read before `before` was, by a write whose script checks only the head (so a
 * sealed write in between moves it and the attempt is sealed again on what that write left).
 */
export async function sealFor<T>(
  c: RedisConnection,
  accountId: string,
  seal: AuditSealer<T> | undefined,
  before: T | null,
  after: T | null,
  read?: AuditHead | null,
): Promise<AuditArgs> {
  const k: AuditArgs['keys'] = [keys.auditLog(accountId), keys.auditHead(accountId)];
  if (seal === undefined) return { keys: k, argv: NOT_AUDITED };
  const head = read === undefined ? await readHead(c, accountId) : read;
  if (head === null) await c.redis.sadd(keys.auditAccounts, accountId);
  const e = seal(before, after, head);
  if (e.accountId !== accountId || e.seq !== (head?.seq ?? 0) + 1) throw new Error(`audit: an entry sealed for ${e.accountId} #${e.seq} where ${accountId} #${(head?.seq ?? 0) + 1} was due`);
  return { keys: k, argv: [String(head?.seq ?? 0), String(e.seq), JSON.stringify(e), e.mac] };
}

/** The entries of a page of zset members, those whose text parses. */
const parsed = (texts: string[]): AuditEntry[] =>
  texts.flatMap((t) => {
    try {
      return [JSON.parse(t) as AuditEntry];
    } catch {
      return [];
    }
  });

/** Members read per round trip while a filtered list or a prune looks through a chain. */
const CHUNK = 500;

export class RedisAudit implements AuditStore {
  constructor(private readonly c: RedisConnection) {}

  async appendAudit(accountId: string, seal: AuditSealer<null>): Promise<AuditEntry> {
    return compareAndSet(`audit of ${accountId}`, MAX_CAS_ATTEMPTS, async () => {
      const a = await sealFor(this.c, accountId, seal, null, null);
      const reply = await this.c.run('auditAppend', ...a.keys, ...a.argv);
      if (codeOf(reply) === Reply.AUDIT_MOVED) return 'retry';
      if (codeOf(reply) !== Reply.DONE) throw unexpectedReply('audit-append', reply);
      await this.c.replicated();
      return { done: JSON.parse(a.argv[2]) as AuditEntry };
    });
  }

  /**
   * Pages through the zset by seq from the cursor, filtering here. The time range also stops the
   * walk, once an entry is past it by more than the clock allowance: seq order is the order the
   * entries were made in, by instances whose clocks may differ that much.
   */
  async listAudit(accountId: string, q: AuditQuery): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    let bound = q.cursor === undefined ? (q.ascending ? '-inf' : '+inf') : `(${q.cursor}`;
    for (;;) {
      const page = q.ascending
        ? await this.c.redis.zrangebyscore(keys.auditLog(accountId), bound, '+inf', 'WITHSCORES', 'LIMIT', 0, CHUNK)
        : await this.c.redis.zrevrangebyscore(keys.auditLog(accountId), bound, '-inf', 'WITHSCORES', 'LIMIT', 0, CHUNK);
      if (page.length === 0) return out;
      const texts: string[] = [];
      for (let i = 0; i < page.length; i += 2) texts.push(page[i]);
      for (const e of parsed(texts)) {
        const at = Date.parse(e.at);
        if (q.ascending ? q.to !== undefined && at >= q.to + AUDIT_CLOCK_ALLOWANCE_MS : q.from !== undefined && at < q.from - AUDIT_CLOCK_ALLOWANCE_MS) return out;
        if ((q.from !== undefined && at < q.from) || (q.to !== undefined && at >= q.to)) continue;
        if ((q.resource !== undefined && e.resource !== q.resource) || (q.actor !== undefined && e.actor !== q.actor)) continue;
        out.push(e);
        if (out.length >= q.limit) return out;
      }
      if (page.length < CHUNK * 2) return out;
      bound = `(${page[page.length - 1]}`;
    }
  }

  async auditEntries(accountId: string, after: number, limit: number): Promise<StoredAudit[]> {
    const key = keys.auditLog(accountId);
    const page = await this.c.redis.zrangebyscore(key, `(${after}`, '+inf', 'WITHSCORES', 'LIMIT', 0, limit);
    const out: StoredAudit[] = [];
    for (let i = 0; i < page.length; i += 2) out.push({ pos: Number(page[i + 1]), text: page[i] });
    // The next page starts after the last score: a full page also takes every other entry of that
    // score (one written into the store beside a real one), so none falls between two pages unseen.
    if (out.length === limit) {
      const last = out[out.length - 1].pos;
      const same = await this.c.redis.zrangebyscore(key, last, last);
      const before = out.filter((e) => e.pos !== last);
      return before.concat(same.map((text) => ({ pos: last, text })));
    }
    return out;
  }

  async auditEnds(accountId: string): Promise<AuditEnds> {
    const [seq, mac, anchorSeq, anchorMac, anchorText, anchorPrev] = await this.c.redis.hmget(
      keys.auditHead(accountId),
      'seq',
      'mac',
      'anchorSeq',
      'anchorMac',
      'anchorText',
      'anchorPrev',
    );
    return {
      head: seq === null ? null : { seq: Number(seq), mac: mac ?? '' },
      anchor:
        anchorSeq === null || Number(anchorSeq) === 0
          ? null
          : { seq: Number(anchorSeq), mac: anchorMac ?? '', text: anchorText ?? '', previousMac: anchorPrev ?? '' },
    };
  }

  async pruneAudit(accountId: string, before: number): Promise<number> {
    // the prefix of the chain made before `before`: walked oldest first until an entry at or after it,
    // with the MAC before each (the anchor's, before the first entry that follows it)
    const held = (await this.auditEnds(accountId)).anchor;
    let last: { seq: number; mac: string; text: string; previousMac: string } | undefined;
    let after = 0;
    walk: for (;;) {
      const page = await this.auditEntries(accountId, after, CHUNK);
      for (const s of page) {
        let e: Partial<AuditEntry> = {};
        try {
          e = JSON.parse(s.text) as AuditEntry;
        } catch {
          // an entry that does not parse is removed with its neighbours; it anchors nothing verify could match
        }
        if (typeof e.at === 'string' && Date.parse(e.at) >= before) break walk;
        const previousMac = last?.seq === s.pos - 1 ? last.mac : held?.seq === s.pos - 1 ? held.mac : '';
        last = { seq: s.pos, mac: typeof e.mac === 'string' ? e.mac : '', text: s.text, previousMac };
      }
      if (page.length < CHUNK) break;
      after = page[page.length - 1].pos;
    }
    if (!last) return 0;
    const reply = (await this.c.run('auditPrune', keys.auditLog(accountId), keys.auditHead(accountId), last.seq, last.mac, last.text, last.previousMac)) as [
      number,
      number,
    ];
    return Number(reply[1]);
  }

  async deleteAccountAudit(accountId: string): Promise<void> {
    await this.c.redis.del(keys.auditLog(accountId), keys.auditHead(accountId));
    await this.c.redis.srem(keys.auditAccounts, accountId);
  }

  async hasAuditChains(): Promise<boolean> {
    return (await this.c.redis.scard(keys.auditAccounts)) > 0;
  }

  async auditAccounts(): Promise<Array<{ accountId: string; lastAt: number | null; exists: boolean }>> {
    const ids = (await this.c.redis.smembers(keys.auditAccounts)).sort();
    const out: Array<{ accountId: string; lastAt: number | null; exists: boolean }> = [];
    for (const accountId of ids) {
      const [head, exists, newest] = await Promise.all([
        this.c.redis.exists(keys.auditHead(accountId)),
        this.c.redis.exists(keys.account(accountId)),
        this.c.redis.zrange(keys.auditLog(accountId), -1, -1),
      ]);
      // a hint without a chain (a first write that never got to its script) names nothing
      if (head === 0) continue;
      let lastAt: number | null = null;
      try {
        lastAt = newest.length > 0 ? Date.parse((JSON.parse(newest[0]) as AuditEntry).at) : null;
      } catch {
        lastAt = null;
      }
      out.push({ accountId, lastAt: Number.isNaN(lastAt) ? null : lastAt, exists: exists === 1 });
    }
    return out;
  }
}
