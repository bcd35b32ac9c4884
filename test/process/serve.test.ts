// Streamgate as a user runs it: a real process on a fresh data dir, killed and restarted.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, runNode, type RunningServer } from '../helpers/process.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'sg-proc-'));

async function call(base: string, secret: string, method: string, p: string, body?: unknown) {
  const r = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: (await r.json()) as { status: string; data: Record<string, unknown> } };
}

async function stop(s: RunningServer, signal: NodeJS.Signals = 'SIGTERM') {
  s.proc.kill(signal);
  return s.exited;
}

describe('the service as a process', () => {
  it('first start on an empty data dir: default account, secret file 0600, empty list', async () => {
    const dir = tmp();
    const s = await startServer({ STREAMGATE_DATA_DIR: dir });
    try {
      const file = path.join(dir, 'default-api-secret');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const secret = readFileSync(file, 'utf8').trim();
      assert.match(secret, /^[0-9a-f]{64}$/);
      assert.ok(!s.logs.join('\n').includes(secret), 'the secret is never logged');
      assert.ok(s.logs.some((l) => l.includes(file)), 'the secret file path is logged');
      const r = await call(s.base, secret, 'GET', '/api/publish_token/list');
      assert.deepEqual(r, { status: 200, body: { status: 'success', data: [] } });
    } finally {
      assert.equal(await stop(s), 0, 'SIGTERM exits 0');
    }
  });

  it('logs each request with its full path and never its query (where tokens and the hook secret travel)', async () => {
    const s = await startServer({ STREAMGATE_DATA_DIR: tmp(), STREAMGATE_HOOKS_SECRET: 'hook-secret-in-query-0123456789abcdef' });
    try {
      const hook = await fetch(`${s.base}/hooks/auth-request/hls/cam1/index.m3u8?token=token-in-query-4567&secret=hook-secret-in-query-0123456789abcdef`);
      assert.equal(hook.status, 401); // no such token: a denial, and a request line
      const page = await fetch(`${s.base}/dashboard/?x=query-on-a-mounted-path`);
      await page.arrayBuffer();
      const lines = () => s.logs.flatMap((l) => l.split('\n')).filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as { path: string; route?: string; status: number });
      for (let i = 0; i < 50 && lines().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(
        lines().map((l) => [l.path, l.route, l.status]),
        [
          ['/hooks/auth-request/hls/cam1/index.m3u8', '/hooks/auth-request/*rest', 401],
          ['/dashboard/', undefined, page.status],
        ],
      );
      const all = s.logs.join('\n');
      for (const secret of ['token-in-query-4567', 'hook-secret-in-query-0123456789abcdef', 'query-on-a-mounted-path']) assert.ok(!all.includes(secret), `${secret} is not logged`);
    } finally {
      assert.equal(await stop(s), 0);
    }
  });

  it('keeps an acknowledged token across SIGKILL and restart, and does not recreate the default account', async () => {
    const dir = tmp();
    const first = await startServer({ STREAMGATE_DATA_DIR: dir });
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const created = await call(first.base, secret, 'POST', '/api/publish_token', { label: 'durable', streams: [{ streamName: 'cam1' }] });
    assert.equal(created.status, 200);
    assert.equal(await stop(first, 'SIGKILL'), 'SIGKILL');
    const second = await startServer({ STREAMGATE_DATA_DIR: dir });
    try {
      const read = await call(second.base, secret, 'GET', `/api/publish_token/${created.body.data.id}`);
      assert.deepEqual(read, { status: 200, body: created.body });
      assert.equal(readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim(), secret);
      assert.ok(!second.logs.some((l) => l.includes('first start')));
    } finally {
      await stop(second);
    }
  });

  it('refuses to start on an invalid setting, naming its path', async () => {
    const r = await runNode(['--import', 'tsx', 'src/main.ts'], { STREAMGATE_ENFORCEMENT_STORETIMEOUTMS: '-5', STREAMGATE_DATA_DIR: tmp() });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "streamgate: invalid configuration: enforcement.storeTimeoutMs (from STREAMGATE_ENFORCEMENT_STORETIMEOUTMS): Too small: expected number to be >=1\n");
  });

  describe('on Redis (REDIS_URL)', () => {
    let redis: TestRedis;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis.stop();
    });

    it('selects the Redis store and serves the API from it', async () => {
      const dir = tmp();
      const prefix = redis.prefix();
      // an audit key shared by every instance (without one, /readyz warns that the audit log is off)
      const s = await startServer({ STREAMGATE_DATA_DIR: dir, REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: prefix, STREAMGATE_AUDIT_KEY: 'serve-test-audit-key-0123456789abcdef' });
      try {
        const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
        const ready = await fetch(`${s.base}/readyz`);
        // the viewer credential key is kept in the store, shared by every instance on it: nothing to warn of
        assert.deepEqual(await ready.json(), { status: 'success', data: { ready: true, store: 'redis' } });
        const created = await call(s.base, secret, 'POST', '/api/subscribe_token', { label: 'r', streams: [{ streamName: 'x' }] });
        assert.equal(created.status, 200);
        const list = await call(s.base, secret, 'GET', '/api/subscribe_token/list');
        assert.deepEqual(list.body.data, [created.body.data]);
        // the CLI on the same Redis store: the token the API made, without its value
        const cli = await runNode(['bin/streamgate.mjs', 'tokens', 'list', '--json'], { REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: prefix });
        const { token: _value, ...record } = created.body.data;
        const { accountId, ...listed } = JSON.parse(cli.stdout) as Record<string, unknown>;
        assert.deepEqual([cli.code, cli.stderr, listed], [0, '', { kind: 'subscribe', ...record }]);
        assert.match(String(accountId), /^[A-Z2-9]{6}$/);
      } finally {
        assert.equal(await stop(s), 0);
      }
    });

    it('fails to start with a clear message when Redis cannot be reached', async () => {
      const r = await runNode(['--import', 'tsx', 'src/main.ts'], {
        STREAMGATE_DATA_DIR: tmp(),
        REDIS_URL: 'redis://127.0.0.1:1',
        STREAMGATE_REDIS_CONNECTTIMEOUTMS: '1000',
        PORT: '0',
      });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /failed to start: .*(ECONNREFUSED|Redis not ready|Connection is closed)/);
    });
  });
});

describe('the streamgate command', () => {
  it('signs a self-signed subscribe JWT that the director admits, and rotates the signing keys', async () => {
    const dir = tmp();
    const env = { STREAMGATE_DATA_DIR: dir };
    const s = await startServer(env);
    let kidBefore: string;
    try {
      const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
      const parent = await call(s.base, secret, 'POST', '/api/subscribe_token', { label: 'p', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 't1' } });
      const signed = await runNode(
        ['bin/streamgate.mjs', 'sign-subscribe', '--token', String(parent.body.data.token), '--token-id', String(parent.body.data.id), '--stream', 'cam1', '--expires-in', '600', '--tracking-id', 't1'],
        env,
      );
      assert.equal(signed.code, 0, signed.stderr);
      const jwt = signed.stdout.trim();
      const r = await fetch(`${s.base}/api/director/subscribe`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        body: JSON.stringify({ streamName: 'cam1' }),
      });
      assert.equal(r.status, 200);
      const noTracking = await runNode(['bin/streamgate.mjs', 'sign-subscribe', '--token', String(parent.body.data.token), '--token-id', String(parent.body.data.id), '--stream', 'cam1'], env);
      const denied = await fetch(`${s.base}/api/director/subscribe`, {
        method: 'POST',
        headers: { authorization: `Bearer ${noTracking.stdout.trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ streamName: 'cam1' }),
      });
      assert.equal(denied.status, 401);
      kidBefore = ((await (await fetch(`${s.base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys[0].kid;
    } finally {
      await stop(s);
    }
    const rotated = await runNode(['bin/streamgate.mjs', 'keys', 'rotate'], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    const r = JSON.parse(rotated.stdout) as { kid: string; previousKid: string };
    assert.equal(r.previousKid, kidBefore);
    const again = await startServer(env);
    try {
      const jwks = (await (await fetch(`${again.base}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
      assert.deepEqual(jwks.keys.map((k) => k.kid), [r.kid, kidBefore]);
    } finally {
      await stop(again);
    }
  });


  it("manages the tokens of the server's store: the API and the decisions see what the command does", async () => {
    const dir = tmp();
    const env = { STREAMGATE_DATA_DIR: dir };
    const s = await startServer(env);
    try {
      const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
      const created = await runNode(['bin/streamgate.mjs', 'tokens', 'create', '--kind', 'publish', '--label', 'studio', '--stream', 'cam1', '--json'], env);
      assert.deepEqual([created.code, created.stderr], [0, '']);
      const { kind, accountId, ...record } = JSON.parse(created.stdout) as Record<string, unknown>;
      assert.equal(kind, 'publish');
      const id = record.id as number;
      assert.deepEqual(await call(s.base, secret, 'GET', `/api/publish_token/${id}`), { status: 200, body: { status: 'success', data: record } });
      const publish = () =>
        fetch(`${s.base}/hooks/authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'publish', token: record.token, streamName: 'cam1' }),
        });
      assert.equal((await publish()).status, 200);

      const disabled = await runNode(['bin/streamgate.mjs', 'tokens', 'disable', String(id)], env);
      assert.deepEqual(disabled, { code: 0, stdout: `disabled publish token ${id} in account ${accountId}\n`, stderr: '' });
      // another process's write: seen within SQLite's data_version poll (docs/api.md#caching-and-revocation)
      await until(async () => (await publish()).status === 401, 5000, 'the disabled token refused');
      assert.equal((await call(s.base, secret, 'GET', `/api/publish_token/${id}`)).body.data.isActive, false);
      const list = await runNode(['bin/streamgate.mjs', 'tokens', 'list'], env);
      assert.equal(list.stdout, `ID  KIND     LABEL   STREAMS  STATE     EXPIRES\n${id}   publish  studio  cam1     disabled  never\n`);
      assert.ok(!list.stdout.includes(String(record.token)));

      const deleted = await runNode(['bin/streamgate.mjs', 'tokens', 'delete', String(id)], env);
      assert.deepEqual(deleted, { code: 0, stdout: `deleted publish token ${id} in account ${accountId}\n`, stderr: '' });
      assert.equal((await call(s.base, secret, 'GET', `/api/publish_token/${id}`)).status, 404);
      const again = await runNode(['bin/streamgate.mjs', 'tokens', 'delete', String(id)], env);
      assert.deepEqual(again, { code: 1, stdout: '', stderr: `streamgate: tokens delete: no token with id ${id}\n` });
    } finally {
      await stop(s);
    }
  });

  it('creates and lists accounts, refreshes and deletes secrets on the configured store', async () => {
    const dir = tmp();
    const env = { STREAMGATE_DATA_DIR: dir };
    const created = await runNode(['bin/streamgate.mjs', 'accounts', 'create', '--name', 'acme'], env);
    assert.equal(created.code, 0, created.stderr);
    const acct = JSON.parse(created.stdout) as { id: string; name: string; apiSecret: string };
    assert.match(acct.id, /^[A-Z2-9]{6}$/);
    assert.equal(acct.name, 'acme');
    assert.match(acct.apiSecret, /^[0-9a-f]{64}$/);

    const list = await runNode(['bin/streamgate.mjs', 'accounts', 'list'], env);
    assert.deepEqual(
      list.stdout.trim().split('\n').map((l) => JSON.parse(l)),
      [{ id: acct.id, name: 'acme', createdOn: (JSON.parse(created.stdout) as { createdOn: string }).createdOn, secureViewer: false, ipRulesOnRtmp: true, hasApiSecret: true }],
    );

    const s = await startServer(env);
    try {
      assert.equal((await call(s.base, acct.apiSecret, 'GET', '/api/publish_token/list')).status, 200);
      const refreshed = await runNode(['bin/streamgate.mjs', 'accounts', 'secret', 'refresh', acct.id], env);
      assert.equal(refreshed.code, 0, refreshed.stderr);
      const next = (JSON.parse(refreshed.stdout) as { apiSecret: string }).apiSecret;
      assert.equal((await call(s.base, acct.apiSecret, 'GET', '/api/publish_token/list')).status, 401);
      assert.equal((await call(s.base, next, 'GET', '/api/publish_token/list')).status, 200);
      const deleted = await runNode(['bin/streamgate.mjs', 'accounts', 'secret', 'delete', acct.id], env);
      assert.equal(deleted.code, 0);
      assert.equal((await call(s.base, next, 'GET', '/api/publish_token/list')).status, 401);
    } finally {
      await stop(s);
    }
    const unknown = await runNode(['bin/streamgate.mjs', 'accounts', 'secret', 'refresh', 'NOPE99'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no account with id NOPE99/);
    const usage = await runNode(['bin/streamgate.mjs', 'accounts', 'frob'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /unknown command 'accounts frob'/);
  });
});
