// Start-up failures end with one line on stderr that names the cause and the setting to change:
// exit code 2 when the configuration is wrong by itself (a config file that cannot be read or
// parsed, an invalid setting, an unknown STREAMGATE_* variable, a file a setting names that cannot
// be read), exit code 1 when Redis cannot be reached or refuses the credentials. A password never
// appears in the output.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, runNode } from '../helpers/process.js';
import { freePort, spawnRedisOnFreePort, startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/until.js';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'sg-startup-'));

/**
 * Starts the server as `npm start` does; resolves with its exit code and output once it exits. One
 * that starts serving instead is killed after 30 s (exit code -1), so the test fails, not hangs.
 */
const start = (env: Record<string, string>, args: string[] = []) =>
  runNode(['--import', 'tsx', 'src/main.ts', ...args], { PORT: '0', STREAMGATE_DATA_DIR: tmp(), ...env }, ROOT, 30_000);

const PASSWORD = 'the-redis-password-0123';
const WRONG = 'not-the-redis-password-4567';

describe('start-up errors: Redis (exit code 1)', () => {
  let redis: TestRedis;
  let sentinel: ChildProcess | undefined;
  let sentinelPort = 0;

  before(async () => {
    redis = await startRedis({ requirePass: PASSWORD });
    // One Sentinel watching the password-protected server (it knows the password, Streamgate not).
    const dir = tmp();
    const started = await spawnRedisOnFreePort('a Sentinel', (port) => {
      const conf = path.join(dir, `sentinel-${port}.conf`);
      writeFileSync(conf, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor primary 127.0.0.1 ${redis.port} 1`, `sentinel auth-pass primary ${PASSWORD}`].join('\n'));
      return [conf, '--sentinel'];
    });
    sentinel = started.proc;
    sentinelPort = started.port;
    const ask = () => spawnSync('redis-cli', ['-p', String(sentinelPort), 'sentinel', 'get-master-addr-by-name', 'primary'], { encoding: 'utf8' }).stdout;
    await until(() => ask().includes(String(redis.port)), 10000, 'the Sentinel to know the primary');
  });

  after(async () => {
    sentinel?.kill('SIGKILL');
    await redis?.stop();
  });

  it('a Redis nobody listens on: refused, is it running?', async () => {
    const port = await freePort();
    const r = await start({ REDIS_URL: `redis://127.0.0.1:${port}` });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `streamgate: failed to start: Redis at redis://127.0.0.1:${port} refused the connection (ECONNREFUSED); is it running? (redis.url / REDIS_URL)\n`);
  });

  it('a Redis that requires a password, none configured: NOAUTH, naming where the password goes', async () => {
    const r = await start({ REDIS_URL: redis.url });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `streamgate: failed to start: Redis at ${redis.url} requires a password (NOAUTH) and none is configured; set it in the URL, redis://:PASSWORD@host:port (redis.url / REDIS_URL)\n`,
    );
  });

  it('a wrong password: WRONGPASS, the URL shown with the password masked', async () => {
    const r = await start({ REDIS_URL: `redis://:${WRONG}@127.0.0.1:${redis.port}` });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `streamgate: failed to start: Redis at redis://:***@127.0.0.1:${redis.port} refused the credentials (WRONGPASS): the password (or user) is wrong; check the URL's user and password (redis.url / REDIS_URL)\n`,
    );
    assert.ok(!`${r.stdout}${r.stderr}`.includes(WRONG), 'the password is in the output');
  });

  it('Sentinel: the primary requires a password, none configured', async () => {
    const r = await start({ STREAMGATE_REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, STREAMGATE_REDIS_SENTINELNAME: 'primary' });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `streamgate: failed to start: Redis primary 'primary' of the Sentinels at 127.0.0.1:${sentinelPort} requires a password (NOAUTH) and none is configured; set it with redis.password / STREAMGATE_REDIS_PASSWORD\n`,
    );
  });

  it('Cluster: a node requires a password, none configured; then a wrong one', async () => {
    const none = await start({ STREAMGATE_REDIS_CLUSTERNODES: `127.0.0.1:${redis.port}` });
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `streamgate: failed to start: Redis Cluster at 127.0.0.1:${redis.port} requires a password (NOAUTH) and none is configured; set it with redis.password / STREAMGATE_REDIS_PASSWORD\n`,
    );
    const wrong = await start({ STREAMGATE_REDIS_CLUSTERNODES: `127.0.0.1:${redis.port}`, STREAMGATE_REDIS_PASSWORD: WRONG });
    assert.equal(wrong.code, 1);
    assert.equal(
      wrong.stderr,
      `streamgate: failed to start: Redis Cluster at 127.0.0.1:${redis.port} refused the credentials (WRONGPASS): the password (or user) is wrong; check redis.password / STREAMGATE_REDIS_PASSWORD\n`,
    );
    assert.ok(!`${wrong.stdout}${wrong.stderr}`.includes(WRONG), 'the password is in the output');
  });
});

describe('start-up errors: configuration (exit code 2)', () => {
  it('a config file that is not valid YAML: the file, the line and column, the cause', async () => {
    const file = path.join(tmp(), 'streamgate.yaml');
    writeFileSync(file, 'server:\n  port: 8080\n\thost: 0.0.0.0\n');
    const r = await start({}, ['--config', file]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `streamgate: config file ${file}: invalid YAML at line 3, column 1: Tabs are not allowed as indentation\n`);
  });

  it('a config file that does not exist, named by --config or by STREAMGATE_CONFIG', async () => {
    const file = path.join(tmp(), 'missing.yaml');
    const byArg = await start({}, ['--config', file]);
    assert.equal(byArg.code, 2);
    assert.equal(byArg.stderr, `streamgate: cannot read config file ${file} (--config): no such file (ENOENT)\n`);
    const byEnv = await start({ STREAMGATE_CONFIG: file });
    assert.equal(byEnv.code, 2);
    assert.equal(byEnv.stderr, `streamgate: cannot read config file ${file} (STREAMGATE_CONFIG): no such file (ENOENT)\n`);
  });

  it('--config without a file', async () => {
    const r = await start({}, ['--config']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'streamgate: --config needs a file: --config <file>\n');
  });

  it('invalid settings: each named with the file or the variable that set it', async () => {
    const file = path.join(tmp(), 'streamgate.yaml');
    // The environment wins over the file: cacheTtlMs is named by its variable, not by the file.
    writeFileSync(file, 'server:\n  prot: 8080\nenforcement:\n  storeTimeoutMs: 0\n  cacheTtlMs: 1000\n');
    const r = await start({ STREAMGATE_ENFORCEMENT_CACHETTLMS: '-1' }, ['--config', file]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `streamgate: invalid configuration: server.prot (from ${file}): unknown setting; enforcement.storeTimeoutMs (from ${file}): Too small: expected number to be >=1; enforcement.cacheTtlMs (from STREAMGATE_ENFORCEMENT_CACHETTLMS): Too small: expected number to be >=0\n`,
    );
  });

  it('an unknown STREAMGATE_* variable', async () => {
    const r = await start({ STREAMGATE_SERVER_PROT: '8080' });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'streamgate: STREAMGATE_SERVER_PROT: no such setting\n');
  });

  it('a malformed redis-sentinel:// URL, without its password', async () => {
    const r = await start({ REDIS_URL: `redis-sentinel://:${WRONG}@127.0.0.1:26379` });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'streamgate: invalid configuration: redis.url (from REDIS_URL): expected redis-sentinel://[:password@]host:port,host:port/mastername[/db]\n');
  });

  it('files named by geo.databasePath and webhooks.caFile that cannot be read', async () => {
    const missing = path.join(tmp(), 'missing');
    const geo = await start({ STREAMGATE_GEO_DATABASEPATH: missing });
    assert.equal(geo.code, 2);
    assert.equal(geo.stderr, `streamgate: cannot open geo.databasePath '${missing}': no such file (ENOENT)\n`);
    const ca = await start({ STREAMGATE_WEBHOOKS_CAFILE: missing });
    assert.equal(ca.code, 2);
    assert.equal(ca.stderr, `streamgate: webhooks.caFile: cannot read ${missing}: no such file (ENOENT)\n`);
  });
});
