// What a decision-history sink on Redis stores, as text (test/unit/history-sink.suite.ts `dump`):
// every key under a prefix on each server given, with every value, leaving out the keys that have
// expired by a time (their PEXPIRETIME, by Redis's clock).
import type { Redis } from 'ioredis';

/** `servers`: clients without a key prefix, one per server that can hold the keys (each primary of a cluster). */
export async function dumpRedisKeys(servers: Redis[], prefix: string, at: number): Promise<string> {
  const out: unknown[] = [];
  for (const raw of servers) {
    for (const key of (await raw.keys(`${prefix}*`)).sort()) {
      const expires = Number(await raw.call('PEXPIRETIME', key));
      if (expires > 0 && expires <= at) continue;
      const type = await raw.type(key);
      const value =
        type === 'stream' ? await raw.xrange(key, '-', '+') : type === 'hash' ? await raw.hgetall(key) : type === 'set' ? await raw.smembers(key) : type === 'string' ? await raw.get(key) : type;
      out.push([key, value]);
    }
  }
  return JSON.stringify(out);
}
