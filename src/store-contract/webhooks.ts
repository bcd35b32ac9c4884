// The webhooks and their deliveries: per account, atomic updates, the newest deliveries kept
// (src/store/webhooks.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StoreLifecycle, WebhookStore } from '../store/store.js';
import { T0 } from './fixtures.js';
import type { Fresh } from './factory.js';

export type WebhooksUnderTest = WebhookStore & StoreLifecycle;

export function webhookTests(fresh: Fresh<WebhooksUnderTest>): void {
  describe('webhooks and deliveries', () => {
    const hook = (accountId: string, url = 'https://example.com/h') => ({
      accountId,
      url,
      secret: 'c2VjcmV0',
      isFeedHooks: true,
      isRecordingHooks: false,
      isThumbnailHooks: false,
      createdOn: new Date(T0).toISOString(),
      updatedOn: new Date(T0).toISOString(),
    });

    it('creates, reads, updates atomically, lists from a starting id, and deletes webhooks per account', async () => {
      const s = await fresh();
      const a = await s.createWebhook(hook('A'));
      const b = await s.createWebhook(hook('A', 'https://example.com/2'));
      const c = await s.createWebhook(hook('A', 'https://example.com/3'));
      await s.createWebhook(hook('B'));
      assert.deepEqual(await s.getWebhook('A', a.id), a);
      assert.equal(await s.getWebhook('B', a.id), null);
      const ids = async (q: { startingId?: number; itemCount: number; descending: boolean }) => (await s.listWebhooks('A', q)).map((w) => w.id);
      assert.deepEqual(await ids({ itemCount: 10, descending: false }), [a.id, b.id, c.id]);
      assert.deepEqual(await ids({ startingId: b.id, itemCount: 10, descending: false }), [b.id, c.id]);
      assert.deepEqual(await ids({ itemCount: 2, descending: true }), [c.id, b.id]);
      assert.deepEqual(await ids({ startingId: b.id, itemCount: 10, descending: true }), [b.id, a.id]);
      await Promise.all(Array.from({ length: 10 }, (_, i) => s.updateWebhook('A', a.id, (w) => ({ ...w, url: `${w.url}/${i}` }))));
      const after = await s.getWebhook('A', a.id);
      assert.equal(after!.url.split('/').length, 4 + 10, 'no update lost');
      assert.equal(after!.rev, 11);
      assert.equal(await s.updateWebhook('B', a.id, (w) => w), null);
      assert.equal(await s.deleteWebhook('B', a.id), false);
      assert.equal(await s.deleteWebhook('A', a.id), true);
      assert.equal(await s.getWebhook('A', a.id), null);
    });

    it('keeps the newest 100 deliveries, newest first, and forgets them with the webhook', async () => {
      const s = await fresh();
      const w = await s.createWebhook(hook('A'));
      for (let i = 0; i < 105; i++) {
        await s.addDelivery('A', w.id, { deliveryId: `d${i}`, at: new Date(T0 + i).toISOString(), event: 'feeds.started', attempt: 1, statusCode: 200, durationMs: 3 });
      }
      const log = await s.listDeliveries('A', w.id);
      assert.equal(log.length, 100);
      assert.deepEqual([log[0].deliveryId, log[99].deliveryId], ['d104', 'd5']);
      assert.deepEqual(await s.listDeliveries('B', w.id), []);
      await s.deleteWebhook('A', w.id);
      const again = await s.createWebhook(hook('A'));
      assert.deepEqual(await s.listDeliveries('A', again.id), []);
    });
  });
}
