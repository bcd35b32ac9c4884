// The audit log of management changes over HTTP and the CLI on every store (docs/api.md#audit-log):
// every management write of the API, the admin API and the CLI finds its entry (actor, resource,
// action, address, request id); no secret or token value reaches an entry; the export is JSON Lines;
// verify names the first broken link of a chain edited, deleted, reordered, forged, unsealed or cut
// short directly in the store; retention keeps an anchor the rest verifies from; an account's chain
// goes with it; heads are logged on a timer.
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import Database from 'better-sqlite3';
import type { Redis } from 'ioredis';
import type { StoreFactory } from '../helpers/stores.js';
import type { Store } from '../../src/store/store.js';
import { testApp, ADMIN_KEY, type TestApp } from '../helpers/app.js';
import { runCli } from '../../src/cli.js';
import { keys } from '../../src/store/redis/keys.js';
import { sha256Hex } from '../../src/domain/secrets.js';
import { AuditLog, AUDIT_SWEEP_MS } from '../../src/audit/log.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';
import type { AuditEntry } from '../../src/domain/audit.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { RedisStore } from '../../src/store/redis/redis-store.js';
import type { Logger } from '../../src/observability/logger.js';
import { AUDIT_REFUSING_WARNING } from '../../src/observability/warnings.js';

const KEY = 'http-suite-audit-key-0123456789abcdefgh';
const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const DAY = 86_400_000;
const ISSUER_SECRET = 'issuer-hmac-secret-0123456789abcdef';
const EDGE_KEY = 'ab'.repeat(16);

/** Direct access to a store's audit rows, as someone who can write the store has it. */
interface Tamper {
  entries(accountId: string): Promise<Array<{ pos: number; text: string }>>;
  replace(accountId: string, pos: number, text: string): Promise<void>;
  remove(accountId: string, pos: number): Promise<void>;
  setHead(accountId: string, seq: number, mac: string): Promise<void>;
  setAnchor(accountId: string, anchor: { seq: number; mac: string; text: string; previousMac: string }): Promise<void>;
  deleteAccount(accountId: string): Promise<void>;
  /** The environment a CLI run needs to open this store. */
  cliEnv(): Record<string, string>;
  close(): Promise<void>;
}

function tamperOf(store: Store): Tamper {
  if (store.kind === 'sqlite') {
    const file = (store as SqliteStore).file;
    const db = new Database(file);
    return {
      entries: async (a) => (db.prepare('SELECT seq AS pos, data AS text FROM audit_entries WHERE account_id = ? ORDER BY seq').all(a) as Array<{ pos: number; text: string }>),
      replace: async (a, pos, text) => {
        if (db.prepare('UPDATE audit_entries SET data = ? WHERE account_id = ? AND seq = ?').run(text, a, pos).changes === 0) {
          db.prepare("INSERT INTO audit_entries (account_id, seq, at_ms, resource, actor, data) VALUES (?, ?, 0, '', '', ?)").run(a, pos, text);
        }
      },
      remove: async (a, pos) => void db.prepare('DELETE FROM audit_entries WHERE account_id = ? AND seq = ?').run(a, pos),
      setHead: async (a, seq, mac) => void db.prepare('UPDATE audit_heads SET seq = ?, mac = ? WHERE account_id = ?').run(seq, mac, a),
      setAnchor: async (a, x) =>
        void db.prepare('UPDATE audit_heads SET anchor_seq = ?, anchor_mac = ?, anchor_text = ?, anchor_prev = ? WHERE account_id = ?').run(x.seq, x.mac, x.text, x.previousMac, a),
      deleteAccount: async (a) => void db.prepare('DELETE FROM accounts WHERE id = ?').run(a),
      cliEnv: () => ({ STREAMGATE_DATA_DIR: path.dirname(file), STREAMGATE_STORE_SQLITEFILE: path.basename(file), STREAMGATE_AUDIT_KEY: KEY }),
      close: async () => void db.close(),
    };
  }
  const main = (store as RedisStore).client as Redis;
  const dup = main.duplicate();
  const ready = dup.connect().then(() => dup);
  return {
    entries: async (a) => {
      const flat = await (await ready).zrange(keys.auditLog(a), 0, -1, 'WITHSCORES');
      const out: Array<{ pos: number; text: string }> = [];
      for (let i = 0; i < flat.length; i += 2) out.push({ pos: Number(flat[i + 1]), text: flat[i] });
      return out;
    },
    replace: async (a, pos, text) => {
      const r = await ready;
      await r.zremrangebyscore(keys.auditLog(a), pos, pos);
      await r.zadd(keys.auditLog(a), pos, text);
    },
    remove: async (a, pos) => void (await (await ready).zremrangebyscore(keys.auditLog(a), pos, pos)),
    setHead: async (a, seq, mac) => void (await (await ready).hset(keys.auditHead(a), 'seq', seq, 'mac', mac)),
    setAnchor: async (a, x) => void (await (await ready).hset(keys.auditHead(a), 'anchorSeq', x.seq, 'anchorMac', x.mac, 'anchorText', x.text, 'anchorPrev', x.previousMac)),
    deleteAccount: async (a) => void (await (await ready).del(keys.account(a))),
    cliEnv: () => ({ REDIS_URL: `redis://${main.options.host}:${main.options.port}`, STREAMGATE_REDIS_KEYPREFIX: main.options.keyPrefix ?? '', STREAMGATE_AUDIT_KEY: KEY }),
    close: async () => void (await ready).disconnect(),
  };
}

export function auditSuite(factory: StoreFactory): void {
  describe(`audit log: ${factory.name}`, () => {
    let now = T0;
    let store: Store;
    let t: TestApp;
    let tamper: Tamper;

    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await tamper?.close();
      await factory.teardown();
    });

    const fresh = async (audit: Record<string, unknown> = {}) => {
      now = T0;
      await tamper?.close();
      store = await factory.make({ now: () => now });
      t = await testApp(store, { audit: Object.assign({ key: KEY }, audit), webhooks: { allowPrivateTargets: true } }, { now: () => now });
      tamper = tamperOf(store);
    };
    /** Requests with a bearer, from a given forwarded address, with a request id. */
    const call = (bearer: string, rid: string) => {
      const set = (r: request.Test) => r.set('authorization', `Bearer ${bearer}`).set('x-request-id', rid);
      return {
        get: (p: string) => set(request(t.app).get(p)),
        post: (p: string, body?: object) => set(request(t.app).post(p)).send(body),
        put: (p: string, body?: object) => set(request(t.app).put(p)).send(body),
        patch: (p: string, body?: object) => set(request(t.app).patch(p)).send(body),
        delete: (p: string) => set(request(t.app).delete(p)),
      };
    };
    const newest = async (secret: string): Promise<AuditEntry> => {
      const r = await call(secret, 'read').get('/api/audit?limit=1');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data.entries[0] as AuditEntry;
    };
    const verify = async (secret: string, q = '') => {
      const r = await call(secret, 'verify').get(`/api/audit/verify${q}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { ok: boolean; entries: number; broken?: { seq: number; problem: string; detail: string }; head: { seq: number; mac: string } };
    };
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(args, { out: (s) => out.push(s), err: (s) => err.push(s) }, tamper.cliEnv());
      assert.equal(code, 0, `${args.join(' ')}: ${err.join('\n')}`);
      return out.join('\n');
    };

    it('every management write of the API, the admin API and the CLI finds its entry: actor, resource, action, address, request id', async () => {
      await fresh();
      const adminCall = (rid: string) => call(ADMIN_KEY, rid);
      const created = await adminCall('c-1').post('/admin/accounts', { name: 'audited' });
      assert.equal(created.status, 201);
      const id = created.body.data.id as string;
      let secret = created.body.data.apiSecret as string;
      const seen: string[] = [secret];
      const actor = () => `api-secret:${sha256Hex(secret).slice(0, 8)}`;
      let n = 0;
      const ids: Record<string, number> = {};

      type Step = { name: string; by: 'api' | 'admin' | 'cli'; run: (rid: string) => Promise<unknown>; resource: string; action: string; resourceId?: () => string };
      const steps: Step[] = [
        { name: 'admin: account settings', by: 'admin', run: (rid) => adminCall(rid).put(`/admin/accounts/${id}`, { secureViewer: true, name: 'audited 2' }), resource: 'account', action: 'update' },
        {
          name: 'admin: secret refresh',
          by: 'admin',
          run: async (rid) => {
            secret = (await adminCall(rid).post(`/admin/accounts/${id}/secret`)).body.data.apiSecret;
            seen.push(secret);
          },
          resource: 'apiSecret',
          action: 'update',
        },
        {
          name: 'api: secret rotation',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/account/secret');
            seen.push(r.body.data.apiSecret);
            secret = r.body.data.apiSecret;
            return r;
          },
          resource: 'apiSecret',
          action: 'update',
        },
        { name: 'api: geo defaults', by: 'api', run: (rid) => call(secret, rid).post('/api/geo/account', { updateDeniedCountries: ['FR'] }), resource: 'account', action: 'update' },
        { name: 'api: default cluster', by: 'api', run: (rid) => call(secret, rid).put('/api/cluster', { defaultCluster: 'auto' }), resource: 'account', action: 'update' },
        { name: 'api: geo cascade', by: 'api', run: (rid) => call(secret, rid).put('/api/account/geo_cascade', { isEnabled: true, clusters: ['all'] }), resource: 'account', action: 'update' },
        {
          name: 'api: publish token create',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/publish_token', { label: 'pub', streams: [{ streamName: 'cam1' }], subscribeRequiresAuth: true });
            ids.pub = r.body.data.id;
            seen.push(r.body.data.token);
          },
          resource: 'publishToken',
          action: 'create',
          resourceId: () => String(ids.pub),
        },
        { name: 'api: publish token update', by: 'api', run: (rid) => call(secret, rid).put(`/api/publish_token/${ids.pub}`, { label: 'pub2' }), resource: 'publishToken', action: 'update', resourceId: () => String(ids.pub) },
        {
          name: 'api: publish token refresh (v2)',
          by: 'api',
          run: async (rid) => seen.push((await call(secret, rid).put(`/api/v2/publish_token/${ids.pub}`, { refreshToken: true })).body.data.token),
          resource: 'publishToken',
          action: 'update',
          resourceId: () => String(ids.pub),
        },
        { name: 'api: publish token disable', by: 'api', run: (rid) => call(secret, rid).patch('/api/publish_token/disable', { tokenIds: [ids.pub] }), resource: 'publishToken', action: 'update', resourceId: () => String(ids.pub) },
        {
          name: 'api: subscribe token create',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/subscribe_token', { label: 'sub', streams: [{ streamName: 'cam1' }] });
            ids.sub = r.body.data.id;
            seen.push(r.body.data.token);
          },
          resource: 'subscribeToken',
          action: 'create',
          resourceId: () => String(ids.sub),
        },
        { name: 'api: subscribe token update', by: 'api', run: (rid) => call(secret, rid).put(`/api/subscribe_token/${ids.sub}`, { isActive: false }), resource: 'subscribeToken', action: 'update', resourceId: () => String(ids.sub) },
        {
          name: 'api: subscribe token refresh (v2)',
          by: 'api',
          run: async (rid) => seen.push((await call(secret, rid).put(`/api/v2/subscribe_token/${ids.sub}`, { refreshToken: true })).body.data.token),
          resource: 'subscribeToken',
          action: 'update',
          resourceId: () => String(ids.sub),
        },
        { name: 'api: subscribe token delete', by: 'api', run: (rid) => call(secret, rid).delete(`/api/subscribe_token/${ids.sub}`), resource: 'subscribeToken', action: 'delete', resourceId: () => String(ids.sub) },
        { name: 'api: publish token delete', by: 'api', run: (rid) => call(secret, rid).delete(`/api/publish_token/${ids.pub}`), resource: 'publishToken', action: 'delete', resourceId: () => String(ids.pub) },
        { name: 'api: secured stream removed', by: 'api', run: (rid) => call(secret, rid).delete('/api/secured_streams/cam1'), resource: 'securedStream', action: 'delete', resourceId: () => 'cam1' },
        {
          name: 'api: webhook create',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/webhooks', { url: 'https://127.0.0.1:9/hook', isFeedHooks: true });
            ids.hook = r.body.data.id;
            seen.push(r.body.data.secret);
          },
          resource: 'webhook',
          action: 'create',
          resourceId: () => String(ids.hook),
        },
        {
          name: 'api: webhook update (new secret)',
          by: 'api',
          run: async (rid) => seen.push((await call(secret, rid).put(`/api/webhooks/${ids.hook}`, { refreshSecret: true, isRecordingHooks: true })).body.data.secret),
          resource: 'webhook',
          action: 'update',
          resourceId: () => String(ids.hook),
        },
        { name: 'api: webhook delete', by: 'api', run: (rid) => call(secret, rid).delete(`/api/webhooks/${ids.hook}`), resource: 'webhook', action: 'delete', resourceId: () => String(ids.hook) },
        {
          name: 'api: policy token for issuers',
          by: 'api',
          run: async (rid) => {
            ids.policy = (await call(secret, rid).post('/api/subscribe_token', { label: 'policy', streams: [{ streamName: 'cam1' }] })).body.data.id;
          },
          resource: 'subscribeToken',
          action: 'create',
        },
        {
          name: 'api: JWT issuer create',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/issuers', { label: 'jwt', policyTokenId: ids.policy, issuer: 'https://idp.audit.example/', algorithms: ['HS256'], secret: ISSUER_SECRET });
            assert.equal(r.status, 201, JSON.stringify(r.body));
            ids.issuer = r.body.data.id;
          },
          resource: 'issuer',
          action: 'create',
          resourceId: () => String(ids.issuer),
        },
        { name: 'api: issuer update', by: 'api', run: (rid) => call(secret, rid).put(`/api/issuers/${ids.issuer}`, { label: 'jwt2', secret: `${ISSUER_SECRET}-2` }), resource: 'issuer', action: 'update', resourceId: () => String(ids.issuer) },
        { name: 'api: issuer delete', by: 'api', run: (rid) => call(secret, rid).delete(`/api/issuers/${ids.issuer}`), resource: 'issuer', action: 'delete', resourceId: () => String(ids.issuer) },
        {
          name: 'api: signed-URL issuer create',
          by: 'api',
          run: async (rid) => {
            const r = await call(secret, rid).post('/api/issuers', { label: 'edge', type: 'akamai-edgeauth', policyTokenId: ids.policy, issuer: null, secret: EDGE_KEY });
            assert.equal(r.status, 201, JSON.stringify(r.body));
          },
          resource: 'issuer',
          action: 'create',
        },
        {
          name: 'api: recording forgotten',
          by: 'api',
          run: async (rid) => {
            const rec = await store.startRecording({ accountId: id, streamName: 'cam1', recordedOn: new Date(now).toISOString() });
            ids.rec = rec.id;
            return call(secret, rid).delete(`/api/recordings/${rec.id}`);
          },
          resource: 'recording',
          action: 'delete',
          resourceId: () => String(ids.rec),
        },
        {
          name: 'api: session cut',
          by: 'api',
          run: async (rid) => {
            await store.startSession(
              { id: 'sess-audit-1', caller: 'mediamtx', sessionId: 'c-1', action: 'subscribe', accountId: id, streamName: 'cam1', startedOn: new Date(now).toISOString(), lastSeenOn: new Date(now).toISOString() },
              60,
            );
            const r = await call(secret, rid).delete('/api/sessions/sess-audit-1');
            assert.equal(r.status, 200, JSON.stringify(r.body));
          },
          resource: 'session',
          action: 'cut',
          resourceId: () => 'sess-audit-1',
        },
        { name: 'api: stream stop', by: 'api', run: (rid) => call(secret, rid).post('/api/stream/stop', { streamId: `${id}/cam1` }), resource: 'stream', action: 'stop', resourceId: () => 'cam1' },
        { name: 'api: stop every stream', by: 'api', run: (rid) => call(secret, rid).post('/api/stream/stop/all'), resource: 'stream', action: 'stop', resourceId: () => '*' },
        {
          name: 'cli: token create',
          by: 'cli',
          run: async () => {
            const r = JSON.parse(await cli('tokens', 'create', '--account', id, '--kind', 'publish', '--label', 'from-cli', '--stream', 'cam2', '--json'));
            ids.cliTok = r.id;
            seen.push(r.token);
          },
          resource: 'publishToken',
          action: 'create',
          resourceId: () => String(ids.cliTok),
        },
        { name: 'cli: token disable', by: 'cli', run: () => cli('tokens', 'disable', String(ids.cliTok), '--account', id), resource: 'publishToken', action: 'update', resourceId: () => String(ids.cliTok) },
        { name: 'cli: token enable', by: 'cli', run: () => cli('tokens', 'enable', String(ids.cliTok), '--account', id), resource: 'publishToken', action: 'update', resourceId: () => String(ids.cliTok) },
        { name: 'cli: token delete', by: 'cli', run: () => cli('tokens', 'delete', String(ids.cliTok), '--account', id), resource: 'publishToken', action: 'delete', resourceId: () => String(ids.cliTok) },
        {
          name: 'cli: issuer create',
          by: 'cli',
          run: async () => {
            const body = JSON.stringify({ label: 'cli', policyTokenId: ids.policy, issuer: 'https://cli.audit.example/', algorithms: ['RS256'], jwksUrl: 'https://93.184.215.14/jwks' });
            ids.cliIssuer = JSON.parse(await cli('issuers', 'create', '--account', id, '--body', body, '--json')).id;
          },
          resource: 'issuer',
          action: 'create',
          resourceId: () => String(ids.cliIssuer),
        },
        { name: 'cli: issuer update', by: 'cli', run: () => cli('issuers', 'update', String(ids.cliIssuer), '--account', id, '--body', '{"label":"cli2"}'), resource: 'issuer', action: 'update', resourceId: () => String(ids.cliIssuer) },
        { name: 'cli: issuer delete', by: 'cli', run: () => cli('issuers', 'delete', String(ids.cliIssuer), '--account', id), resource: 'issuer', action: 'delete', resourceId: () => String(ids.cliIssuer) },
        {
          name: 'cli: secret refresh',
          by: 'cli',
          run: async () => {
            secret = JSON.parse(await cli('accounts', 'secret', 'refresh', id)).apiSecret;
            seen.push(secret);
          },
          resource: 'apiSecret',
          action: 'update',
        },
        { name: 'cli: secret delete', by: 'cli', run: () => cli('accounts', 'secret', 'delete', id), resource: 'apiSecret', action: 'delete' },
        { name: 'admin: secret delete', by: 'admin', run: (rid) => adminCall(rid).delete(`/admin/accounts/${id}/secret`), resource: 'apiSecret', action: 'delete' },
      ];

      // the admin's create is the first entry
      const first = (await call(secret, 'r').get('/api/audit?limit=100')).body.data.entries as AuditEntry[];
      assert.deepEqual(
        first.map((e) => [e.seq, e.actor, e.resource, e.action, e.resourceId, e.requestId, e.address]),
        [[1, 'admin', 'account', 'create', id, 'c-1', '127.0.0.1']],
      );
      n = 1;
      for (const step of steps) {
        const rid = `rid-${n + 1}`;
        const by = step.by === 'admin' ? 'admin' : step.by === 'cli' ? 'cli' : actor();
        const r = (await step.run(rid)) as { status?: number; body?: unknown } | undefined;
        if (r && typeof r === 'object' && 'status' in r && typeof r.status === 'number') assert.ok(r.status < 300, `${step.name}: ${r.status} ${JSON.stringify(r.body)}`);
        // read with a live secret: the admin's after the last step, which deleted it
        const reader = step.name === 'admin: secret delete' || step.name === 'cli: secret delete' ? (await call(ADMIN_KEY, 'x').post(`/admin/accounts/${id}/secret`)).body.data.apiSecret : secret;
        if (reader !== secret) seen.push(reader);
        const e = await newest(reader);
        const mine = reader !== secret ? (await call(reader, 'x').get(`/api/audit?limit=2`)).body.data.entries[1] : e;
        // a secret made again after a delete is a create
        if (reader !== secret) assert.deepEqual([e.actor, e.resource, e.action], ['admin', 'apiSecret', 'create']);
        n++;
        assert.equal(mine.seq, n, `${step.name}: entry ${n}`);
        assert.deepEqual(
          [mine.actor, mine.resource, mine.action, mine.requestId, mine.address],
          [by, step.resource, step.action, step.by === 'cli' ? null : rid, step.by === 'cli' ? null : '127.0.0.1'],
          step.name,
        );
        if (step.resourceId) assert.equal(mine.resourceId, step.resourceId(), step.name);
        if (reader !== secret) {
          secret = reader;
          n++; // that secret's create is an entry too
        }
      }

      // the first write of an API secret shows its actor as the first 8 hex of its hash, never more
      const all = (await call(secret, 'r').get('/api/audit/export')).text;
      const lines = all.trim().split('\n').map((l) => JSON.parse(l) as AuditEntry);
      assert.equal(lines.length, n);
      assert.deepEqual(lines.map((e) => e.seq), Array.from({ length: n }, (_, i) => i + 1), 'oldest first, every seq');
      // no secret or token value, API secret, webhook secret, issuer secret or key, nor a secret's hash beyond the actor's 8 digits
      for (const value of [...seen, ISSUER_SECRET, EDGE_KEY, ...seen.map((s) => sha256Hex(s))]) assert.ok(!all.includes(value), `a secret value in the log: ${value.slice(0, 12)}…`);
      const refresh = lines.find((e) => e.resource === 'publishToken' && e.requestId === 'rid-10');
      assert.deepEqual(refresh?.changes.token, { from: '***', to: 'changed' });
      const hook = lines.find((e) => e.resource === 'webhook' && e.action === 'update');
      assert.deepEqual(hook?.changes.secret, { from: '***', to: 'changed' });
      assert.deepEqual(hook?.changes.isRecordingHooks, { from: false, to: true });
      const settings = lines.find((e) => e.resource === 'account' && e.requestId === 'rid-2');
      assert.deepEqual(settings?.changes, { name: { from: 'audited', to: 'audited 2' }, secureViewer: { from: false, to: true } });
      assert.deepEqual((await verify(secret)).ok, true);
    });

    it('lists newest first with filters and a cursor, exports JSON Lines, and refuses another account nothing of its own', async () => {
      await fresh();
      const a = await t.account('list a');
      const b = await t.account('list b');
      for (let i = 0; i < 3; i++) await call(a.secret, `t${i}`).post('/api/subscribe_token', { label: `s${i}`, streams: [{ streamName: 'cam1' }] });
      now += 60_000;
      await call(a.secret, 'late').post('/api/geo/account', { updateDeniedCountries: ['FR'] });
      const page = await call(a.secret, 'r').get('/api/audit?limit=2');
      assert.deepEqual(page.body.data.entries.map((e: AuditEntry) => e.seq), [5, 4]);
      assert.equal(page.body.data.next, 4);
      const rest = await call(a.secret, 'r').get('/api/audit?limit=10&cursor=4');
      assert.deepEqual(rest.body.data.entries.map((e: AuditEntry) => e.seq), [3, 2, 1]);
      assert.equal(rest.body.data.next, null);
      const tokens = await call(a.secret, 'r').get('/api/audit?resource=subscribeToken');
      assert.deepEqual(tokens.body.data.entries.map((e: AuditEntry) => e.seq), [4, 3, 2]);
      const admin = await call(a.secret, 'r').get('/api/audit?actor=admin');
      assert.deepEqual(admin.body.data.entries.map((e: AuditEntry) => [e.seq, e.resource]), [[1, 'account']]);
      const late = await call(a.secret, 'r').get(`/api/audit?from=${new Date(T0 + 1).toISOString()}`);
      assert.deepEqual(late.body.data.entries.map((e: AuditEntry) => e.seq), [5]);
      const early = await call(a.secret, 'r').get(`/api/audit?to=${new Date(T0 + 1).toISOString()}`);
      assert.deepEqual(early.body.data.entries.map((e: AuditEntry) => e.seq), [4, 3, 2, 1]);
      const bad = await call(a.secret, 'r').get('/api/audit?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z');
      assert.equal(bad.status, 400);
      const exp = await call(a.secret, 'r').get('/api/audit/export?resource=subscribeToken');
      assert.equal(exp.status, 200);
      assert.match(exp.headers['content-type'], /^application\/x-ndjson/);
      assert.deepEqual(exp.text.trim().split('\n').map((l) => (JSON.parse(l) as AuditEntry).seq), [2, 3, 4]);
      // B sees its own chain only
      const theirs = await call(b.secret, 'r').get('/api/audit');
      assert.deepEqual(theirs.body.data.entries.map((e: AuditEntry) => [e.seq, e.accountId]), [[1, b.id]]);
      assert.equal((await request(t.app).get('/api/audit')).status, 401);
    });

    it('verify names the first broken link of a chain edited, deleted, reordered, forged or unsealed in the store, and a tail cut off against a logged head', async () => {
      await fresh();
      const a = await t.account('tampered');
      for (let i = 0; i < 5; i++) await call(a.secret, `t${i}`).post('/api/subscribe_token', { label: `s${i}`, streams: [{ streamName: 'cam1' }] });
      const sound = await verify(a.secret);
      assert.deepEqual([sound.ok, sound.entries, sound.head.seq], [true, 6, 6]);
      const rows = await tamper.entries(a.id);
      const text = (seq: number) => rows.find((r) => r.pos === seq)!.text;
      const restore = async () => {
        for (const r of rows) await tamper.replace(a.id, r.pos, r.text);
        await tamper.setHead(a.id, sound.head.seq, sound.head.mac);
        assert.equal((await verify(a.secret)).ok, true, 'restored');
      };
      const broken = async (q = '') => {
        const v = await verify(a.secret, q);
        assert.equal(v.ok, false, JSON.stringify(v));
        return [v.broken!.seq, v.broken!.problem];
      };

      // edited: a label changed in entry 3
      await tamper.replace(a.id, 3, text(3).replace('"s1"', '"evil"'));
      assert.deepEqual(await broken(), [3, 'edited']);
      await restore();
      // deleted: entry 4 gone
      await tamper.remove(a.id, 4);
      assert.deepEqual(await broken(), [4, 'missing']);
      await restore();
      // reordered: entries 2 and 3 swapped
      await tamper.replace(a.id, 2, text(3));
      await tamper.replace(a.id, 3, text(2));
      assert.deepEqual(await broken(), [2, 'out_of_order']);
      await restore();
      // forged: an entry appended with a made-up MAC, the head moved to it
      const forged = JSON.stringify(Object.assign(JSON.parse(text(6)) as AuditEntry, { seq: 7, actor: 'admin', mac: 'e'.repeat(64) }));
      await tamper.replace(a.id, 7, forged);
      await tamper.setHead(a.id, 7, 'e'.repeat(64));
      assert.deepEqual(await broken(), [7, 'edited']);
      await tamper.remove(a.id, 7);
      await restore();
      // unsealed: an entry without its MAC
      const { mac: _mac, ...bare } = JSON.parse(text(5)) as AuditEntry;
      await tamper.replace(a.id, 5, JSON.stringify(bare));
      assert.deepEqual(await broken(), [5, 'unsealed']);
      await restore();
      // the tail cut off with the head moved back: unseen, except against the head logged before
      await tamper.remove(a.id, 6);
      await tamper.remove(a.id, 5);
      const h4 = JSON.parse(text(4)) as AuditEntry;
      await tamper.setHead(a.id, 4, h4.mac);
      assert.equal((await verify(a.secret)).ok, true, 'a cut tail with its head moved back verifies alone');
      assert.deepEqual(await broken(`?seq=${sound.head.seq}&mac=${sound.head.mac}`), [5, 'missing']);
      await restore();
      const logged = await verify(a.secret, `?seq=3&mac=${(JSON.parse(text(3)) as AuditEntry).mac}`);
      assert.deepEqual([logged.ok, (logged as { logged?: string }).logged], [true, 'matched']);
      assert.equal((await call(a.secret, 'v').get('/api/audit/verify?seq=3')).status, 400, 'seq without mac');
    });

    it('retention removes old entries and keeps an anchor the rest verifies from; a deleted account takes its chain, unless kept', async () => {
      await fresh({ retentionDays: 30, keepAfterAccountDeleteDays: 10 });
      const a = await t.account('old');
      await call(a.secret, 'x').post('/api/subscribe_token', { label: 'a', streams: [{ streamName: 'cam1' }] });
      now += 20 * DAY;
      await call(a.secret, 'y').post('/api/subscribe_token', { label: 'b', streams: [{ streamName: 'cam1' }] });
      now += 15 * DAY; // entries 1 and 2 are 35 days old, 3 is 15
      await t.services.audit.sweep();
      const v = await verify(a.secret);
      assert.deepEqual([v.ok, v.entries, (v as unknown as { anchor: { seq: number } }).anchor.seq, v.head.seq], [true, 1, 2, 3]);
      assert.deepEqual((await call(a.secret, 'r').get('/api/audit')).body.data.entries.map((e: AuditEntry) => e.seq), [3]);

      const gone = await t.account('gone');
      await tamper.deleteAccount(gone.id);
      await t.services.audit.sweep();
      assert.notEqual((await store.auditEnds(gone.id)).head, null, 'kept 10 days after its newest entry');
      now += 11 * DAY;
      await t.services.audit.sweep();
      assert.deepEqual(await store.auditEnds(gone.id), { head: null, anchor: null });
      assert.notEqual((await store.auditEnds(a.id)).head, null, 'an account that exists keeps its chain');
    });

    it('whoever writes the store cannot pass entries it deleted off as pruned: the anchor is checked, its MAC and its age', async () => {
      await fresh({ retentionDays: 30 });
      const a = await t.account('anchored');
      for (const label of ['a', 'b', 'c']) await call(a.secret, label).post('/api/subscribe_token', { label, streams: [{ streamName: 'cam1' }] });
      const logged = (await verify(a.secret)).head;
      for (const label of ['d', 'e']) await call(a.secret, label).post('/api/subscribe_token', { label, streams: [{ streamName: 'cam1' }] });
      const stored = await tamper.entries(a.id);
      const head = (await verify(a.secret)).head;
      const entryAt = (seq: number) => stored.find((e) => e.pos === seq)!.text;
      const macAt = (seq: number) => (JSON.parse(entryAt(seq)) as AuditEntry).mac;
      const q = `?seq=${logged.seq}&mac=${logged.mac}`;
      const broken = async () => {
        const v = await verify(a.secret, q);
        return v.ok ? null : [v.broken!.seq, v.broken!.problem];
      };
      // every entry deleted and an anchor made up at the head, past the logged head
      for (const e of stored) await tamper.remove(a.id, e.pos);
      await tamper.setAnchor(a.id, { seq: head.seq, mac: 'f'.repeat(64), text: '', previousMac: '' });
      assert.deepEqual(await broken(), [head.seq, 'edited']);
      // a genuine entry as the anchor, but one retention could not have removed yet: the rest were deleted
      await tamper.setAnchor(a.id, { seq: head.seq, mac: head.mac, text: entryAt(head.seq), previousMac: macAt(head.seq - 1) });
      assert.deepEqual(await broken(), [head.seq, 'missing']);
      const v = await verify(a.secret, q);
      assert.match(v.broken!.detail, /^entries up to \d+ were removed, but retention removes only entries made before /);
      // once the entries are that old, the same removal is what retention does
      now += 31 * DAY;
      const pruned = await verify(a.secret, q);
      assert.deepEqual([pruned.ok, (pruned as { logged?: string }).logged], [true, 'pruned']);
    });

    it('verify is not fooled by what happens while it reads: an append, a retention run', async () => {
      await fresh({ retentionDays: 30 });
      const a = await t.account('racing');
      for (const label of ['a', 'b']) await call(a.secret, label).post('/api/subscribe_token', { label, streams: [{ streamName: 'cam1' }] });
      const before = (await store.auditEnds(a.id)).head!.seq;
      // a store whose next entry read is preceded by another write of the chain
      let meanwhile: (() => Promise<unknown>) | undefined;
      const racing = new Proxy(store, {
        get: (s, p) => {
          if (p === 'auditEntries') {
            return async (...args: Parameters<Store['auditEntries']>) => {
              const m = meanwhile;
              meanwhile = undefined;
              await m?.();
              return s.auditEntries(...args);
            };
          }
          const v = Reflect.get(s, p, s) as unknown;
          return typeof v === 'function' ? v.bind(s) : v;
        },
      });
      const quiet = { info: () => {}, warn: () => {} } as unknown as Logger;
      const log = new AuditLog(racing, KEY, { retentionDays: 30, keepAfterAccountDeleteDays: 0, headLogSeconds: 300 }, quiet, () => now);
      meanwhile = () => log.note(SYSTEM_ACTOR, a.id, 'stream', '*', 'stop', {});
      const appended = await log.verify(a.id);
      assert.deepEqual([appended.ok, appended.head?.seq, appended.ok && appended.last], [true, before + 1, before + 1]);
      now += 31 * DAY;
      meanwhile = () => store.pruneAudit(a.id, now - 30 * DAY);
      const pruned = await log.verify(a.id);
      assert.deepEqual([pruned.ok, pruned.entries, pruned.anchor?.seq, pruned.head?.seq], [true, 0, before + 1, before + 1]);
    });

    it('an export whose client goes away stops reading the store', { timeout: 60_000 }, async () => {
      await fresh();
      const a = await t.account('export gone');
      const big = { reason: { to: 'x'.repeat(2000) } };
      for (let i = 0; i < 1200; i++) await t.services.audit.note(SYSTEM_ACTOR, a.id, 'session', `s${i}`, 'cut', big);
      // the export's second page is read once the client has hung up
      let hungUp!: () => void;
      const gone = new Promise<void>((r) => (hungUp = r));
      let pages = 0;
      const listAudit = store.listAudit.bind(store);
      store.listAudit = async (...args: Parameters<Store['listAudit']>) => {
        if (++pages === 2) await gone;
        return listAudit(...args);
      };
      let exported: Promise<number> | undefined;
      const exportOf = t.services.audit.export.bind(t.services.audit);
      t.services.audit.export = (...args: Parameters<AuditLog['export']>) => {
        exported = exportOf(...args);
        return exported;
      };
      const server = t.app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      try {
        // a client that reads one chunk, stops reading, and hangs up
        await new Promise<void>((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port, path: '/api/audit/export', headers: { authorization: `Bearer ${a.secret}` } }, (res) => {
            res.once('data', () => {
              res.pause();
              req.destroy();
            });
          });
          req.on('error', () => undefined);
          req.on('close', () => resolve());
          req.on('timeout', () => reject(new Error('no answer')));
        });
        hungUp();
        // the export settles: it stops at the first line it cannot write, rather than wait for a drain that never comes
        await assert.rejects(exported!, /the client went away/);
        assert.equal(pages, 2, 'no page read after it');
      } finally {
        store.listAudit = listAudit;
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    });

    it('an instance without the key refuses management writes once the store keeps chains: nothing changes unrecorded', async () => {
      await fresh();
      const a = await t.account('keyed');
      const keyless = await testApp(store, { audit: { key: '' } }, { now: () => now });
      const body = { label: 'unrecorded', streams: [{ streamName: 'cam1' }] };
      const refused = await request(keyless.app).post('/api/subscribe_token').set('authorization', `Bearer ${a.secret}`).send(body);
      assert.equal(refused.status, 503);
      assert.equal(
        refused.body.data.message,
        'The audit log is on for this store and this instance has no audit key, so the change was not made: set STREAMGATE_AUDIT_KEY (the key the other instances use), or audit.enabled: false (docs/operations.md#audit-log)',
      );
      const admin = await request(keyless.app).post('/admin/accounts').set('authorization', `Bearer ${ADMIN_KEY}`).send({ name: 'not made' });
      assert.equal(admin.status, 503);
      assert.deepEqual((await store.listTokens(a.id, 'subscribe', { sortBy: 'AddedOn', page: 1, itemsOnPage: 10, descending: true })).map((x) => x.label), []);
      assert.equal((await store.listAccounts()).some((x) => x.name === 'not made'), false);
      const ready = await request(keyless.app).get('/readyz');
      assert.equal(ready.status, 200);
      assert.ok((ready.body.data.warnings as string[]).includes(AUDIT_REFUSING_WARNING), JSON.stringify(ready.body));
      // reads still answer, and the keyed instance still writes
      assert.equal((await request(keyless.app).get('/api/subscribe_token/list').set('authorization', `Bearer ${a.secret}`)).status, 200);
      assert.equal((await call(a.secret, 'k').post('/api/subscribe_token', body)).status, 200);
      if (store.kind === 'redis') {
        const out: string[] = [];
        const err: string[] = [];
        const env = Object.assign(tamper.cliEnv(), { STREAMGATE_AUDIT_KEY: '' });
        assert.equal(await runCli(['accounts', 'create', '--name', 'cli unrecorded'], { out: (x) => out.push(x), err: (x) => err.push(x) }, env), 1);
        assert.match(err.join('\n'), /no audit key, so the change was not made/);
        assert.equal((await store.listAccounts()).some((x) => x.name === 'cli unrecorded'), false);
      }
      await keyless.services.audit.stop();
    });

    it('off without a key: the routes answer 404 and writes record nothing', async () => {
      await fresh({ key: '', enabled: true });
      const a = await t.account('keyless');
      const r = await call(a.secret, 'x').get('/api/audit');
      assert.equal(r.status, 404);
      assert.match(r.body.data.message, /audit log is off/);
      assert.deepEqual(await store.auditEnds(a.id), { head: null, anchor: null });
    });

    it('logs each moved head on its timer (info: accountId, seq, mac), never the key', async (ctx: TestContext) => {
      now = T0;
      // the store's own timers are real: only the log's are moved
      const s = await factory.make({ now: () => now });
      ctx.mock.timers.enable({ apis: ['setInterval'] });
      const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
      const logger = { info: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }), warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }) } as unknown as Logger;
      const log = new AuditLog(s, KEY, { retentionDays: 0, keepAfterAccountDeleteDays: 0, headLogSeconds: 60 }, logger, () => now);
      log.start();
      await s.createAccount({ id: 'HEADS1', name: 'heads', createdOn: new Date(now).toISOString(), secureViewer: false }, log.sealer(SYSTEM_ACTOR, 'HEADS1', 'account', { id: (x) => x.id, changes: () => ({}) }));
      await log.note(SYSTEM_ACTOR, 'HEADS1', 'stream', '*', 'stop', {});
      ctx.mock.timers.tick(60_000);
      const head = (await s.auditEnds('HEADS1')).head!;
      await until(() => lines.length > 0);
      assert.deepEqual(lines, [{ obj: { accountId: 'HEADS1', seq: 2, mac: head.mac }, msg: 'audit head' }]);
      ctx.mock.timers.tick(60_000);
      await new Promise((r) => setImmediate(r));
      assert.equal(lines.length, 1, 'unmoved: not logged again');
      ctx.mock.timers.tick(AUDIT_SWEEP_MS);
      await new Promise((r) => setImmediate(r));
      assert.equal(lines.length, 1, 'the sweep logs a head only when it moved');
      assert.ok(!JSON.stringify(lines).includes(KEY));
      await log.stop();
    });
  });
}

/** Waits (a bounded number of event-loop turns) for a condition set by work a timer started. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(ok(), 'the condition held within 1000 turns');
}
