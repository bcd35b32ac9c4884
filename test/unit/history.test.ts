// The decision history's recorder and its SQLite file (docs/api.md#decision-history): sampling and
// each account's rates, the bounded queue that drops and counts, batches, addresses truncated and
// removed when their time is up, decision ids that carry their time. Mocked clocks, no Redis.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import pino from 'pino';
import { CLOSE_LOOKUPS, DecisionHistory, GONE_SWEEP_MS } from '../../src/history/recorder.js';
import { SqliteHistory } from '../../src/history/sqlite-history.js';
import { decisionIdAt, decisionIdTime, truncateAddress, type DecisionEntry } from '../../src/history/entry.js';
import type { HistorySink } from '../../src/history/sink.js';
import { historyFile } from '../../src/history/open.js';
import type { Checkpointer } from '../../src/store/sqlite/checkpointer.js';
import { loadConfig } from '../../src/config/load.js';
import { entry, historySinkSuite, RETENTION } from './history-sink.suite.js';

let dir = '';
historySinkSuite({
  name: 'sqlite',
  async setup() {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-history-'));
  },
  async make(r) {
    return new SqliteHistory(path.join(dir, `${Math.random().toString(36).slice(2)}.db`), r);
  },
  async teardown() {
    rmSync(dir, { recursive: true, force: true });
  },
  async dump(s) {
    // every row of every table, every column
    const db = (s as unknown as { db: Database.Database }).db;
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    return JSON.stringify(tables.map((t) => db.prepare(`SELECT * FROM ${t}`).all()));
  },
});

const silent = pino({ level: 'silent' });
const CFG = loadConfig({ env: {}, overrides: {} }).history;

/** A sink that keeps what it is given, and may refuse. */
class Kept implements HistorySink {
  batches: DecisionEntry[][] = [];
  refuse = false;
  erased: string[] = [];
  async append(batch: readonly DecisionEntry[]) {
    if (this.refuse) throw new Error('down');
    this.batches.push([...batch]);
  }
  async query() {
    return { items: this.batches.flat() };
  }
  async prune() {}
  async accounts() {
    return [...new Set(this.batches.flat().map((e) => e.accountId))];
  }
  async deleteAccount(id: string) {
    this.erased.push(id);
  }
  async close() {}
}

describe('decision history recorder', () => {
  it("keeps refusals up to each account's rate (a burst of ten seconds), counts the rest, and refills with time", (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
    const h = new DecisionHistory({ ...CFG, refusalsPerSecond: 2 }, new Kept(), async () => true, silent);
    const kept = Array.from({ length: 25 }, () => h.wants(false, 'A', true)).filter(Boolean).length;
    assert.equal(kept, 20);
    assert.equal(h.tallies.rate, 5);
    // another account has its own rate
    assert.equal(h.wants(false, 'B', true), true);
    t.mock.timers.tick(1000);
    assert.deepEqual([h.wants(false, 'A'), h.wants(false, 'A'), h.wants(false, 'A')], [true, true, false]);
    // the clock steps back 500 s: no refill for it, and none lost either: a second later, two more
    t.mock.timers.setTime(Date.now() - 500_000);
    assert.equal(h.wants(false, 'A'), false);
    t.mock.timers.tick(1000);
    assert.deepEqual([h.wants(false, 'A'), h.wants(false, 'A'), h.wants(false, 'A')], [true, true, false]);
  });

  it('made-up account ids share one bucket and cannot crowd out a real account, nor cost more than that bucket', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    let asked = 0;
    const h = new DecisionHistory({ ...CFG, refusalsPerSecond: 2 }, sink, async (id) => {
      asked++;
      return id === 'REAL';
    }, silent);
    // the real account's decisions resolved its token: vouched for
    assert.equal(h.wants(false, 'REAL', true), true);
    // a flood of refusals naming 50,000 random accounts: 20 kept in all (one bucket's burst)
    let flood = 0;
    for (let i = 0; i < 50_000; i++) {
      if (h.wants(false, `FAKE${i}`)) {
        flood++;
        h.push(entry(`FAKE${i}`, Date.now()));
      }
    }
    assert.equal(flood, 20);
    // the real account's bucket was not evicted: its burst is all there
    assert.equal(Array.from({ length: 19 }, () => h.wants(false, 'REAL', true)).filter(Boolean).length, 19);
    await h.flush();
    assert.equal(asked, 20, 'one store read per kept made-up id, 20 in all');
    assert.equal(h.tallies.no_account, 20);
    assert.deepEqual(sink.batches.flat(), []);
    // known not to exist now: nothing more is kept for them, and no bucket is used
    assert.equal(h.wants(false, 'FAKE0'), false);
    assert.equal(h.tallies.no_account, 21);
  });

  it('a real account keeps its own bucket once a write found it, while made-up ids flood the shared one', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const asked: string[] = [];
    const h = new DecisionHistory({ ...CFG, refusalsPerSecond: 2 }, sink, async (id) => {
      asked.push(id);
      return id === 'REAL';
    }, silent);
    // refusals naming the real account that resolve none of its tokens: nothing vouches for it
    assert.equal(h.wants(false, 'REAL'), true);
    h.push(entry('REAL', Date.now()));
    await h.flush();
    assert.deepEqual(asked, ['REAL']);
    // past the time the store's answer is believed: the account keeps its bucket all the same
    t.mock.timers.tick(61_000);
    let flood = 0;
    for (let i = 0; i < 50_000; i++) {
      if (h.wants(false, `RANDOM${i}`)) {
        flood++;
        h.push(entry(`RANDOM${i}`, Date.now()));
      }
    }
    assert.equal(flood, 20, 'the shared bucket, full again after a minute');
    const real = Array.from({ length: 25 }, () => h.wants(false, 'REAL')).filter(Boolean).length;
    assert.equal(real, 20, "the real account's whole burst");
    for (let i = 0; i < real; i++) h.push(entry('REAL', Date.now()));
    await h.flush();
    // one store read per made-up id the shared bucket let through, and one for the real account (its answer had expired)
    assert.deepEqual([asked.length, asked.filter((a) => a === 'REAL').length], [22, 2]);
    assert.deepEqual([h.tallies.kept, h.tallies.no_account, h.tallies.rate], [21, 20, 50_000 - 20 + 5]);
    assert.equal(sink.batches.flat().filter((e) => e.accountId === 'REAL').length, 21);
  });

  it('a client address never reaches a detail: every address in the detail and the rules shows as [address]', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const h = new DecisionHistory({ ...CFG, ipv4Prefix: 24 }, sink, async () => true, silent);
    const e = entry('A', 1, { clientIp: '203.0.113.77' });
    e.detail = 'address 203.0.113.77 is not allowed';
    e.rules = [
      { rule: 'ip allowed', reason: 'ip_not_allowed', result: 'fail', detail: 'address 203.0.113.77 is not allowed' },
      { rule: 'bind on usage', reason: 'ip_not_allowed', result: 'pass', detail: 'bound 2001:db8::7 (1 of 2 bound)' },
      { rule: 'no session cut', reason: 'session_terminated', result: 'pass', detail: 'refused until 2026-11-28T20:00:00.000Z' },
    ];
    h.push(e);
    await h.flush();
    const [kept] = sink.batches.flat();
    assert.equal(kept.clientIp, '203.0.113.0');
    assert.equal(kept.detail, 'address [address] is not allowed');
    assert.deepEqual(kept.rules.map((r) => r.detail), ['address [address] is not allowed', 'bound [address] (1 of 2 bound)', 'refused until 2026-11-28T20:00:00.000Z']);
    assert.doesNotMatch(JSON.stringify(kept), /203\.0\.113\.77|2001:db8::7/);
  });

  it('an entry whose account the store cannot answer for is kept (the hourly sweep removes it if the account never existed)', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const h = new DecisionHistory(CFG, sink, async () => {
      throw new Error('store down');
    }, silent);
    h.push(entry('A', 1));
    await h.flush();
    assert.deepEqual([sink.batches.flat().length, h.tallies.kept, h.tallies.unchecked, h.tallies.no_account], [1, 0, 1, 0]);
  });

  it('writes what is queued at shutdown without a store read for the accounts it knows, and at most CLOSE_LOOKUPS for the others', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    let asked = 0;
    const h = new DecisionHistory({ ...CFG, queueMax: 10_000 }, sink, async () => {
      asked++;
      return true;
    }, silent);
    for (let i = 0; i < 300; i++) assert.equal(h.wants(false, `KNOWN${i}`, true), true);
    // long enough for the store's answers to have expired: a flush would ask again
    t.mock.timers.tick(61_000);
    for (let i = 0; i < 300; i++) h.push(entry(`KNOWN${i}`, Date.now()));
    for (let i = 0; i < CLOSE_LOOKUPS + 50; i++) h.push(entry(`NEW${i}`, Date.now()));
    await h.close();
    assert.equal(asked, CLOSE_LOOKUPS);
    assert.equal(sink.batches.flat().length, 300 + CLOSE_LOOKUPS + 50);
    assert.deepEqual([h.tallies.kept, h.tallies.unchecked, h.tallies.no_account], [300 + CLOSE_LOOKUPS, 50, 0]);
    // closed: nothing more is queued
    h.push(entry('KNOWN0', Date.now()));
    assert.equal(sink.batches.flat().length, 300 + CLOSE_LOOKUPS + 50);
  });

  it('yields to the event loop between the batches it writes', async () => {
    const sink = new Kept();
    const h = new DecisionHistory({ ...CFG, batchSize: 2 }, sink, async () => true, silent);
    for (let i = 0; i < 6; i++) h.push(entry('A', Date.now()));
    const seen: number[] = [];
    setImmediate(() => seen.push(sink.batches.length));
    await h.flush();
    assert.deepEqual([seen, sink.batches.map((b) => b.length)], [[1], [2, 2, 2]]);
    await h.close();
  });

  it('samples allows at allowSampleRate, under their own rate', (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000_000 });
    const none = new DecisionHistory({ ...CFG, allowSampleRate: 0 }, new Kept(), async () => true, silent);
    assert.equal(Array.from({ length: 100 }, () => none.wants(true, 'A')).filter(Boolean).length, 0);
    assert.equal(none.tallies.rate, 0);
    const all = new DecisionHistory({ ...CFG, allowSampleRate: 1, allowsPerSecond: 1 }, new Kept(), async () => true, silent);
    assert.equal(Array.from({ length: 15 }, () => all.wants(true, 'A')).filter(Boolean).length, 10);
    // refusals keep their own budget
    assert.equal(all.wants(false, 'A'), true);
  });

  it('drops and counts when the queue is full, never waiting', (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const h = new DecisionHistory({ ...CFG, queueMax: 10, batchSize: 1000 }, new Kept(), async () => true, silent);
    for (let i = 0; i < 15; i++) if (h.wants(false, 'A')) h.push(entry('A', Date.now()));
    assert.equal(h.tallies.queue, 5);
  });

  it('writes in batches, leaves out accounts that do not exist, and counts a batch the sink refused', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const h = new DecisionHistory({ ...CFG, batchSize: 4 }, sink, async (id) => id !== 'GHOST', silent);
    for (let i = 0; i < 6; i++) h.push(entry('A', Date.now()));
    h.push(entry('GHOST', Date.now()));
    await h.flush();
    assert.deepEqual(sink.batches.map((b) => b.length), [4, 2]);
    assert.equal(h.tallies.kept, 6);
    assert.equal(h.tallies.no_account, 1);
    sink.refuse = true;
    h.push(entry('A', Date.now()));
    await h.flush();
    assert.equal(h.tallies.failed, 1);
    // a full batch is written on the next turn, without waiting for the timer
    sink.refuse = false;
    for (let i = 0; i < 4; i++) h.push(entry('A', Date.now()));
    t.mock.timers.runAll();
    await h.flush();
    assert.deepEqual(sink.batches.map((b) => b.length), [4, 2, 4]);
  });

  it('truncates addresses to the configured prefixes, and keeps none when addressSeconds is 0', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const h = new DecisionHistory({ ...CFG, ipv4Prefix: 24, ipv6Prefix: 48 }, sink, async () => true, silent);
    h.push(entry('A', 1, { clientIp: '203.0.113.77' }));
    h.push(entry('A', 2, { clientIp: '2001:db8:1234:5678::9' }));
    const none = new DecisionHistory({ ...CFG, addressSeconds: 0 }, sink, async () => true, silent);
    none.push(entry('A', 3, { clientIp: '203.0.113.77' }));
    await h.flush();
    await none.flush();
    assert.deepEqual(sink.batches.flat().map((e) => e.clientIp), ['203.0.113.0', '2001:db8:1234::', undefined]);
  });

  it("erases an account's queued entries with what its sink kept", async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    const h = new DecisionHistory(CFG, sink, async () => true, silent);
    h.push(entry('A', 1));
    h.push(entry('B', 2));
    await h.erase('A');
    assert.deepEqual(sink.erased, ['A']);
    assert.deepEqual(sink.batches.flat().map((e) => e.accountId), ['B']);
  });
});

describe('decision history: deleted accounts', () => {
  it('drops the entries of accounts the store no longer holds, hourly, and keeps those it cannot answer for', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval', 'setImmediate', 'Date'], now: 1_000_000 });
    const sink = new Kept();
    let gone = new Set<string>();
    let down = false;
    const h = new DecisionHistory(CFG, sink, async (id) => {
      if (down) throw new Error('store down');
      return !gone.has(id);
    }, silent);
    for (const a of ['A', 'B', 'C']) h.push(entry(a, 1));
    await h.flush();
    gone = new Set(['B']);
    down = true;
    await h.sweepGone();
    assert.deepEqual(sink.erased, []);
    down = false;
    t.mock.timers.tick(GONE_SWEEP_MS);
    // the timer's sweep runs on its own; wait for what it started
    await h.sweepGone();
    assert.deepEqual([...new Set(sink.erased)], ['B']);
  });
});

describe('decision history: ids, addresses, files', () => {
  it('a decision id is a version 7 UUID carrying its millisecond', () => {
    const id = decisionIdAt(1_795_899_257_123);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(decisionIdTime(id), 1_795_899_257_123);
    assert.equal(decisionIdTime('3b241101-e2bb-4255-8caf-4136c566a962'), undefined);
    assert.notEqual(decisionIdAt(5), decisionIdAt(5));
  });

  it('truncates addresses by prefix', () => {
    const cases: Array<[string, number, number, string]> = [
      ['203.0.113.77', 24, 128, '203.0.113.0'],
      ['203.0.113.77', 16, 128, '203.0.0.0'],
      ['203.0.113.77', 32, 48, '203.0.113.77'],
      ['203.0.113.77', 20, 128, '203.0.112.0'],
      ['2001:db8:abcd:12::1', 32, 48, '2001:db8:abcd::'],
      ['2001:db8:abcd:12::1', 32, 128, '2001:db8:abcd:12::1'],
      ['not an address', 24, 48, 'not an address'],
    ];
    for (const [ip, v4, v6, want] of cases) assert.equal(truncateAddress(ip, v4, v6), want, `${ip} /${v4} /${v6}`);
  });

  it('prunes a chunk of rows at a time, yielding to the event loop, to the same result', async () => {
    const pruned = async (chunk?: number) => {
      const s = new SqliteHistory(':memory:', { ...RETENTION, maxPerAccount: 100 }, chunk);
      const now = 10_000_000;
      // 250 of A (100 kept), 70 of C past maxAgeSeconds, 65 of D whose addresses are past addressSeconds, one of B
      await s.append(Array.from({ length: 250 }, (_, i) => entry('A', now - 100_000 + i, { clientIp: '198.51.100.1' })));
      await s.append(Array.from({ length: 70 }, (_, i) => entry('C', now - RETENTION.maxAgeSeconds * 1000 - 1 - i)));
      await s.append(Array.from({ length: 65 }, (_, i) => entry('D', now - RETENTION.addressSeconds * 1000 - i, { clientIp: '198.51.100.2' })));
      await s.append([entry('B', now)]);
      let turns = 0;
      const spin = () => {
        turns++;
        if (!done) setImmediate(spin);
      };
      let done = false;
      setImmediate(spin);
      await s.prune(now);
      done = true;
      const view = {
        A: (await s.query('A', { limit: 500 })).items.map((e) => e.at),
        B: (await s.query('B', { limit: 5 })).items.length,
        C: (await s.query('C', { limit: 500 })).items.length,
        D: (await s.query('D', { limit: 500 })).items.map((e) => e.clientIp ?? null),
      };
      const runs = s.chunksRun;
      await s.close();
      return { view, runs, turns };
    };
    const small = await pruned(30);
    const whole = await pruned();
    assert.deepEqual(small.view, whole.view);
    assert.deepEqual(small.view.A, Array.from({ length: 100 }, (_, i) => 10_000_000 - 100_000 + 249 - i));
    assert.deepEqual([small.view.B, small.view.C, small.view.D], [1, 0, Array(65).fill(null)]);
    // in chunks of 30: C's 70 = 30 + 30 + 10 (3 statements), D's 65 addresses = 30 + 30 + 5 (3), A's 150
    // over maxPerAccount = 5 × 30 (6: the last finds none left); in chunks of 5,000, one statement each
    assert.deepEqual([small.runs, whole.runs], [3 + 3 + 6, 3]);
    assert.ok(small.turns >= small.runs, `the event loop turned ${small.turns} times`);
  });

  it('checkpoints its file on a thread of its own from the first write, never on the event loop', async () => {
    const d = mkdtempSync(path.join(tmpdir(), 'sg-history-cp-'));
    const s = new SqliteHistory(path.join(d, 'h.db'), RETENTION);
    try {
      await s.append([entry('A', 1_000_000)]);
      const cp = (s as unknown as { checkpointer: Checkpointer }).checkpointer;
      await cp.tick();
      assert.deepEqual([cp.background, cp.completed], [true, 1]);
    } finally {
      await s.close();
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('refuses a cursor it did not make', async () => {
    const s = new SqliteHistory(':memory:', RETENTION);
    await assert.rejects(s.query('A', { limit: 1, cursor: 'nonsense' }), { name: 'HistoryCursorInvalid' });
    await assert.rejects(s.query('A', { limit: 1, cursor: '17.x' }), { name: 'HistoryCursorInvalid' });
    await s.close();
  });

  it('removes a kept address once it is addressSeconds old, keeping its entry', async () => {
    const s = new SqliteHistory(':memory:', RETENTION);
    const e = entry('A', 1_000_000, { clientIp: '198.51.100.1' });
    await s.append([e]);
    await s.prune(1_000_000 + RETENTION.addressSeconds * 1000 - 1);
    assert.equal((await s.query('A', { limit: 1 })).items[0].clientIp, '198.51.100.1');
    await s.prune(1_000_000 + RETENTION.addressSeconds * 1000);
    const [kept] = (await s.query('A', { limit: 1 })).items;
    assert.equal(kept.decisionId, e.decisionId);
    assert.equal(kept.clientIp, undefined);
    assert.deepEqual((await s.query('A', { clientIp: '198.51.100.1', limit: 1 })).items, []);
  });

  it('keeps its file beside the store, private to its user', () => {
    const cfg = loadConfig({ env: {}, overrides: {} });
    assert.equal(historyFile(cfg, '/srv/sg/streamgate.db'), '/srv/sg/streamgate-history.db');
    assert.equal(historyFile(cfg, ':memory:'), ':memory:');
    assert.equal(historyFile(loadConfig({ env: {}, overrides: { dataDir: '/srv/x', history: { sqliteFile: 'h.db' } } }), '/srv/sg/streamgate.db'), '/srv/x/h.db');
    const d = mkdtempSync(path.join(tmpdir(), 'sg-history-mode-'));
    const s = new SqliteHistory(path.join(d, 'h.db'), RETENTION);
    assert.equal(statSync(path.join(d, 'h.db')).mode & 0o777, 0o600);
    void s.close();
    rmSync(d, { recursive: true, force: true });
  });
});
