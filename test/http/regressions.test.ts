// Regression tests for defects found in review of the enforcement core; each names the behaviour.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { TokenLookup } from '../../src/enforce/lookup.js';
import { tokenHash } from '../../src/domain/tokens.js';
import { createLogger } from '../../src/observability/logger.js';
import { streamPatternProblem } from '../../src/domain/matchers.js';
import type { Store } from '../../src/store/store.js';

const sqlite = () => new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-reg-')), 'db'), synchronous: 'NORMAL' });

async function app(overrides: Record<string, unknown> = {}) {
  const t = await testApp(sqlite(), overrides);
  const acct = await t.account();
  const mk = async (kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}, secret = acct.secret) => {
    const r = await request(t.app).post(`/api/${kind}_token`).set('authorization', `Bearer ${secret}`).send({ label: 'x', streams: [{ streamName: 'cam1' }], ...body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as { id: number; token: string };
  };
  return { t, acct, mk };
}

describe('regressions', () => {
  let t: TestApp;
  let acct: { id: string; secret: string };
  let mk: Awaited<ReturnType<typeof app>>['mk'];
  before(async () => {
    ({ t, acct, mk } = await app({ hooks: { secret: '', trustedProxies: [], omeSecret: '', accountInPath: true, mediamtx: { allowApiFrom: [], pathPrefix: 'live/' } } }));
  });

  it("another account's token never opens a stream whose account the caller names", async () => {
    const other = await t.account('attacker');
    const theirs = await mk('publish', { streams: [{ streamName: '.*', isRegex: true }] }, other.secret);
    const viaAuthorize = await request(t.app).post('/hooks/authorize').send({ action: 'publish', token: theirs.token, streamName: 'cam1', accountId: acct.id });
    assert.deepEqual([viaAuthorize.status, viaAuthorize.body.reason], [403, 'stream_not_allowed']);
    const viaMediamtx = await request(t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: theirs.token, action: 'publish', path: `live/${acct.id}/cam1`, protocol: 'rtmp', id: 'x', query: '' });
    assert.equal(viaMediamtx.status, 403);
    const own = await request(t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: theirs.token, action: 'publish', path: `live/${other.id}/cam1`, protocol: 'rtmp', id: 'y', query: '' });
    assert.equal(own.status, 200);
  });

  it('puts the account in the MediaMTX path of the director JWT when paths carry accounts', async () => {
    const p = await mk('publish');
    const r = await request(t.app).post('/api/director/publish').set('authorization', `Bearer ${p.token}`).send({ streamName: 'cam1' });
    const claims = JSON.parse(Buffer.from(r.body.data.jwt.split('.')[1], 'base64url').toString());
    assert.deepEqual(claims.mediamtx_permissions, [{ action: 'publish', path: `${acct.id}/cam1` }]);
  });

  it('refuses stream names that are not valid Unicode with 400, not 500', async () => {
    const r = await request(t.app).post('/api/director/subscribe').set('content-type', 'application/json').send('{"streamName":"cam\\ud800","streamAccountId":"X"}');
    assert.deepEqual([r.status, Object.keys(r.body.data.errors)], [400, ['streamName']]);
    const h = await request(t.app).post('/hooks/authorize').set('content-type', 'application/json').send('{"action":"subscribe","streamName":"\\udc00"}');
    assert.equal(h.status, 400);
  });

  it('answers a body with a bad Content-Encoding with 4xx, not 500', async () => {
    for (const p of ['/hooks/authorize', '/api/director/subscribe']) {
      const r = await request(t.app).post(p).set('content-type', 'application/json').set('content-encoding', 'gzip').send('{"not":"gzip"}');
      assert.ok(r.status >= 400 && r.status < 500, `${p}: ${r.status}`);
    }
  });

  it('keeps CORS headers on director errors so browsers can read them', async () => {
    const r = await request(t.app).post('/api/director/subscribe').set('origin', 'https://app.example.com').type('form').send('a=b');
    assert.equal(r.status, 415);
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example.com');
  });

  it('refuses a pattern that would escape the full-match wrapper', async () => {
    assert.match(streamPatternProblem('cam1)|(.*') ?? '', /not a valid regular expression/);
    const r = await request(t.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'x', streams: [{ streamName: 'cam1)|(.*', isRegex: true }] });
    assert.deepEqual([r.status, Object.keys(r.body.data.errors)], [400, ['streams[0].streamName']]);
  });

  it('refuses ids beyond the integer range instead of rounding them', async () => {
    const r = await request(t.app).get('/api/publish_token/9999999999999999').set('authorization', `Bearer ${acct.secret}`);
    assert.deepEqual([r.status, Object.keys(r.body.data.errors)], [400, ['id']]);
  });
});

describe('regressions: accounts and defaults', () => {
  it('opens token-less streams of the default account, in the director too', async () => {
    const store = sqlite();
    await store.createAccount({ id: 'DEFLT1', name: 'd', createdOn: new Date().toISOString(), secureViewer: false });
    const t = await testApp(store, { enforcement: { defaultAccountId: 'DEFLT1' } });
    const a = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1' });
    assert.deepEqual([a.status, a.body.accountId], [200, 'DEFLT1']);
    const d = await request(t.app).post('/api/director/subscribe').send({ streamName: 'cam1' });
    assert.equal(d.status, 200);
    assert.equal(d.body.data.streamAccountId, 'DEFLT1');
  });

  it('sees an account created after a decision cached it as missing', async () => {
    const store = sqlite();
    const t = await testApp(store);
    const ask = () => request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1', accountId: 'LATE01' });
    assert.equal((await ask()).status, 401);
    await store.createAccount({ id: 'LATE01', name: 'late', createdOn: new Date().toISOString(), secureViewer: false });
    assert.equal((await ask()).status, 200);
  });

  it('applies IP rules to director calls even when the client says Rtmp and RTMP is exempt', async () => {
    const { t, mk } = await app({ enforcement: { rtmpIpFilters: 'ignore' }, director: { rtmpPublishUrls: ['rtmp://ingest.example/live/{streamName}'] } });
    const p = await mk('publish', { allowedIpAddresses: ['10.0.0.0/8'] });
    const r = await request(t.app).post('/api/director/publish').set('authorization', `Bearer ${p.token}`).send({ streamName: 'cam1', streamType: 'Rtmp' });
    assert.deepEqual([r.status, r.body.data.reason], [403, 'ip_not_allowed']);
  });
});

describe('regressions: revocation during a shared token load', () => {
  it('a request that starts after a disable returned is denied, even while an older load is in flight', async () => {
    const inner = sqlite();
    // The next getToken holds its answer (the record it read) until released: the older load is in flight.
    let hold: { reached: () => void; released: Promise<void> } | undefined;
    const slow = new Proxy(inner, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop === 'getToken' && typeof v === 'function') {
          return async (...args: unknown[]) => {
            const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            const h = hold;
            hold = undefined;
            if (h) {
              h.reached();
              await h.released;
            }
            return r;
          };
        }
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as Store;
    const { newTokenRecord, applyTokenUpdate } = await import('../../src/domain/tokens.js');
    const tok = await inner.createToken(newTokenRecord('subscribe', 'A', { label: 'x', streams: [{ streamName: 'cam1' }] }, 'v'.repeat(64), Date.now()));
    const lookup = new TokenLookup(slow, { cacheMaxEntries: 100, cacheTtlMs: 0, storeTimeoutMs: 5000 });
    let release!: () => void;
    const reached = new Promise<void>((reached) => {
      hold = { reached, released: new Promise<void>((r) => (release = r)) };
    });
    const first = lookup.byHashFresh(tokenHash(tok.token));
    await reached; // the first load has read the record (active) and is held
    await inner.updateToken('A', 'subscribe', tok.id, (cur) => applyTokenUpdate(cur, { isActive: false }, Date.now(), () => 'x'));
    const second = lookup.byHashFresh(tokenHash(tok.token)); // starts while the older load is in flight
    release();
    assert.equal((await second)?.isActive, false, 'the request after the disable sees it');
    assert.equal((await first)?.isActive, true, 'the older request may still see its own read');
  });
});

describe('regressions: logs', () => {
  it('never logs the arguments ioredis attaches to a failed command', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const logger = createLogger('info', sink);
    const err = Object.assign(new Error('READONLY You can\'t write against a read only replica.'), {
      command: { name: 'eval', args: ['script', '5', 'k', '{"token":"5ecret5ecret5ecret5ecret5ecret5ecret5ecret5ecret5ecret5ecret1234"}'] },
    });
    logger.error({ err }, 'unhandled error');
    assert.equal(lines.length, 1);
    assert.ok(!lines[0].includes('5ecret'), lines[0]);
    assert.match(lines[0], /READONLY/);
  });
});
