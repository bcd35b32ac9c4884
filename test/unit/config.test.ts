import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config/load.js';

const ADMIN = 'a'.repeat(32);
const HOOKS = 'h'.repeat(40);

describe('configuration', () => {
  it('defaults to port 8080, the embedded store under ./data and no admin key', () => {
    const c = loadConfig({ env: {} });
    assert.equal(c.server.port, 8080);
    assert.equal(c.dataDir, './data');
    assert.equal(c.redis.url, '');
    assert.equal(c.adminKey, '');
    assert.equal(c.server.host, '127.0.0.1');
    assert.equal(c.hooks.secret, '');
    assert.equal(c.hooks.allowUnauthenticated, false);
    assert.equal(c.hooks.realIpHeader, '');
    assert.equal(c.enforcement.onStoreError, 'deny');
    assert.equal(c.enforcement.storeTimeoutMs, 250);
    assert.equal(c.redis.keyPrefix, 'sg:');
  });

  it('layers a file over the defaults and the environment over the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-cfg-'));
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'server:\n  port: 9000\nhooks:\n  trustedProxies: [10.0.0.0/8]\nlog:\n  level: debug\n');
    const c = loadConfig({
      file,
      env: {
        PORT: '9100',
        HOST: '127.0.0.1',
        REDIS_URL: 'redis://127.0.0.1:7000/2',
        STREAMGATE_DATA_DIR: '/var/lib/sg',
        STREAMGATE_ADMIN_KEY: ADMIN,
        STREAMGATE_HOOK_SECRET: HOOKS,
        STREAMGATE_HOOKS_TRUSTEDPROXIES: '10.0.0.0/8, 127.0.0.1',
        STREAMGATE_DIRECTOR_PUBLISHURLS: 'wss://a/{streamName}',
        streamgate_enforcement_onstoreerror: 'allow-cached',
        STREAMGATE_HOOKS_MEDIAMTX_ALLOWAPIFROM: '127.0.0.1',
        STREAMGATE_WEBHOOKS_ALLOWPRIVATETARGETS: 'true',
      },
    });
    assert.equal(c.server.port, 9100);
    assert.equal(c.server.host, '127.0.0.1');
    assert.equal(c.redis.url, 'redis://127.0.0.1:7000/2');
    assert.equal(c.dataDir, '/var/lib/sg');
    assert.equal(c.adminKey, ADMIN);
    assert.equal(c.hooks.secret, HOOKS);
    assert.deepEqual(c.hooks.trustedProxies, ['10.0.0.0/8', '127.0.0.1']);
    assert.deepEqual(c.director.publishUrls, ['wss://a/{streamName}']);
    assert.equal(c.enforcement.onStoreError, 'allow-cached');
    assert.deepEqual(c.hooks.mediamtx.allowApiFrom, ['127.0.0.1']);
    assert.equal(c.webhooks.allowPrivateTargets, true);
    assert.equal(c.log.level, 'debug');
  });

  const invalid: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /server\.port: Invalid input: expected number/],
    [{ PORT: '70000' }, /server\.port: Too big/],
    [{ STREAMGATE_ENFORCEMENT_ONSTOREERROR: 'maybe' }, /enforcement\.onStoreError: Invalid option/],
    [{ STREAMGATE_HOOKS_TRUSTEDPROXIES: 'not-an-ip' }, /hooks\.trustedProxies\.0: expected an IP address or CIDR block/],
    [{ REDIS_URL: 'http://x' }, /redis\.url: expected a redis:\/\/, rediss:\/\/ or redis-sentinel:\/\/ URL/],
    [{ STREAMGATE_REDIS_SENTINELS: 'a:1' }, /redis\.sentinelName: required when redis\.sentinels is set/],
    [{ STREAMGATE_NO_SUCH_THING: '1' }, /STREAMGATE_NO_SUCH_THING: no such setting/],
    [{ STREAMGATE_ADMIN_KEY: 'a'.repeat(31) }, /adminKey: must be empty \(off\) or at least 32 characters/],
    [{ STREAMGATE_HOOK_SECRET: 'short' }, /hooks\.secret: must be empty \(off\) or at least 32 characters/],
    [{ STREAMGATE_HOOK_SECRET: ' '.repeat(40) }, /hooks\.secret: must not start or end with white space or hold control characters/],
    [{ STREAMGATE_ADMIN_KEY: `${'a'.repeat(40)}\n` }, /adminKey: must not start or end with white space or hold control characters/],
    [{ HOST: '0.0.0.0' }, /hooks\.secret: required when listening on 0\.0\.0\.0 \(reachable from other machines\)/],
    [{ HOST: '::' }, /hooks\.secret: required when listening on ::/],
    [{ HOST: '10.1.2.3' }, /hooks\.secret: required when listening on 10\.1\.2\.3/],
    [{ HOST: 'streamgate.internal' }, /hooks\.secret: required when listening on streamgate\.internal/],
    [{ STREAMGATE_WEBHOOKS_HEADERNAMES: '' }, /webhooks\.headerNames: name at least one of service, millicast/],
    [{ STREAMGATE_WEBHOOKS_HEADERNAMES: 'service,dolby' }, /webhooks\.headerNames\.1: Invalid option/],
    [{ STREAMGATE_HOOKS_REALIPHEADER: 'X Real IP' }, /hooks\.realIpHeader: expected a header name/],
    [{ STREAMGATE_REDIS_WAITREPLICAS: '1', STREAMGATE_REDIS_WAITTIMEOUTMS: '5000' }, /redis\.waitTimeoutMs: must be below redis\.commandTimeoutMs/],
  ];
  for (const [env, why] of invalid) {
    it(`stops on ${Object.entries(env)[0].join('=')} naming the setting`, () => {
      assert.throws(() => loadConfig({ env }), (e: unknown) => e instanceof ConfigError && why.test((e as Error).message));
    });
  }

  it('listens beyond loopback only with a hook secret or an explicit allowUnauthenticated', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost']) {
      assert.equal(loadConfig({ env: { HOST: host } }).server.host, host, `${host} is loopback: no secret needed`);
    }
    assert.equal(loadConfig({ env: { HOST: '0.0.0.0', STREAMGATE_HOOK_SECRET: HOOKS } }).hooks.secret, HOOKS);
    const open = loadConfig({ env: { HOST: '0.0.0.0', STREAMGATE_HOOKS_ALLOWUNAUTHENTICATED: 'true' } });
    assert.deepEqual([open.server.host, open.hooks.secret, open.hooks.allowUnauthenticated], ['0.0.0.0', '', true]);
  });

  it('takes a map setting (hooks.allowFrom) whole from the environment as a JSON object, naming the variable when it is not one', () => {
    const c = loadConfig({ env: { STREAMGATE_HOOK_SECRET: HOOKS, STREAMGATE_HOOKS_ALLOWFROM: '{"nginx-rtmp":["10.0.0.0/8","127.0.0.1"]}' } });
    assert.deepEqual(c.hooks.allowFrom, { 'nginx-rtmp': ['10.0.0.0/8', '127.0.0.1'] });
    for (const bad of ['10.0.0.0/8', '["10.0.0.0/8"]', '{"nginx-rtmp":']) {
      assert.throws(
        () => loadConfig({ env: { STREAMGATE_HOOK_SECRET: HOOKS, STREAMGATE_HOOKS_ALLOWFROM: bad } }),
        (e: unknown) => e instanceof ConfigError && e.message === 'STREAMGATE_HOOKS_ALLOWFROM: not a valid JSON object',
        bad,
      );
    }
    // the schema still judges what the object holds
    assert.throws(() => loadConfig({ env: { STREAMGATE_HOOK_SECRET: HOOKS, STREAMGATE_HOOKS_ALLOWFROM: '{"nginx-rtmp":["not-an-address"]}' } }), ConfigError);
  });

  it('never echoes a refused secret in the error', () => {
    const secret = 'sup3r-s3cret-but-short';
    assert.throws(() => loadConfig({ env: { STREAMGATE_HOOK_SECRET: secret, STREAMGATE_ADMIN_KEY: secret } }), (e: unknown) => {
      const m = (e as Error).message;
      return e instanceof ConfigError && /hooks\.secret/.test(m) && /adminKey/.test(m) && !m.includes(secret);
    });
  });

  it('parses redis-sentinel:// URLs', async () => {
    const { parseSentinelUrl } = await import('../../src/store/redis/connect.js');
    assert.deepEqual(parseSentinelUrl('redis-sentinel://:p%40ss@10.0.0.1:26379,10.0.0.2:26380/mymaster/2'), {
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'mymaster',
      password: 'p@ss',
      db: 2,
    });
    assert.throws(() => parseSentinelUrl('redis-sentinel://host'), /mastername/);
  });

  it('names an unknown key of a config file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-cfg-'));
    const file = path.join(dir, 'c.yaml');
    writeFileSync(file, 'server:\n  prot: 1\n');
    assert.throws(() => loadConfig({ file, env: {} }), /server\.prot: unknown setting/);
  });
});
