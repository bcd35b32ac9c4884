// The Redis store's upgrade of data written by earlier builds (Store.upgrade): indexes and claims
// they did not keep, built once per store and marked done in a meta key.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { accountNameKey } from '../../domain/store-rules.js';
import { setsViewerRules } from '../../domain/viewer-rules.js';
import { keys, idFromMember, idMember, LEGACY_ID_MEMBER_DIGITS, TOKEN_VALUE_FIELD_END } from './keys.js';
import type { RedisConnection } from './connection.js';
import type { ScriptName } from './scripts.js';
import { readTokens } from './token-record.js';
import { globLiteral } from './version-watch.js';
import { SESSION_RECORDS_META } from './session-record.js';

/** The meta key and value saying the viewer-rule sets hold disabled tokens too. */
const VIEWER_RULE_INDEX_META = 'viewer-rule-index';
const VIEWER_RULE_INDEX_VERSION = '2';
/** The meta key and value saying the usage indexes cover data of earlier builds too. */
const USAGE_INDEX_META = 'usage-index';
const USAGE_INDEX_VERSION = '1';
/** The meta key and value saying every list index member has its base-36 id (keys.ts idMember). */
const INDEX_MEMBERS_META = 'token-index-members';
const INDEX_MEMBERS_VERSION = '1';
/** The meta key and value saying every token record is in its bucket (keys.tokenRecord). */
const TOKEN_BUCKETS_META = 'token-buckets';
const TOKEN_BUCKETS_VERSION = '1';
/** The meta key and value saying every token value hint has its short field (keys.tokenValue). */
const TOKEN_VALUE_HINTS_META = 'token-value-hints';
const TOKEN_VALUE_HINTS_VERSION = '2';
/** The meta key and value saying every account's name is claimed (accounts of earlier builds too). */
const ACCOUNT_NAMES_META = 'account-names';
const ACCOUNT_NAMES_VERSION = '1';

/**
 * Every key matching `glob` (a keys.ts glob, the prefix added here), in pages of one SCAN call on
 * every master (a Cluster's each), handed to `page` without the prefix.
 */
async function scanKeys(c: RedisConnection, glob: string, page: (found: string[]) => Promise<void>): Promise<void> {
  const prefix = c.redis.options.keyPrefix ?? '';
  const pattern = globLiteral(prefix) + glob;
  for (const node of c.redis instanceof Cluster ? c.redis.nodes('master') : [c.redis]) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      await page(found.map((k) => k.slice(prefix.length)));
    } while (cursor !== '0');
  }
}

/**
 * Data of earlier builds indexed only active publish tokens as setting viewer rules: a disabled
 * securing token must be in the set too (securesViewing). Once per store (meta key), idempotent:
 * instances starting together add the same members, and a member whose token no longer sets
 * rules is skipped on read (viewerRuleTokens filters).
 */
export async function upgradeStore(c: RedisConnection): Promise<void> {
  await settleSessionRecords(c);
  await upgradeViewerRuleIndex(c);
  await upgradeUsageIndexes(c);
  await upgradeAccountNames(c);
  await upgradeTokenValueHints(c);
  await upgradeTokenBuckets(c);
  await upgradeIndexMembers(c);
}

/**
 * Which form admissions write session records in (session-record.ts), settled once per store and
 * before anything else here: rows on a store that holds no account yet, which no earlier build
 * serves; objects on one that does, since instances of an earlier build, which read objects only,
 * may share it during a rolling upgrade. The operator switches such a store to rows once every
 * instance runs this build (`streamgate store session-records compact`, docs/operations.md).
 */
export async function settleSessionRecords(c: RedisConnection): Promise<void> {
  if ((await c.redis.exists(keys.meta(SESSION_RECORDS_META))) === 1) return;
  const used = (await c.redis.zcard(keys.accountList)) > 0;
  await c.redis.set(keys.meta(SESSION_RECORDS_META), used ? 'json' : 'compact', 'NX');
}

/**
 * Earlier builds wrote the ids of the token list indexes (by name, by addition) as 16 decimal
 * digits; this one as 11 base-36 digits (keys.ts idMember). Every account's indexes are read whole
 * first, then each old member is replaced (ZADD the new with its score, ZREM the old) in pipelines
 * of 1,000. Once per store (meta key); idempotent.
 */
export async function upgradeIndexMembers(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(INDEX_MEMBERS_META))) === INDEX_MEMBERS_VERSION) return;
  for (const accountId of await c.redis.zrange(keys.accountList, 0, -1)) {
    for (const kind of ['publish', 'subscribe'] as const) {
      for (const key of [keys.byName(accountId, kind), keys.byAdded(accountId, kind)]) {
        const flat = await c.redis.zrange(key, 0, -1, 'WITHSCORES');
        const old: Array<[member: string, score: string]> = [];
        for (let i = 0; i < flat.length; i += 2) {
          const m = flat[i];
          if (m.length - (m.lastIndexOf('\u0000') + 1) === LEGACY_ID_MEMBER_DIGITS) old.push([m, flat[i + 1]]);
        }
        for (let i = 0; i < old.length; i += 1000) {
          const move = c.redis.pipeline();
          for (const [m, score] of old.slice(i, i + 1000)) {
            const cut = m.lastIndexOf('\u0000') + 1;
            move.zadd(key, score, m.slice(0, cut) + idMember(idFromMember(m)));
            move.zrem(key, m);
          }
          for (const [err] of (await move.exec()) ?? []) if (err) throw err;
        }
      }
    }
  }
  await c.redis.set(keys.meta(INDEX_MEMBERS_META), INDEX_MEMBERS_VERSION);
}

/**
 * Earlier builds kept each token record as a string key of its own (keys.legacyToken); this one
 * keeps it as a field of its account's bucket (keys.tokenRecord). Each such key is moved — HSETNX
 * into its bucket (a record written there since stays), then DEL — one SCAN of the record keys
 * (every master of a Cluster), once per store (meta key); idempotent.
 */
export async function upgradeTokenBuckets(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(TOKEN_BUCKETS_META))) === TOKEN_BUCKETS_VERSION) return;
  await scanKeys(c, keys.legacyTokenGlob, async (found) => {
    for (const key of found) {
      const m = /^\{a:(.+?)\}:t:(\d+)$/.exec(key);
      if (!m) continue; // a bound-address or use-count key
      const [accountId, id] = [m[1], Number(m[2])];
      const value = await c.redis.getBuffer(keys.legacyToken(accountId, id));
      if (value === null) continue;
      await c.redis.hsetnx(...keys.tokenRecord(accountId, id), value);
      await c.redis.del(keys.legacyToken(accountId, id));
    }
  });
  await c.redis.set(keys.meta(TOKEN_BUCKETS_META), TOKEN_BUCKETS_VERSION);
}

/**
 * Earlier builds keyed a token value hint by the 60 hex digits after the bucket's 4 (as text); this
 * one by the next 12 bytes (keys.tokenValue): each text field is written again short and removed. One SCAN of
 * the buckets (every master of a Cluster), once per store (meta key); idempotent, and a bucket's
 * move is one script-free pipeline of HSET then HDEL, so a hint is never missing meanwhile.
 */
/** A hint field of an earlier build: 60 (or 24) hex digits as text; one of this build is 12 bytes. */
const isHexField = (f: Buffer): boolean => (f.length === 60 || f.length === 24) && /^[0-9a-f]+$/.test(f.toString('latin1'));

export async function upgradeTokenValueHints(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(TOKEN_VALUE_HINTS_META))) === TOKEN_VALUE_HINTS_VERSION) return;
  await scanKeys(c, keys.tokenValueGlob, async (found) => {
    for (const bucket of found) {
      // the fields as bytes (this build's are not text): field, value, field, value, ...
      const flat = (await c.redis.callBuffer('HGETALL', bucket)) as Buffer[];
      const old: Array<[field: Buffer, ref: Buffer]> = [];
      for (let i = 0; i < flat.length; i += 2) if (isHexField(flat[i])) old.push([flat[i], flat[i + 1]]);
      if (old.length === 0) continue;
      const move = c.redis.pipeline();
      for (const [f, ref] of old) move.hset(bucket, Buffer.from(f.toString('latin1').slice(0, TOKEN_VALUE_FIELD_END - 4), 'hex'), ref);
      move.hdel(bucket, ...old.map(([f]) => f));
      for (const [err] of (await move.exec()) ?? []) if (err) throw err;
    }
  });
  await c.redis.set(keys.meta(TOKEN_VALUE_HINTS_META), TOKEN_VALUE_HINTS_VERSION);
}

/**
 * Accounts of earlier builds have no name claims (keys.accountName): each account becomes a holder
 * of its name's claim, several accounts of one claim where earlier builds let them share a name
 * (they keep it; new ones are refused). Once per store (meta key), idempotent; the accounts
 * aggregate runs it too before its first name write, so a command that does not start the server
 * (the CLI) checks names as the server does.
 */
export async function upgradeAccountNames(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(ACCOUNT_NAMES_META))) === ACCOUNT_NAMES_VERSION) return;
  for (const accountId of await c.redis.zrange(keys.accountList, 0, -1)) {
    const name = await c.redis.hget(keys.account(accountId), 'name');
    if (name !== null) await c.run('accountNameHold', keys.accountName(accountNameKey(name)), accountId, randomUUID());
  }
  await c.redis.set(keys.meta(ACCOUNT_NAMES_META), ACCOUNT_NAMES_VERSION);
}

async function upgradeViewerRuleIndex(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(VIEWER_RULE_INDEX_META))) === VIEWER_RULE_INDEX_VERSION) return;
  for (const accountId of await c.redis.zrange(keys.accountList, 0, -1)) {
    const ids = (await c.redis.zrange(keys.byAdded(accountId, 'publish'), 0, -1)).map(idFromMember);
    for (let i = 0; i < ids.length; i += 500) {
      const ruled = (await readTokens(c, accountId, ids.slice(i, i + 500))).filter(setsViewerRules).map((t) => String(t.id));
      if (ruled.length > 0) await c.redis.sadd(keys.securing(accountId), ...ruled);
    }
  }
  await c.redis.set(keys.meta(VIEWER_RULE_INDEX_META), VIEWER_RULE_INDEX_VERSION);
}

/**
 * Usage kept by earlier builds lacks two indexes the account and tracking/streams reads use: the
 * account's total in each day's per-stream index, and each stream's set of tracking ids of the
 * day. One SCAN of the usage keys (every master of a Cluster), once per store (meta key).
 * Idempotent and exact beside writers of this build: a total is recomputed from its hash's
 * stream fields in one script, and a set only gains members.
 */
async function upgradeUsageIndexes(c: RedisConnection): Promise<void> {
  if ((await c.redis.get(keys.meta(USAGE_INDEX_META))) === USAGE_INDEX_VERSION) return;
  await scanKeys(c, keys.usageGlob, (found) => indexOldUsage(c, found));
  await c.redis.set(keys.meta(USAGE_INDEX_META), USAGE_INDEX_VERSION);
}

/**
 * upgradeUsageIndexes for some usage keys (prefix removed): the daily stream indexes and daily
 * tracking buckets among them, one account at a time (a Cluster pipelines only within a slot).
 */
async function indexOldUsage(c: RedisConnection, found: string[]): Promise<void> {
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
    const read = c.redis.pipeline();
    for (const key of indexes) (read as unknown as Record<ScriptName, (...a: Array<string | number>) => unknown>).usageTotal(key, ...keys.usageTotalFields);
    for (const b of buckets) read.hkeys(b.key).pttl(b.key);
    const res = (await read.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    if (buckets.length === 0) continue;
    const write = c.redis.pipeline();
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
