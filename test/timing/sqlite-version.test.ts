// The embedded store answers account versions from memory (src/store/sqlite/sqlite-store.ts): its
// own writes are seen at once, another connection's writes to the same file (the CLI, a second
// instance) within the data_version poll, well within 1 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { testApp } from '../helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function files() {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-sqlite-version-'));
  return { file: path.join(dir, 'shared.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function setup(pollOnB?: number) {
  const f = files();
  const a = new SqliteStore({ file: f.file, synchronous: 'NORMAL' });
  const b = new SqliteStore({ file: f.file, synchronous: 'NORMAL', versionPollMs: pollOnB });
  const appA = await testApp(a);
  const appB = await testApp(b);
  const acct = await appA.account('shared');
  const tok = await request(appA.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'v', streams: [{ streamName: 'cam1' }] });
  assert.equal(tok.status, 200, JSON.stringify(tok.body));
  const decide = (app: typeof appA) => request(app.app).post('/hooks/authorize').send({ action: 'subscribe', token: tok.body.data.token, streamName: 'cam1' });
  return {
    a,
    b,
    appA,
    appB,
    acct,
    tokenId: tok.body.data.id as number,
    decide,
    close: async () => {
      await a.close();
      await b.close();
      f.remove();
    },
  };
}

const REFUSED = { allowed: false, reason: 'token_invalid', message: 'Unauthorized: Invalid token' };

test('a version written by another connection is seen after its poll, within 1 s', async () => {
  const s = await setup();
  try {
    const before = await s.b.accountVersion(s.acct.id);
    assert.equal((await s.decide(s.appB)).status, 200);
    const del = await request(s.appA.app).delete(`/api/subscribe_token/${s.tokenId}`).set('authorization', `Bearer ${s.acct.secret}`);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    const started = Date.now();
    let r = await s.decide(s.appB);
    while (r.status === 200 && Date.now() - started < 2000) {
      await sleep(20);
      r = await s.decide(s.appB);
    }
    const ms = Date.now() - started;
    assert.equal(r.status, 401, JSON.stringify(r.body));
    const { decisionId: _d, ...body } = r.body;
    assert.deepEqual(body, REFUSED);
    assert.ok(ms < 1000, `seen after ${ms} ms`);
    assert.equal(await s.b.accountVersion(s.acct.id), before + 1);
  } finally {
    await s.close();
  }
});

test('until the poll runs, the remembered version answers (the poll is what notices a foreign write)', async () => {
  const s = await setup(3_600_000);
  try {
    const before = await s.b.accountVersion(s.acct.id);
    assert.equal((await s.decide(s.appB)).status, 200);
    const del = await request(s.appA.app).delete(`/api/subscribe_token/${s.tokenId}`).set('authorization', `Bearer ${s.acct.secret}`);
    assert.equal(del.status, 200);
    await sleep(300);
    assert.equal(await s.a.accountVersion(s.acct.id), before + 1);
    assert.equal(await s.b.accountVersion(s.acct.id), before);
    assert.equal((await s.decide(s.appB)).status, 200);
  } finally {
    await s.close();
  }
});

test("this connection's own write is seen at once", async () => {
  const s = await setup(3_600_000);
  try {
    const before = await s.b.accountVersion(s.acct.id);
    assert.equal((await s.decide(s.appB)).status, 200);
    const del = await request(s.appB.app).delete(`/api/subscribe_token/${s.tokenId}`).set('authorization', `Bearer ${s.acct.secret}`);
    assert.equal(del.status, 200);
    assert.equal(await s.b.accountVersion(s.acct.id), before + 1);
    const r = await s.decide(s.appB);
    assert.equal(r.status, 401, JSON.stringify(r.body));
    const { decisionId: _d, ...body } = r.body;
    assert.deepEqual(body, REFUSED);
  } finally {
    await s.close();
  }
});

test('a rolled-back write leaves the remembered version right', async () => {
  const f = files();
  const s = new SqliteStore({ file: f.file, synchronous: 'NORMAL', versionPollMs: 3_600_000 });
  try {
    const app = await testApp(s);
    const acct = await app.account('rb');
    const v0 = await s.accountVersion(acct.id);
    assert.throws(() =>
      s.batch(() => {
        void s.createToken({
          accountId: acct.id, kind: 'subscribe', tokenHash: 'h'.repeat(64), label: 'x', streams: [{ streamName: 'a' }],
        } as never).catch(() => {});
        throw new Error('rollback');
      }),
    );
    assert.equal(await s.accountVersion(acct.id), v0);
  } finally {
    await s.close();
    f.remove();
  }
});
