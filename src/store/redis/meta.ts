// Deployment metadata on Redis: one key per value.
import type { MetaStore } from '../meta.js';
import { keys } from './keys.js';
import type { RedisConnection } from './connection.js';

export class RedisMeta implements MetaStore {
  constructor(private readonly c: RedisConnection) {}

  async getMeta(key: string): Promise<string | null> {
    return this.c.redis.get(keys.meta(key));
  }

  async setMeta(key: string, value: string, onlyIfAbsent = false): Promise<boolean> {
    const r = onlyIfAbsent ? await this.c.redis.set(keys.meta(key), value, 'NX') : await this.c.redis.set(keys.meta(key), value);
    return r === 'OK';
  }
}
