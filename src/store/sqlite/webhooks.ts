// Webhooks on SQLite: the webhooks table and each webhook's deliveries log (the newest DELIVERIES_KEPT).
import type { Delivery, Webhook, WebhookStore } from '../webhooks.js';
import { DELIVERIES_KEPT } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import type { SqliteConnection } from './connection.js';
import type { AuditSealer } from '../../domain/audit.js';
import { appendSealed } from './audit.js';

/** A row of a table with a JSON column and a revision. */
interface RevRow {
  id: number;
  rev: number;
  data: string;
}

export class SqliteWebhooks implements WebhookStore {
  constructor(private readonly c: SqliteConnection) {}

  #readWebhook(accountId: string, id: number): Webhook | null {
    const r = this.c.stmt('SELECT id, rev, data FROM webhooks WHERE id = ? AND account_id = ?').get(id, accountId) as RevRow | undefined;
    return r ? copyWith(JSON.parse(r.data) as Webhook, { id: r.id, rev: r.rev }) : null;
  }

  async createWebhook(w: Omit<Webhook, 'id' | 'rev'>, audit?: AuditSealer<Webhook>): Promise<Webhook> {
    return this.c.tx(() => {
      const info = this.c.stmt('INSERT INTO webhooks (account_id, rev, data) VALUES (?, 1, ?)').run(w.accountId, JSON.stringify(w));
      const created = copyWith(w, { id: Number(info.lastInsertRowid), rev: 1 });
      appendSealed(this.c, w.accountId, audit, null, created);
      return created;
    });
  }

  async getWebhook(accountId: string, id: number): Promise<Webhook | null> {
    return this.#readWebhook(accountId, id);
  }

  async updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook, audit?: AuditSealer<Webhook>): Promise<Webhook | null> {
    return this.c.tx(() => {
      const cur = this.#readWebhook(accountId, id);
      if (!cur) return null;
      const { id: _i, rev: _r, ...next } = change(cur);
      const rev = cur.rev + 1;
      this.c.stmt('UPDATE webhooks SET rev = ?, data = ? WHERE id = ?').run(rev, JSON.stringify(next), id);
      const updated = copyWith(next, { id, rev });
      appendSealed(this.c, accountId, audit, cur, updated);
      return updated;
    });
  }

  async deleteWebhook(accountId: string, id: number, audit?: AuditSealer<Webhook>): Promise<boolean> {
    return this.c.tx(() => {
      const cur = this.#readWebhook(accountId, id);
      if (!cur) return false;
      this.c.stmt('DELETE FROM webhooks WHERE id = ? AND account_id = ?').run(id, accountId);
      this.c.stmt('DELETE FROM deliveries WHERE webhook_id = ?').run(id);
      appendSealed(this.c, accountId, audit, cur, null);
      return true;
    });
  }

  async listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]> {
    const rows = (
      q.descending
        ? this.c.stmt('SELECT id, rev, data FROM webhooks WHERE account_id = ? AND id <= ? ORDER BY id DESC LIMIT ?')
            .all(accountId, q.startingId ?? Number.MAX_SAFE_INTEGER, q.itemCount)
        : this.c.stmt('SELECT id, rev, data FROM webhooks WHERE account_id = ? AND id >= ? ORDER BY id ASC LIMIT ?')
            .all(accountId, q.startingId ?? 0, q.itemCount)
    ) as RevRow[];
    return rows.map((r) => copyWith(JSON.parse(r.data) as Webhook, { id: r.id, rev: r.rev }));
  }

  async addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void> {
    this.c.tx(() => {
      if (!this.#readWebhook(accountId, webhookId)) return;
      this.c.stmt('INSERT INTO deliveries (webhook_id, data) VALUES (?, ?)').run(webhookId, JSON.stringify(d));
      this.c.stmt('DELETE FROM deliveries WHERE webhook_id = ? AND seq NOT IN (SELECT seq FROM deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?)').run(
        webhookId,
        webhookId,
        DELIVERIES_KEPT,
      );
    });
  }

  async listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]> {
    if (!this.#readWebhook(accountId, webhookId)) return [];
    const rows = this.c.stmt('SELECT data FROM deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?').all(webhookId, DELIVERIES_KEPT) as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as Delivery);
  }
}
