// What start-up says when Redis cannot be had, from what ioredis reports (the errors below are the
// ones it emits, as seen against real servers; test/process/startup-errors.test.ts runs the real
// thing for standalone, Sentinel and Cluster), and how a Redis URL is shown: never with a password.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { explainRedisFailure, maskRedisUrl } from '../../src/store/redis/connect.js';
import { loadConfig } from '../../src/config/load.js';

const redisOf = (env: Record<string, string>) => loadConfig({ env }).redis;
const closed = () => new Error('Connection is closed.');

describe('Redis start-up errors', () => {
  it('masks the password of a Redis URL, whatever it holds, and keeps the user', () => {
    const cases: Array<[string, string]> = [
      ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
      ['redis://:pw@10.0.0.1:6379/2', 'redis://:***@10.0.0.1:6379/2'],
      ['rediss://app:p@ss/w:rd@cache.internal:6380', 'rediss://app:***@cache.internal:6380'],
      ['redis://only-a-password@10.0.0.1:6379', 'redis://***@10.0.0.1:6379'],
      ['redis-sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379/primary/1', 'redis-sentinel://:***@10.0.0.1:26379,10.0.0.2:26379/primary/1'],
    ];
    for (const [url, shown] of cases) assert.equal(maskRedisUrl(url), shown, url);
  });

  it('Sentinel: a primary name the Sentinels do not know', () => {
    const cfg = redisOf({ STREAMGATE_REDIS_SENTINELS: '10.0.0.1:26379,10.0.0.2:26379', STREAMGATE_REDIS_SENTINELNAME: 'primry' });
    const seen = [new Error('All sentinels are unreachable. Retrying from scratch after 10ms. Last error: ERR No such master with that name')];
    assert.equal(
      explainRedisFailure(cfg, seen, new Error('Redis not ready after 5000 ms')),
      "the Redis Sentinels at 10.0.0.1:26379, 10.0.0.2:26379 know no primary named 'primry' (redis.sentinelName / STREAMGATE_REDIS_SENTINELNAME)",
    );
  });

  it('Sentinel: no Sentinel answers within redis.connectTimeoutMs', () => {
    const cfg = redisOf({ STREAMGATE_REDIS_SENTINELS: '10.0.0.1:26379', STREAMGATE_REDIS_SENTINELNAME: 'primary', STREAMGATE_REDIS_CONNECTTIMEOUTMS: '3000' });
    const seen = [new Error('All sentinels are unreachable. Retrying from scratch after 10ms. Last error: Connection is closed.')];
    assert.equal(
      explainRedisFailure(cfg, seen, new Error('Redis not ready after 3000 ms')),
      'the Redis Sentinels at 10.0.0.1:26379 did not answer within 3000 ms (redis.connectTimeoutMs); are they running and reachable? (redis.sentinels / STREAMGATE_REDIS_SENTINELS)',
    );
  });

  it('a redis-sentinel:// URL: the password goes in the URL, which is shown masked', () => {
    const cfg = redisOf({ REDIS_URL: 'redis-sentinel://:wrong-one@10.0.0.1:26379/primary' });
    const wrong = Object.assign(new Error('WRONGPASS invalid username-password pair or user is disabled.'), { name: 'ReplyError' });
    assert.equal(
      explainRedisFailure(cfg, [wrong], closed()),
      "Redis primary 'primary' of the Sentinels at redis-sentinel://:***@10.0.0.1:26379/primary refused the credentials (WRONGPASS): the password (or user) is wrong; check the URL's password (redis.url / REDIS_URL)",
    );
  });

  it('Cluster: no node answers', () => {
    const cfg = redisOf({ STREAMGATE_REDIS_CLUSTERNODES: '10.0.0.1:7000,10.0.0.2:7000' });
    const failed = Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: closed() });
    assert.equal(
      explainRedisFailure(cfg, [closed(), failed], new Error('None of startup nodes is available')),
      'Redis Cluster at 10.0.0.1:7000, 10.0.0.2:7000: no node answered; are they running? (redis.clusterNodes / STREAMGATE_REDIS_CLUSTERNODES)',
    );
  });

  it('standalone: an unknown host, a timeout, and an error it has no words for', () => {
    const cfg = redisOf({ REDIS_URL: 'redis://:pw@redis.nowhere:6379' });
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND redis.nowhere'), { code: 'ENOTFOUND' });
    assert.equal(
      explainRedisFailure(cfg, [notFound], closed()),
      'Redis at redis://:***@redis.nowhere:6379: no such host (ENOTFOUND); check the address (redis.url / REDIS_URL)',
    );
    assert.equal(
      explainRedisFailure(cfg, [], new Error('Redis not ready after 5000 ms')),
      'Redis at redis://:***@redis.nowhere:6379 did not answer within 5000 ms (redis.connectTimeoutMs); is it running and reachable? (redis.url / REDIS_URL)',
    );
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    assert.equal(
      explainRedisFailure(cfg, [tls], closed()),
      'Redis at redis://:***@redis.nowhere:6379: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT) (redis.url / REDIS_URL)',
    );
  });
});
