// Token-sharing signals on Redis (src/store/sharing.ts): per credential a hash of the uses and a
// zset of their times, in the account's slot, expiring with the window (lua/sharing-record.lua).
import { SHARING_MAX_ADDRESSES, type SharingStore, type SharingUse } from '../sharing.js';
import { keys } from './keys.js';
import type { RedisConnection } from './connection.js';

const parsed = (texts: Array<string | null>): SharingUse[] => texts.flatMap((t) => (typeof t === 'string' ? [JSON.parse(t) as SharingUse] : []));

export class RedisSharing implements SharingStore {
  constructor(private readonly c: RedisConnection) {}

  async recordSharing(accountId: string, credential: string, uses: readonly SharingUse[], windowMs: number): Promise<SharingUse[]> {
    const args: Array<string | number> = [this.c.now(), Math.max(1, Math.ceil(windowMs)), SHARING_MAX_ADDRESSES];
    for (const u of uses) args.push(u.ip, u.at, JSON.stringify(u));
    // {DONE, json...}
    const reply = (await this.c.run('sharingRecord', keys.sharingUses(accountId, credential), keys.sharingTimes(accountId, credential), ...args)) as [number, ...Array<string | null>];
    return parsed(reply.slice(1) as Array<string | null>);
  }

  async sharingUses(accountId: string, credential: string, windowMs: number): Promise<SharingUse[]> {
    const ips = await this.c.redis.zrevrangebyscore(keys.sharingTimes(accountId, credential), '+inf', this.c.now() - windowMs, 'LIMIT', 0, SHARING_MAX_ADDRESSES);
    if (ips.length === 0) return [];
    return parsed(await this.c.redis.hmget(keys.sharingUses(accountId, credential), ...ips));
  }
}
