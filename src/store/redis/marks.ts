// Marks on Redis: a key per mark, "<expires ms>:<value>", expiring by PX too.
import type { MarkStore } from '../marks.js';
import { keys } from './keys.js';
import { Reply, codeOf } from './codes.js';
import type { RedisConnection } from './connection.js';

export class RedisMarks implements MarkStore {
  constructor(private readonly c: RedisConnection) {}

  async swapMark(accountId: string, name: string, value: string, ttlMs: number, when: 'always' | 'absent' | 'present' = 'always'): Promise<string | null> {
    // {DONE | EXISTS | GONE, the value held before}
    const [, held] = (await this.c.run('markSwap', keys.mark(accountId, name), value, Math.max(1, Math.ceil(ttlMs)), this.c.now(), when)) as [number, string | null];
    return typeof held === 'string' ? held : null;
  }

  async takeMark(accountId: string, name: string, value: string): Promise<boolean> {
    return codeOf(await this.c.run('markTake', keys.mark(accountId, name), value, this.c.now())) === Reply.DONE;
  }
}
