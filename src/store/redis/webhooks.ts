// Webhooks on Redis: a record per webhook, the account's index, and a capped deliveries list.
import type { Delivery, Webhook, WebhookStore } from '../webhooks.js';
import { keys } from './keys.js';
import { DELIVERIES_KEPT } from '../../domain/store-rules.js';
import { compareAndSet } from '../failures.js';
import { Reply, auditMoved, casReply, codeOf, unexpectedReply } from './codes.js';
import type { AuditSealer } from '../../domain/audit.js';
import { sealFor } from './audit.js';
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

  async createWebhook(w: Omit<Webhook, 'id' | 'rev'>, audit?: AuditSealer<Webhook>): Promise<Webhook> {
    const id = await this.c.redis.incr(keys.webhookSeq);
    const created = copyWith(w, { id, rev: 1 });
    await compareAndSet(`webhook ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const sealed = await sealFor(this.c, w.accountId, audit, null, created);
      const reply = await this.c.run('webhookCreate', keys.webhook(w.accountId, id), keys.webhooks(w.accountId), ...sealed.keys, JSON.stringify(w), id, ...sealed.argv);
      if (auditMoved(reply)) return 'retry';
      if (codeOf(reply) !== Reply.DONE) throw new Error(`webhook id ${id} already taken (sequence reset?)`);
      return { done: true };
    });
    await this.c.replicated();
    return created;
  }

  async getWebhook(accountId: string, id: number): Promise<Webhook | null> {
    return this.#readWebhook(accountId, id);
  }

  async updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook, audit?: AuditSealer<Webhook>): Promise<Webhook | null> {
    return compareAndSet(`webhook ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const cur = await this.#readWebhook(accountId, id);
      if (!cur) return { done: null };
      const { id: _i, rev: _r, ...next } = change(cur);
      const sealed = await sealFor(this.c, accountId, audit, cur, copyWith(next, { id, rev: cur.rev + 1 }));
      const reply = await this.c.run('recordCas', keys.webhook(accountId, id), ...sealed.keys, cur.rev, JSON.stringify(next), ...sealed.argv);
      if (auditMoved(reply)) return 'retry';
      const step = casReply<Webhook | null>(reply, (rev) => copyWith(next, { id, rev }), () => null);
      if (step !== 'retry' && step.done) await this.c.replicated();
      return step;
    });
  }

  async deleteWebhook(accountId: string, id: number, audit?: AuditSealer<Webhook>): Promise<boolean> {
    const deleted = await compareAndSet(`webhook ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const cur = await this.#readWebhook(accountId, id);
      if (!cur) return { done: false };
      const sealed = await sealFor(this.c, accountId, audit, cur, null);
      const reply = await this.c.run(
        'webhookDelete',
        keys.webhook(accountId, id),
        keys.deliveries(accountId, id),
        keys.webhooks(accountId),
        ...sealed.keys,
        cur.rev,
        id,
        ...sealed.argv,
      );
      if (auditMoved(reply)) return 'retry';
      const code = codeOf(reply);
      if (code === Reply.DONE) return { done: true };
      if (code === Reply.GONE) return { done: false };
      if (code === Reply.MOVED) return 'retry';
      throw unexpectedReply('webhook-delete', reply);
    });
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
