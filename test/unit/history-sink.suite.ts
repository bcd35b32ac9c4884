// What every decision-history sink holds to (docs/api.md#decision-history), run on the SQLite file
// (test/unit/history.test.ts) and on Redis (test/unit-redis/history.redis.test.ts): an entry found
// by its id and by each filter, pages newest first, the count and age retention, an account's
// erasure leaving the others'.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decisionIdAt, type DecisionEntry } from '../../src/history/entry.js';
import type { HistorySink, Retention } from '../../src/history/sink.js';

export interface SinkFactory {
  name: string;
  setup(): Promise<void>;
  make(r: Retention): Promise<HistorySink>;
  teardown(): Promise<void>;
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
  });
}
