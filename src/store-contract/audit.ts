// The audit chains (src/store/audit.ts): every sealed write appends its entry in the step of its
// change, a refused write appends nothing, a sealer that throws leaves the change unwritten,
// concurrent sealed writes of one account number their entries once each without a gap, and the
// reads, retention with its anchor and the removal of a chain.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChainWalk, sealEntry, type AuditSealer } from '../domain/audit.js';
import type { Store } from '../store/store.js';
import { account, named, T0, tok } from './fixtures.js';
import { issuerFields } from './issuers.js';
import type { Fresh } from './factory.js';

export type AuditUnderTest = Store;

const KEY = 'contract-suite-audit-key-0123456789abcdef';

/** What a sealer was called with, per call: the records' ids and revs before and after, and the head. */
interface Call {
  before: unknown;
  after: unknown;
  head: number | null;
}

/**
 * A sealer as the management services make one: each entry `at` the given clock, naming the
 * record by its id; `calls` records what the store handed it.
 */
function sealer<T>(accountId: string, resource: 'account' | 'publishToken' | 'issuer' | 'webhook' | 'recording' | 'securedStream' | 'session', calls: Call[], at: () => number = () => T0): AuditSealer<T> {
  return (before, after, head) => {
    const summary = (r: T | null) => (r === null ? null : Array.isArray(r) ? r.length : ((r as { id?: unknown }).id ?? null));
    calls.push({ before: summary(before), after: summary(after), head: head?.seq ?? null });
    return sealEntry(KEY, head, {
      accountId,
      at: new Date(at()).toISOString(),
      actor: 'cli',
      address: null,
      requestId: null,
      action: before === null ? 'create' : after === null ? 'delete' : 'update',
      resource,
      resourceId: String(summary(after ?? before)),
      changes: {},
    });
  };
}

/** The account's chain walked from its anchor, as verify walks it. */
async function walk(s: AuditUnderTest, accountId: string) {
  const ends = await s.auditEnds(accountId);
  const w = new ChainWalk(KEY, accountId, ends.anchor, Number.MAX_SAFE_INTEGER);
  for (const e of await s.auditEntries(accountId, 0, 1000)) w.push(e.text);
  return w.finish(ends.head);
}

export function auditTests(fresh: Fresh<AuditUnderTest>): void {
  describe('audit chains', () => {
    it('each sealed write appends its entry, sealed on the head, with the records before and after; refused writes append nothing', async () => {
      const s = await fresh(() => T0);
      assert.equal(await s.hasAuditChains(), false, 'a new store holds no chain');
      const calls: Call[] = [];
      const seal = <T>(r: Parameters<typeof sealer>[1]) => sealer<T>('AU1', r, calls);
      await s.createAccount(account('AU1'), seal('account'));
      await assert.rejects(s.createAccount(account('AU1'), seal('account')), named('AccountExists'));
      const t = await s.createToken(tok('AU1', 'publish', 'p', T0, { subscribeRequiresAuth: true }), seal('publishToken'));
      assert.equal(await s.updateToken('AU1', 'publish', 999_999, (cur) => ({ next: cur, clearBound: false }), seal('publishToken')), null);
      await s.updateToken('AU1', 'publish', t.id, (cur) => ({ next: Object.assign({}, cur, { label: 'q' }), clearBound: false }), seal('publishToken'));
      await assert.rejects(
        s.updateToken('AU1', 'publish', t.id, () => {
          throw new Error('refused by the change');
        }, seal('publishToken')),
      );
      await s.deleteToken('AU1', 'publish', t.id, seal('publishToken'));
      assert.deepEqual(await s.removeSecuredStream('AU1', 'nothing', seal('securedStream')), []);
      assert.equal((await s.removeSecuredStream('AU1', 'cam1', seal('securedStream'))).length, 1, 'the deleted securing token left cam1');
      const i = await s.createIssuer('AU1', issuerFields('https://audit.example/'), seal('issuer'));
      await assert.rejects(s.updateIssuer('AU1', i.id, { label: 'x' }, 7, seal('issuer')), named('IssuerChanged'));
      await s.updateIssuer('AU1', i.id, { label: 'x' }, i.rev, seal('issuer'));
      await s.deleteIssuer('AU1', i.id, seal('issuer'));
      const w = await s.createWebhook({ accountId: 'AU1', url: 'https://h.example/', secret: 's', isFeedHooks: true, isRecordingHooks: false, isThumbnailHooks: false, createdOn: 'x', updatedOn: 'x' }, seal('webhook'));
      await s.updateWebhook('AU1', w.id, (cur) => Object.assign({}, cur, { isRecordingHooks: true }), seal('webhook'));
      assert.equal(await s.deleteWebhook('AU1', 999_999, seal('webhook')), false);
      await s.deleteWebhook('AU1', w.id, seal('webhook'));
      assert.equal(await s.setAccountSecret('AU1', 'h1', 'not-the-current', seal('account')), false);
      await s.setAccountSecret('AU1', 'h1', undefined, seal('account'));
      await s.updateAccount('AU1', { secureViewer: true }, seal('account'));
      assert.equal(await s.updateAccount('NONE', { secureViewer: true }, sealer('NONE', 'account', [])), null);
      const r = await s.startRecording({ accountId: 'AU1', streamName: 'cam1', recordedOn: new Date(T0).toISOString() });
      await s.deleteRecording('AU1', r.id, seal('recording'));
      assert.equal(await s.deleteRecording('AU1', r.id, seal('recording')), null);
      await s.appendAudit('AU1', seal('session'));

      const entries = (await s.listAudit('AU1', { limit: 100, ascending: true })).map((e) => [e.seq, e.resource, e.action, e.resourceId]);
      assert.deepEqual(entries, [
        [1, 'account', 'create', 'AU1'],
        [2, 'publishToken', 'create', String(t.id)],
        [3, 'publishToken', 'update', String(t.id)],
        [4, 'publishToken', 'delete', String(t.id)],
        [5, 'securedStream', 'delete', '1'],
        [6, 'issuer', 'create', String(i.id)],
        [7, 'issuer', 'update', String(i.id)],
        [8, 'issuer', 'delete', String(i.id)],
        [9, 'webhook', 'create', String(w.id)],
        [10, 'webhook', 'update', String(w.id)],
        [11, 'webhook', 'delete', String(w.id)],
        [12, 'account', 'update', 'AU1'],
        [13, 'account', 'update', 'AU1'],
        [14, 'recording', 'delete', String(r.id)],
        [15, 'session', 'create', 'null'],
      ]);
      // the last call of each write is the one stored: its head is the entry before
      const stored = calls.filter((c, n) => n === calls.length - 1 || calls[n + 1].head !== c.head);
      assert.deepEqual(stored.map((c) => c.head).slice(-15), [null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
      assert.ok(calls.some((c) => c.before === t.id && c.after === t.id), 'an update is sealed with the record before and after');
      assert.equal((await s.getToken('AU1', 'publish', t.id)), null);
      assert.deepEqual(await walk(s, 'AU1'), { ok: true, entries: 15, first: 1, last: 15 });
      assert.deepEqual((await s.auditEnds('AU1')).anchor, null);
      assert.deepEqual(await s.auditEnds('NONE'), { head: null, anchor: null });
    });

    it('a sealer that throws leaves the change unwritten', async () => {
      const s = await fresh(() => T0);
      await s.createAccount(account('AU2'));
      const t = await s.createToken(tok('AU2', 'subscribe', 'a'));
      const refuse = (): never => {
        throw new Error('no key');
      };
      await assert.rejects(s.updateToken('AU2', 'subscribe', t.id, (cur) => ({ next: Object.assign({}, cur, { label: 'b' }), clearBound: false }), refuse));
      assert.equal((await s.getToken('AU2', 'subscribe', t.id))?.label, 'a');
      await assert.rejects(s.updateAccount('AU2', { secureViewer: true }, refuse));
      assert.equal((await s.getAccount('AU2'))?.secureViewer, false);
      assert.deepEqual(await s.auditEnds('AU2'), { head: null, anchor: null });
    });

    it('concurrent sealed writes of one account: every seq once, no gap, the chain verifies', async () => {
      const s = await fresh(() => T0);
      await s.createAccount(account('AU3'));
      const calls: Call[] = [];
      const made = await Promise.all(Array.from({ length: 10 }, (_, n) => s.createToken(tok('AU3', 'subscribe', `t${n}`), sealer('AU3', 'publishToken', calls))));
      await Promise.all(made.map((t) => s.updateToken('AU3', 'subscribe', t.id, (cur) => ({ next: Object.assign({}, cur, { label: `${cur.label}!` }), clearBound: false }), sealer('AU3', 'publishToken', calls))));
      const seqs = (await s.listAudit('AU3', { limit: 100, ascending: true })).map((e) => e.seq);
      assert.deepEqual(seqs, Array.from({ length: 20 }, (_, n) => n + 1));
      assert.deepEqual(await walk(s, 'AU3'), { ok: true, entries: 20, first: 1, last: 20 });
    });

    it('lists newest first by cursor, filters by resource, actor and time; retention prunes a prefix by time and anchors it; a chain is removed whole', async () => {
      const s = await fresh(() => T0);
      await s.createAccount(account('AU4'));
      let at = T0;
      const calls: Call[] = [];
      for (let n = 0; n < 6; n++) {
        at = T0 + n * 1000;
        await s.appendAudit('AU4', sealer<null>('AU4', n % 2 === 0 ? 'session' : 'recording', calls, () => at));
      }
      const page = await s.listAudit('AU4', { limit: 2 });
      assert.deepEqual(page.map((e) => e.seq), [6, 5]);
      assert.deepEqual((await s.listAudit('AU4', { limit: 2, cursor: 5 })).map((e) => e.seq), [4, 3]);
      assert.deepEqual((await s.listAudit('AU4', { limit: 10, resource: 'recording' })).map((e) => e.seq), [6, 4, 2]);
      assert.deepEqual((await s.listAudit('AU4', { limit: 10, actor: 'admin' })).map((e) => e.seq), []);
      assert.deepEqual((await s.listAudit('AU4', { limit: 10, from: T0 + 1000, to: T0 + 3000 })).map((e) => e.seq), [3, 2]);
      assert.deepEqual((await s.listAudit('AU4', { limit: 10, ascending: true, cursor: 4 })).map((e) => e.seq), [5, 6]);
      assert.deepEqual((await s.auditEntries('AU4', 2, 2)).map((e) => e.pos), [3, 4]);

      const listed = await s.listAudit('AU4', { limit: 10 });
      const entry = (seq: number) => listed.find((e) => e.seq === seq)!;
      assert.equal(await s.pruneAudit('AU4', T0 + 2500), 3, 'entries 1-3 were made before');
      const ends = await s.auditEnds('AU4');
      assert.equal(ends.anchor?.seq, 3);
      assert.deepEqual(ends.anchor, { seq: 3, mac: entry(3).mac, text: JSON.stringify(entry(3)), previousMac: entry(2).mac }, 'the anchor: entry 3 whole, and the MAC before it');
      assert.equal(ends.head?.seq, 6);
      assert.deepEqual(await walk(s, 'AU4'), { ok: true, entries: 3, first: 4, last: 6 });
      assert.equal(await s.pruneAudit('AU4', T0 + 2500), 0, 'nothing more before then');
      assert.equal(await s.pruneAudit('AU4', T0 + 10_000), 3);
      const all = await s.auditEnds('AU4');
      assert.deepEqual(all, { head: ends.head, anchor: { seq: 6, mac: entry(6).mac, text: JSON.stringify(entry(6)), previousMac: entry(5).mac } }, 'all pruned: the anchor is the head, chained to entry 5 through the anchor before');
      assert.deepEqual(await walk(s, 'AU4'), { ok: true, entries: 0, first: null, last: null });
      await s.appendAudit('AU4', sealer<null>('AU4', 'session', calls, () => T0 + 20_000));
      assert.deepEqual(await walk(s, 'AU4'), { ok: true, entries: 1, first: 7, last: 7 });

      // made by instances whose clocks differ: a time range finds every entry in it, out of seq order too
      await s.createAccount(account('AU5'));
      for (const m of [6, 2, 8, 3]) await s.appendAudit('AU5', sealer<null>('AU5', 'session', calls, () => T0 + m * 60_000));
      assert.deepEqual((await s.listAudit('AU5', { limit: 10, from: T0 + 5 * 60_000 })).map((e) => e.seq), [3, 1]);
      assert.deepEqual((await s.listAudit('AU5', { limit: 10, to: T0 + 5 * 60_000, ascending: true })).map((e) => e.seq), [2, 4]);

      await s.appendAudit('GONE', sealer<null>('GONE', 'session', calls, () => T0 + 5000));
      assert.equal(await s.hasAuditChains(), true);
      const chains = (await s.auditAccounts()).filter((c) => c.accountId === 'AU4' || c.accountId === 'GONE');
      assert.deepEqual(chains, [
        { accountId: 'AU4', lastAt: T0 + 20_000, exists: true },
        { accountId: 'GONE', lastAt: T0 + 5000, exists: false },
      ]);
      await s.deleteAccountAudit('GONE');
      assert.deepEqual(await s.auditEnds('GONE'), { head: null, anchor: null });
      assert.deepEqual(await s.listAudit('GONE', { limit: 10 }), []);
      assert.equal((await s.auditAccounts()).some((c) => c.accountId === 'GONE'), false);
    });
  });
}
