// What every decision-history sink holds to (docs/api.md#decision-history), run on the SQLite file
// (test/unit/history.test.ts) and on Redis (test/unit-redis/history.redis.test.ts): an entry found
// by its id and by each filter, pages newest first, the count and age retention, an account's
// erasure leaving the others' and holding back what a queue writes after it, and client addresses
// that live only truncated in their expiring place.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { decisionIdAt, type DecisionEntry } from '../../src/history/entry.js';
import { DecisionHistory } from '../../src/history/recorder.js';
import type { HistorySink, Retention } from '../../src/history/sink.js';

export interface SinkFactory {
  name: string;
  setup(): Promise<void>;
  make(r: Retention): Promise<HistorySink>;
  teardown(): Promise<void>;
  /** Everything `s` stores that still exists at `at` (ms): every field of every row or key, as text. */
  dump?(s: HistorySink, at: number): Promise<string>;
}

export const RETENTION: Retention = { maxPerAccount: 100, maxAgeSeconds: 3600, addressSeconds: 600 };

let n = 0;
export function entry(accountId: string, at: number, fields: Partial<DecisionEntry> = {}): DecisionEntry {
  n++;
  return {
    decisionId: decisionIdAt(at),
    at,
    accountId,
    caller: 'authorize',
    action: 'subscribe',
    streamName: `cam${n % 3}`,
    protocol: 'hls',
    allowed: false,
    status: 401,
    reason: 'token_invalid',
    rule: 'token valid',
    detail: 'no token has this value',
    credential: 'invalid',
    clientIp: `192.0.2.${n % 250}`,
    rules: [{ rule: 'token present', reason: 'token_required', result: 'pass' }, { rule: 'token valid', reason: 'token_invalid', result: 'fail', detail: 'no token has this value' }],
    ...fields,
  };
}

export function historySinkSuite(f: SinkFactory): void {
  describe(`decision history sink: ${f.name}`, () => {
    before(() => f.setup());
    after(() => f.teardown());

    it('finds an entry by its id and by each filter, another account never', async () => {
      const s = await f.make(RETENTION);
      const t = Date.now();
      const a = entry('A1', t, { tokenId: 7, streamName: 'cam1', clientIp: '203.0.113.7', reason: 'origin_not_allowed', sessionId: 's-1' });
      const b = entry('A1', t + 1, { allowed: true, status: 200, reason: 'allowed', rule: undefined, detail: undefined, tokenId: 8, streamName: 'cam2', clientIp: '2001:db8::1' });
      const c = entry('B1', t + 2, { tokenId: 7, streamName: 'cam1' });
      await s.append([a, b, c]);
      assert.deepEqual((await s.query('A1', { decisionId: a.decisionId, limit: 5 })).items, [a]);
      assert.deepEqual((await s.query('B1', { decisionId: a.decisionId, limit: 5 })).items, []);
      const ids = async (q: Parameters<HistorySink['query']>[1]) => (await s.query('A1', q)).items.map((e) => e.decisionId);
      assert.deepEqual(await ids({ tokenId: 7, limit: 5 }), [a.decisionId]);
      assert.deepEqual(await ids({ streamName: 'cam2', limit: 5 }), [b.decisionId]);
      assert.deepEqual(await ids({ clientIp: '203.0.113.7', limit: 5 }), [a.decisionId]);
      assert.deepEqual(await ids({ reason: 'allowed', limit: 5 }), [b.decisionId]);
      assert.deepEqual(await ids({ allowed: false, limit: 5 }), [a.decisionId]);
      assert.deepEqual(await ids({ from: t + 1, limit: 5 }), [b.decisionId]);
      assert.deepEqual(await ids({ to: t + 1, limit: 5 }), [a.decisionId]);
      assert.deepEqual(await ids({ limit: 5 }), [b.decisionId, a.decisionId]);
      await s.close();
    });

    it('pages newest first, each entry once', async () => {
      const s = await f.make(RETENTION);
      const t = Date.now();
      const all = Array.from({ length: 23 }, (_, i) => entry('P1', t + i));
      await s.append(all);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await s.query('P1', { limit: 5, cursor });
        seen.push(...page.items.map((e) => e.decisionId));
        cursor = page.next;
        if (cursor === undefined) break;
      }
      assert.deepEqual(seen, all.map((e) => e.decisionId).reverse());
      await s.close();
    });

    it('keeps at most maxPerAccount entries and none older than maxAgeSeconds', async () => {
      const s = await f.make(RETENTION);
      const t = Date.now();
      const all = Array.from({ length: 130 }, (_, i) => entry('R1', t + i));
      await s.append(all.slice(0, 70));
      await s.append(all.slice(70));
      await s.prune(t + 1000);
      const kept = (await s.query('R1', { limit: 200 })).items.map((e) => e.decisionId);
      assert.deepEqual(kept, all.slice(30).map((e) => e.decisionId).reverse());
      await s.prune(t + RETENTION.maxAgeSeconds * 1000 + 120_000);
      assert.deepEqual((await s.query('R1', { limit: 200 })).items, []);
      await s.close();
    });

    it("erases one account's entries, and only them", async () => {
      const s = await f.make(RETENTION);
      const t = Date.now();
      await s.append([entry('E1', t), entry('E1', t + 1), entry('E2', t + 2)]);
      assert.deepEqual((await s.accounts()).filter((a) => a.startsWith('E')).sort(), ['E1', 'E2']);
      await s.deleteAccount('E1', t + 3);
      assert.deepEqual((await s.accounts()).filter((a) => a.startsWith('E')), ['E2']);
      assert.deepEqual((await s.query('E1', { limit: 10 })).items, []);
      assert.equal((await s.query('E2', { limit: 10 })).items.length, 1);
      await s.close();
    });

    it('an erasure leaves out what a queue (this instance\'s or another\'s) writes after it of the decisions made before it', async () => {
      const s = await f.make(RETENTION);
      const t = Date.now();
      await s.append([entry('Q1', t - 2000)]);
      await s.deleteAccount('Q1', t);
      const before = entry('Q1', t - 500);
      const at = entry('Q1', t);
      const after = entry('Q1', t + 10);
      const other = entry('Q2', t - 500);
      await s.append([before, other, at, after]);
      assert.deepEqual((await s.query('Q1', { limit: 10 })).items.map((e) => e.decisionId), [after.decisionId]);
      assert.deepEqual((await s.query('Q2', { limit: 10 })).items.map((e) => e.decisionId), [other.decisionId]);
      await s.close();
    });

    it('keeps a client address only truncated, in its expiring place, and none once addressSeconds are past', async (t) => {
      if (f.dump === undefined) return t.skip('this sink is not dumped');
      const cfg = { ...loadConfig({ env: {}, overrides: {} }).history, ipv4Prefix: 24, ipv6Prefix: 48, addressSeconds: 600, maxAgeSeconds: 86_400 };
      const s = await f.make({ maxPerAccount: 100, maxAgeSeconds: cfg.maxAgeSeconds, addressSeconds: cfg.addressSeconds });
      const h = new DecisionHistory(cfg, s, async () => true, pino({ level: 'silent' }));
      const at = Date.now();
      const v4 = entry('M1', at, { clientIp: '203.0.113.77', reason: 'ip_not_allowed', rule: 'ip allowed', detail: 'address 203.0.113.77 is not allowed' });
      v4.rules = [
        { rule: 'ip allowed', reason: 'ip_not_allowed', result: 'fail', detail: 'address 203.0.113.77 is not allowed' },
        { rule: 'no session cut', reason: 'session_terminated', result: 'pass', detail: 'a session of this token from 203.0.113.77 was cut; refused until 2026-11-28T20:00:00.000Z' },
      ];
      const v6 = entry('M1', at + 1, { clientIp: '2001:db8:abcd:12::9', allowed: true, status: 200, reason: 'allowed', rule: undefined, detail: undefined });
      v6.rules = [{ rule: 'bind on usage', reason: 'ip_not_allowed', result: 'pass', detail: 'bound 2001:db8:abcd:12::9' }];
      h.push(v4);
      h.push(v6);
      await h.flush();
      const stored = await f.dump(s, at);
      for (const full of ['203.0.113.77', '2001:db8:abcd:12::9', '2001:db8:abcd:12:']) assert.equal(stored.includes(full), false, `${full} is stored`);
      // the truncated addresses are there, each once: in the entry's address and nowhere else
      assert.deepEqual([stored.split('203.0.113.0').length - 1, stored.split('2001:db8:abcd::').length - 1], [1, 1]);
      assert.deepEqual(
        (await s.query('M1', { limit: 5 })).items.map((e) => [e.clientIp, e.detail, e.rules.map((r) => r.detail)]),
        [
          ['2001:db8:abcd::', undefined, ['bound [address]']],
          ['203.0.113.0', 'address [address] is not allowed', ['address [address] is not allowed', 'a session of this token from [address] was cut; refused until 2026-11-28T20:00:00.000Z']],
        ],
      );
      // addressSeconds after the later entry (and a minute, the width of Redis's address buckets): no address at all, the entries kept
      const later = at + 1 + (cfg.addressSeconds + 60) * 1000;
      await s.prune(later);
      const left = await f.dump(s, later);
      assert.equal(/203\.0\.113\.|2001:db8:abcd/.test(left), false, left);
      assert.deepEqual(
        (await s.query('M1', { limit: 5 })).items.map((e) => e.decisionId),
        [v6.decisionId, v4.decisionId],
      );
      await h.close();
    });
  });
}
