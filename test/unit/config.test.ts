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
    assert.equal(c.hooks.srt.tokenKey, 'sg_token');
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
    [{ PORT: 'eighty' }, /server\.port \(from PORT\): Invalid input: expected number/],
    [{ PORT: '70000' }, /server\.port \(from PORT\): Too big/],
    [{ STREAMGATE_ENFORCEMENT_ONSTOREERROR: 'maybe' }, /enforcement\.onStoreError \(from STREAMGATE_ENFORCEMENT_ONSTOREERROR\): Invalid option/],
    [{ STREAMGATE_HOOKS_TRUSTEDPROXIES: 'not-an-ip' }, /hooks\.trustedProxies\.0 \(from STREAMGATE_HOOKS_TRUSTEDPROXIES\): expected an IP address or CIDR block/],
    [{ REDIS_URL: 'http://x' }, /redis\.url \(from REDIS_URL\): expected a redis:\/\/, rediss:\/\/ or redis-sentinel:\/\/ URL/],
    [{ STREAMGATE_REDIS_SENTINELS: 'a:1' }, /redis\.sentinelName: required when redis\.sentinels is set/],
    [{ STREAMGATE_NO_SUCH_THING: '1' }, /STREAMGATE_NO_SUCH_THING: no such setting/],
    [{ STREAMGATE_ADMIN_KEY: 'a'.repeat(31) }, /adminKey \(from STREAMGATE_ADMIN_KEY\): must be empty \(off\) or at least 32 characters/],
    [{ STREAMGATE_HOOK_SECRET: 'short' }, /hooks\.secret \(from STREAMGATE_HOOK_SECRET\): must be empty \(off\) or at least 32 characters/],
    [{ STREAMGATE_HOOK_SECRET: ' '.repeat(40) }, /hooks\.secret \(from STREAMGATE_HOOK_SECRET\): must not start or end with white space or hold control characters/],
    [{ STREAMGATE_ADMIN_KEY: `${'a'.repeat(40)}\n` }, /adminKey \(from STREAMGATE_ADMIN_KEY\): must not start or end with white space or hold control characters/],
    [{ HOST: '0.0.0.0' }, /hooks\.secret: required when listening on 0\.0\.0\.0 \(reachable from other machines\)/],
    [{ HOST: '::' }, /hooks\.secret: required when listening on ::/],
    [{ HOST: '10.1.2.3' }, /hooks\.secret: required when listening on 10\.1\.2\.3/],
    [{ HOST: 'streamgate.internal' }, /hooks\.secret: required when listening on streamgate\.internal/],
    [{ STREAMGATE_WEBHOOKS_HEADERNAMES: '' }, /webhooks\.headerNames \(from STREAMGATE_WEBHOOKS_HEADERNAMES\): name at least one of service, millicast/],
    [{ STREAMGATE_WEBHOOKS_HEADERNAMES: 'service,dolby' }, /webhooks\.headerNames\.1 \(from STREAMGATE_WEBHOOKS_HEADERNAMES\): Invalid option/],
    [{ STREAMGATE_ISSUERS_ALLOWPRIVATEJWKSHOSTS: 'idp.internal,idp internal' }, /issuers\.allowPrivateJwksHosts\.1 \(from STREAMGATE_ISSUERS_ALLOWPRIVATEJWKSHOSTS\): expected a host name, IP address or CIDR block/],
    [{ STREAMGATE_ISSUERS_JWKSMINCACHESECONDS: '7200' }, /issuers\.jwksMinCacheSeconds \(from STREAMGATE_ISSUERS_JWKSMINCACHESECONDS\): must be at most issuers\.jwksMaxCacheSeconds \(3600\)/],
    [{ STREAMGATE_HOOKS_REALIPHEADER: 'X Real IP' }, /hooks\.realIpHeader \(from STREAMGATE_HOOKS_REALIPHEADER\): expected a header name/],
    [{ STREAMGATE_HOOKS_SRT_TOKENKEY: 's' }, /hooks\.srt\.tokenKey \(from STREAMGATE_HOOKS_SRT_TOKENKEY\): single-letter keys are reserved by the SRT access-control syntax/],
    [{ STREAMGATE_HOOKS_SRT_TOKENKEY: 'sg,token' }, /hooks\.srt\.tokenKey \(from STREAMGATE_HOOKS_SRT_TOKENKEY\): a key of letters, digits, _ and -/],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)$","action":"publish","methods":["POST"]}]' },
      /hooks\.authRequest\.streamPatterns\.0 \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): names methods or a session resource, so hooks\.authRequest\.methodFrom must say where the method is read/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)$","methods":["OPTIONS"]}]', STREAMGATE_HOOKS_AUTHREQUEST_METHODFROM: 'x-original-method' },
      /hooks\.authRequest\.streamPatterns\.0\.methods\.0 \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): Invalid option/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)$","action":"play"}]' },
      /hooks\.authRequest\.streamPatterns\.0\.action \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): Invalid option: expected one of "subscribe"\|"publish"/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)$","method":["POST"]}]' },
      /hooks\.authRequest\.streamPatterns\.0\.method \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): unknown setting/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/cam1$","action":"publish"}]' },
      /hooks\.authRequest\.streamPatterns\.0\.pattern \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): needs a named group \(\?<stream>\.\.\.\)/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)/[^/]+$","resource":true}]', STREAMGATE_HOOKS_AUTHREQUEST_METHODFROM: 'x-original-method' },
      /hooks\.authRequest\.streamPatterns\.0\.methods \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): a session resource \(resource: true\) must name its methods/,
    ],
    [
      { STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS: '[{"pattern":"^/whip/(?<stream>[^/]+)/[^/]+$","methods":["POST","DELETE"],"resource":true}]', STREAMGATE_HOOKS_AUTHREQUEST_METHODFROM: 'x-original-method' },
      /hooks\.authRequest\.streamPatterns\.0\.methods \(from STREAMGATE_HOOKS_AUTHREQUEST_STREAMPATTERNS\): a session resource \(resource: true\) cannot be for POST/,
    ],
    [{ STREAMGATE_REDIS_WAITREPLICAS: '1', STREAMGATE_REDIS_WAITTIMEOUTMS: '5000' }, /redis\.waitTimeoutMs \(from STREAMGATE_REDIS_WAITTIMEOUTMS\): must be below redis\.commandTimeoutMs/],
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

  const configFile = (text: string) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-cfg-')), 'c.yaml');
    writeFileSync(file, text);
    return file;
  };
  const refusal = (opts: Parameters<typeof loadConfig>[0]) => {
    try {
      loadConfig(opts);
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      return e.message;
    }
    assert.fail('loaded');
  };

  it('names an unknown key of a config file, and the file', () => {
    const file = configFile('server:\n  prot: 1\n');
    assert.equal(refusal({ file, env: {} }), `invalid configuration: server.prot (from ${file}): unknown setting`);
  });

  it('names the layer that set an invalid value: the variable over the file, nothing for a default or a value given in code', () => {
    const file = configFile('hooks:\n  trustedProxies: [10.0.0.0/8, nonsense]\nenforcement:\n  storeTimeoutMs: 0\n  cacheTtlMs: 5\n');
    assert.equal(
      refusal({ file, env: { STREAMGATE_ENFORCEMENT_CACHETTLMS: '-1', HOST: '0.0.0.0' } }),
      `invalid configuration: enforcement.storeTimeoutMs (from ${file}): Too small: expected number to be >=1; enforcement.cacheTtlMs (from STREAMGATE_ENFORCEMENT_CACHETTLMS): Too small: expected number to be >=0; hooks.trustedProxies.1 (from ${file}): expected an IP address or CIDR block; hooks.secret: required when listening on 0.0.0.0 (reachable from other machines): set STREAMGATE_HOOK_SECRET (32+ characters), listen on 127.0.0.1, or set hooks.allowUnauthenticated: true to leave /hooks/* open`,
    );
    assert.equal(
      refusal({ file, env: {}, overrides: { enforcement: { storeTimeoutMs: -5 } } }),
      `invalid configuration: enforcement.storeTimeoutMs: Too small: expected number to be >=1; hooks.trustedProxies.1 (from ${file}): expected an IP address or CIDR block`,
    );
  });

  it('names a map setting set whole by its variable for a problem inside it', () => {
    assert.equal(
      refusal({ env: { STREAMGATE_HOOK_SECRET: HOOKS, STREAMGATE_HOOKS_ALLOWFROM: '{"nginx-rtmp":["not-an-address"]}' } }),
      'invalid configuration: hooks.allowFrom.nginx-rtmp.0 (from STREAMGATE_HOOKS_ALLOWFROM): expected an IP address or CIDR block',
    );
  });

  it('names a config file that is not valid YAML, with the line and column, on one line and without its text', () => {
    const file = configFile('server:\n  port: 8080\n  host: "127.0.0.1\nhooks:\n  secret: do-not-echo-this-secret-0123456789\n');
    assert.equal(refusal({ file, env: {} }), `config file ${file}: invalid YAML at line 6, column 1: Missing closing "quote`);
    const twoDocs = configFile('server:\n  port: 8080\n---\nlog:\n  level: debug\n');
    assert.equal(refusal({ file: twoDocs, env: {} }), `config file ${twoDocs}: invalid YAML at line 3, column 1: a second document (---); a config file holds one`);
    const list = configFile('- server\n');
    assert.equal(refusal({ file: list, env: {} }), `config file ${list}: expected a mapping at the top level`);
  });

  it('names a config file that cannot be read and what named it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-cfg-'));
    const missing = path.join(dir, 'missing.yaml');
    assert.equal(refusal({ file: missing, env: {} }), `cannot read config file ${missing} (--config): no such file (ENOENT)`);
    assert.equal(refusal({ env: { STREAMGATE_CONFIG: missing } }), `cannot read config file ${missing} (STREAMGATE_CONFIG): no such file (ENOENT)`);
    assert.equal(refusal({ file: dir, env: {} }), `cannot read config file ${dir} (--config): it is a directory (EISDIR)`);
  });

  it('refuses a redis-sentinel:// URL it cannot read, without echoing it', () => {
    const url = 'redis-sentinel://:hunter2-password@10.0.0.1:26379';
    assert.equal(
      refusal({ env: { REDIS_URL: url } }),
      'invalid configuration: redis.url (from REDIS_URL): expected redis-sentinel://[:password@]host:port,host:port/mastername[/db]',
    );
  });
});
