// What someone new to Streamgate runs into first, as real processes: a port already taken, the
// command run from another directory, asking for help, a wrong hook secret, the admin API left
// off, and a self-signed token refused for its tracking id. Each answer says what to change.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ROOT, cleanEnv, runNode, startServer, type RunningServer } from '../helpers/process.js';
import { USAGE } from '../../src/cli.js';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';

const tmp = () => realpathSync(mkdtempSync(path.join(tmpdir(), 'sg-new-')));

/** The installed command (bin/streamgate.mjs) run from `cwd`, with only the given environment. */
async function streamgate(cwd: string, args: string[], env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/streamgate.mjs'), ...args], { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number>((resolve) => proc.on('exit', (c) => resolve(c ?? -1)));
  return { code, stdout, stderr };
}

async function stop(s: RunningServer) {
  s.proc.kill('SIGTERM');
  return s.exited;
}

describe('start-up: a port already in use', () => {
  let taken: Server;
  let port: number;
  before(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('exits 1 with one line naming the address and the setting, no stack', async () => {
    const r = await runNode(['--import', 'tsx', 'src/main.ts'], { PORT: String(port), HOST: '127.0.0.1', STREAMGATE_DATA_DIR: tmp() });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `streamgate: cannot listen on 127.0.0.1:${port}: address already in use (set PORT or server.port)\n`);
  });
});

describe('the command: help and unknown commands', () => {
  it('help, --help and -h print the usage on stdout and exit 0', async () => {
    const dir = tmp();
    for (const args of [['help'], ['--help'], ['-h'], ['accounts', 'list', '--help']]) {
      const r = await streamgate(dir, args);
      assert.deepEqual(r, { code: 0, stdout: `${USAGE}\n`, stderr: '' }, args.join(' '));
    }
    assert.equal(existsSync(path.join(dir, 'data')), false, 'help opened no store');
  });

  it('an unknown command, or none, prints what is wrong and the usage on stderr, exits 2 and creates nothing', async () => {
    const dir = tmp();
    const cases: Array<[string[], string]> = [
      [['frob'], "unknown command 'frob'"],
      [['accounts', 'frob'], "unknown command 'accounts frob'"],
      [['keys'], "unknown command 'keys'"],
      [['accounts', 'secret', 'rotate', 'X'], "unknown command 'accounts secret rotate'"],
      [[], 'no command given'],
      [['accounts', 'create'], 'accounts create needs --name <name> (not blank)'],
      [['accounts', 'secret', 'refresh'], 'accounts secret refresh needs an account id'],
    ];
    for (const [args, problem] of cases) {
      const r = await streamgate(dir, args);
      assert.deepEqual(r, { code: 2, stdout: '', stderr: `streamgate: ${problem}\n${USAGE}\n` }, args.join(' '));
    }
    const option = await streamgate(dir, ['accounts', 'list', '--frob']);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /^streamgate: Unknown option '--frob'/);
    assert.ok(option.stderr.endsWith(`\n${USAGE}\n`));
    assert.equal(existsSync(path.join(dir, 'data')), false, 'no store was created');
  });
});

describe('the command: the data dir', () => {
  it('refuses to read a store that does not exist, naming the resolved data dir and STREAMGATE_DATA_DIR (exit 1, nothing created)', async () => {
    const dir = tmp();
    const fix = 'set STREAMGATE_DATA_DIR (or dataDir in a --config file) to the data dir the server uses, or REDIS_URL for a Redis store';
    const commands: Array<[string[], string]> = [
      [['accounts', 'list'], 'accounts list'],
      [['accounts', 'secret', 'refresh', 'ZG6NWV'], 'accounts secret refresh'],
      [['accounts', 'secret', 'delete', 'ZG6NWV'], 'accounts secret delete'],
    ];
    for (const [args, command] of commands) {
      const r = await streamgate(dir, args);
      assert.deepEqual(
        r,
        {
          code: 1,
          stdout: '',
          stderr: `streamgate: ${command}: the data dir ${dir}/data does not exist, so there is nothing to read (dataDir './data' is relative to the current directory ${dir}); ${fix}\n`,
        },
        args.join(' '),
      );
    }
    assert.equal(existsSync(path.join(dir, 'data')), false);

    const elsewhere = path.join(dir, 'srv');
    mkdirSync(elsewhere);
    const r = await streamgate(dir, ['accounts', 'list'], { STREAMGATE_DATA_DIR: elsewhere });
    assert.deepEqual(r, { code: 1, stdout: '', stderr: `streamgate: accounts list: no store file ${elsewhere}/streamgate.db, so there is nothing to read; ${fix}\n` });
    assert.equal(existsSync(path.join(elsewhere, 'streamgate.db')), false);
  });

  it('warns on stderr when a command creates a new store, then works on it without a warning', async () => {
    const dir = tmp();
    const created = await streamgate(dir, ['accounts', 'create', '--name', 'acme']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(
      created.stderr,
      `streamgate: warning: the data dir ${dir}/data does not exist; 'accounts create' creates a new empty store at ${dir}/data/streamgate.db. If the server uses another store, set STREAMGATE_DATA_DIR (or dataDir in a --config file) to the data dir the server uses, or REDIS_URL for a Redis store.\n`,
    );
    const acct = JSON.parse(created.stdout) as { id: string; name: string; createdOn: string };
    assert.ok(existsSync(path.join(dir, 'data', 'streamgate.db')));
    const list = await streamgate(dir, ['accounts', 'list']);
    assert.deepEqual(list, { code: 0, stdout: `${JSON.stringify({ id: acct.id, name: 'acme', createdOn: acct.createdOn, secureViewer: false, ipRulesOnRtmp: true, hasApiSecret: true })}\n`, stderr: '' });
  });
});

describe('the running service: answers that say what to change', () => {
  const HOOK_SECRET = 'hook-secret-for-the-newcomer-test-0123';
  let s: RunningServer;
  let apiSecret: string;
  before(async () => {
    const dir = tmp();
    s = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_HOOK_SECRET: HOOK_SECRET });
    apiSecret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
  });
  after(async () => {
    assert.equal(await stop(s), 0);
  });

  const authorize = (headers: Record<string, string>, query = '') =>
    fetch(`${s.base}/hooks/authorize${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ action: 'subscribe', streamName: 'cam1' }),
    });

  it('a hook call without the hook secret is told it is required; with a wrong one, that it is invalid', async () => {
    const none = await authorize({});
    assert.deepEqual([none.status, await none.json()], [401, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' }]);
    const wrong = await authorize({ 'x-streamgate-hook-secret': 'not-the-secret' });
    assert.deepEqual([wrong.status, await wrong.json()], [401, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret invalid' }]);
    const wrongQuery = await authorize({}, '?secret=not-the-secret');
    assert.deepEqual([wrongQuery.status, await wrongQuery.json()], [401, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret invalid' }]);
    assert.equal((await authorize({ 'x-streamgate-hook-secret': HOOK_SECRET })).status, 200);
  });

  it('/admin without an admin key: 404 naming the full path and the setting, never the query', async () => {
    const r = await fetch(`${s.base}/admin/accounts?probe=query-text`);
    assert.deepEqual([r.status, await r.json()], [404, { status: 'fail', data: { message: 'Not found: GET /admin/accounts (the admin API is off: set STREAMGATE_ADMIN_KEY)' } }]);
    const put = await fetch(`${s.base}/admin/accounts/ZG6NWV`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual([put.status, await put.json()], [404, { status: 'fail', data: { message: 'Not found: PUT /admin/accounts/ZG6NWV (the admin API is off: set STREAMGATE_ADMIN_KEY)' } }]);
  });

  it('a self-signed token refused for its trackingId answers the hosted text and logs why', async () => {
    const created = await fetch(`${s.base}/api/subscribe_token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'p', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'grp-1' } }),
    });
    assert.equal(created.status, 200);
    const parent = ((await created.json()) as { data: { id: number; token: string } }).data;
    const cases: Array<[string | undefined, string]> = [
      [undefined, "the parent token has trackingId 'grp-1' and the JWT carries none: it must carry the same streaming.tracking.trackingId"],
      ['grp-2', "the parent token has trackingId 'grp-1' and the JWT carries 'grp-2': it must carry the same streaming.tracking.trackingId"],
    ];
    for (const [trackingId, detail] of cases) {
      const jwt = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600, trackingId });
      const r = await fetch(`${s.base}/hooks/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-streamgate-hook-secret': HOOK_SECRET },
        body: JSON.stringify({ action: 'subscribe', token: jwt, streamName: 'cam1' }),
      });
      const body = (await r.json()) as { reason: string; message: string };
      assert.deepEqual([r.status, body.reason, body.message], [401, 'token_invalid', 'Unauthorized: Invalid token']);
      assert.ok(!JSON.stringify(body).includes('grp-'), 'the caller gets the hosted text only');
      const logged = async () =>
        s.logs
          .flatMap((l) => l.split('\n'))
          .flatMap((l) => {
            try {
              return [JSON.parse(l) as { msg?: string; reason?: string; detail?: string }];
            } catch {
              return [];
            }
          })
          .filter((l) => l.msg === 'decision' && l.reason === 'token_invalid' && l.detail === detail);
      for (let i = 0; i < 100 && (await logged()).length === 0; i++) await new Promise((res) => setTimeout(res, 20));
      assert.equal((await logged()).length, 1, `a decision line with the detail: ${detail}`);
    }
    assert.ok(!s.logs.join('\n').includes(parent.token), 'the parent token value is never logged');
  });
});
