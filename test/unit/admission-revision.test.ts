// A limited token's admission checks the token's revision in its own store step, so the decision
// before it takes the cached record without reading the account version. A change made by another
// instance (here: another handle on the same database file, which this one's in-memory versions
// do not see yet) must still be seen by the very next admission: the step finds the revision
// moved, registers nothing, and the decision is made again on a fresh read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Enforcer, type AdmissionStep } from '../../src/admission/pipeline.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';
import { applyTokenUpdate, newTokenRecord } from '../../src/domain/tokens.js';
import { decision } from '../../src/policy/types.js';
import { counting } from '../helpers/counting-store.js';
import { sessionRecord } from '../helpers/sessions.js';

describe('a limited token’s admission checks the token revision', () => {
  async function setup() {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-adm-')), 'db');
    const mine = new SqliteStore({ file, synchronous: 'NORMAL' });
    const other = new SqliteStore({ file, synchronous: 'NORMAL' }); // another instance's writes
    await mine.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    const { store, calls } = counting(mine);
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    let n = 0;
    // the admission step as src/sessions/control.ts runs it for a token with limits
    const step: AdmissionStep = {
      passes: (d) => !d.allowed || d.limits === undefined,
      admit: async (d, timed) => {
        const r = await timed(
          store.admitSession(sessionRecord({ sessionId: `c${++n}`, accountId: 'ACC001', tokenId: d.tokenId }), 60, {
            maxConcurrent: d.limits?.maxConcurrent,
            maxUses: d.limits?.maxUses,
            tokenRev: d.tokenRev,
          }),
        );
        if (!r.admitted) return r.reason === 'token_changed' ? r.reason : decision(r.reason, { streamName: d.streamName, accountId: d.accountId, tokenId: d.tokenId });
        return d;
      },
    };
    const ask = (token: string) =>
      enforcer.admit({ action: 'subscribe', token, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'rtmp', admission: 'session' }, 'store', 'test', step);
    const close = async () => {
      await mine.close();
      await other.close();
    };
    return { mine, other, calls, ask, close };
  }

  it('a cached admission costs admitSession alone; a token disabled on another instance is refused at the next admission, nothing registered', async () => {
    const { mine, other, calls, ask, close } = await setup();
    try {
      const t = await mine.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'l', streams: [{ streamName: 'cam1' }], maxConcurrentSessions: 10 }, 'a'.repeat(64), Date.now()));
      assert.equal((await ask(t.token)).allowed, true); // warms the cache
      calls.length = 0;
      assert.equal((await ask(t.token)).allowed, true);
      assert.deepEqual(calls, ['admitSession'], 'no version read: the admission confirms the cached record');

      const seen = mine.accountVersionKnown('ACC001');
      await other.updateToken('ACC001', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { isActive: false }, Date.now(), () => 'x'.repeat(64)));
      assert.notEqual(seen, undefined);
      assert.equal(mine.accountVersionKnown('ACC001'), seen, 'this instance has not noticed the write yet');
      assert.notEqual(await other.accountVersion('ACC001'), seen, 'the write moved the version');
      calls.length = 0;
      const d = await ask(t.token);
      assert.deepEqual([d.allowed, d.reason], [false, 'token_disabled']);
      assert.equal(calls[0], 'admitSession', 'the cached record went to the admission, which refused it');
      assert.equal(calls.filter((c) => c === 'admitSession').length, 1, `one admission attempt: ${calls.join(',')}`);
      assert.deepEqual((await mine.listSessions('ACC001', { tokenId: t.id }, { offset: 0, limit: 10 })).items.map((s) => s.sessionId), ['c1', 'c2']);
    } finally {
      await close();
    }
  });

  it('a harmless edit on another instance: the admission is made again on the fresh record and counts once', async () => {
    const { mine, other, calls, ask, close } = await setup();
    try {
      const t = await mine.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'l', streams: [{ streamName: 'cam1' }], maxUses: 2 }, 'b'.repeat(64), Date.now()));
      assert.equal((await ask(t.token)).allowed, true); // use 1, and the cache holds the record
      await other.updateToken('ACC001', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { label: 'renamed' }, Date.now(), () => 'x'.repeat(64)));
      calls.length = 0;
      assert.equal((await ask(t.token)).allowed, true, 'use 2');
      assert.equal(calls.filter((c) => c === 'admitSession').length, 2, `refused as changed, then admitted: ${calls.join(',')}`);
      const third = await ask(t.token);
      assert.deepEqual([third.allowed, third.reason], [false, 'uses_exhausted'], 'the refused attempt counted no use');
    } finally {
      await close();
    }
  });
});
