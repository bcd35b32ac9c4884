// Webhooks on Redis: a record per webhook, the account's index, and a capped deliveries list.
import type { Delivery, Webhook, WebhookStore } from '../webhooks.js';
import { keys } from './keys.js';
import { DELIVERIES_KEPT } from '../../domain/store-rules.js';
import { compareAndSet } from '../failures.js';
import { casReply } from './codes.js';
import { copyWith } from '../../domain/objects.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';

export class RedisWebhooks implements WebhookStore {
  constructor(private readonly c: RedisConnection) {}

  async #readWebhook(accountId: string, id: number): Promise<Webhook | null> {
    const h = (await this.c.redis.hgetall(keys.webhook(accountId, id))) as { json?: string; rev?: string };
    if (!h.json || !h.rev) return null;
    const w = JSON.parse(h.json) as Webhook;
    return w.accountId === accountId ? copyWith(w, { id, rev: Number(h.rev) }) : null;
  }

  async createWebhook(w: Omit<Webhook, 'id' | 'rev'>): Promise<Webhook> {
    const id = await this.c.redis.incr(keys.webhookSeq);
    await this.c.redis
      .multi()
      .hset(keys.webhook(w.accountId, id), 'json', JSON.stringify(w), 'rev', 1)
      .zadd(keys.webhooks(w.accountId), id, String(id))
      .exec();
    await this.c.replicated();
    return copyWith(w, { id, rev: 1 });
  }

  async getWebhook(accountId: string, id: number): Promise<Webhook | null> {
    return this.#readWebhook(accountId, id);
  }

  async updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook): Promise<Webhook | null> {
    return compareAndSet(`webhook ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const cur = await this.#readWebhook(accountId, id);
      if (!cur) return { done: null };
      const { id: _i, rev: _r, ...next } = change(cur);
      const reply = await this.c.run('recordCas', keys.webhook(accountId, id), cur.rev, JSON.stringify(next));
      const step = casReply<Webhook | null>(reply, (rev) => copyWith(next, { id, rev }), () => null);
      if (step !== 'retry' && step.done) await this.c.replicated();
      return step;
    });
  }

  async deleteWebhook(accountId: string, id: number): Promise<boolean> {
    if (!(await this.#readWebhook(accountId, id))) return false;
    const res = await this.c.redis
      .multi()
      .del(keys.webhook(accountId, id), keys.deliveries(accountId, id))
      .zrem(keys.webhooks(accountId), String(id))
      .exec();
    const deleted = Number(res?.[0]?.[1] ?? 0) > 0;
    if (deleted) await this.c.replicated();
    return deleted;
  }

  async listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]> {
    const ids = q.descending
      ? await this.c.redis.zrevrangebyscore(keys.webhooks(accountId), q.startingId ?? '+inf', '-inf', 'LIMIT', 0, q.itemCount)
      : await this.c.redis.zrangebyscore(keys.webhooks(accountId), q.startingId ?? '-inf', '+inf', 'LIMIT', 0, q.itemCount);
    const all = await Promise.all(ids.map((id) => this.#readWebhook(accountId, Number(id))));
    return all.filter((w): w is Webhook => w !== null);
  }

  async addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void> {
    await this.c.run('deliveryAdd', keys.webhook(accountId, webhookId), keys.deliveries(accountId, webhookId), JSON.stringify(d), DELIVERIES_KEPT);
  }

  async listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]> {
    if (!(await this.c.redis.exists(keys.webhook(accountId, webhookId)))) return [];
    return (await this.c.redis.lrange(keys.deliveries(accountId, webhookId), 0, DELIVERIES_KEPT - 1)).map((x) => JSON.parse(x) as Delivery);
  }
}
