// Bind on usage on Redis: a list of bound addresses per token, bound by bind-address.lua.
import type { TokenRecord } from '../../domain/tokens.js';
import type { BindResult, BindStore } from '../binds.js';
import { keys } from './keys.js';
import { bindResult } from './codes.js';
import type { RedisConnection } from './connection.js';

export class RedisBinds implements BindStore {
  constructor(private readonly c: RedisConnection) {}

  async boundAddresses(accountId: string, tokenId: number): Promise<string[]> {
    return this.c.redis.zrange(keys.bound(accountId, tokenId), 0, -1);
  }

  async bindAddress(token: TokenRecord, address: string): Promise<BindResult> {
    return bindResult(
      await this.c.run('bindAddress', keys.tokenRecord(token.accountId, token.id)[0], keys.bound(token.accountId, token.id), token.rev, address, token.bindIpsOnUsage ?? 0, token.id),
    );
  }
}
