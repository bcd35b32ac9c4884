// Token-sharing detection on a store (docs/api.md#token-sharing): uses offered by decisions are
// written to the window in batches, placed, held to the token's policy over its account's; a
// flagged token gets its action, once per window (limit each time); an account with the policy off
// records nothing; repeated uses of one address are offered once; a full queue drops and counts;
// an issuer's subjects are credentials of their own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Metrics } from '../../src/observability/metrics.js';
import { credentialKey, SharingMonitor, tokenSharingEvent, type SharingActions, type SharingFlag } from '../../src/sharing/monitor.js';
import { testPlaces } from '../helpers/places.js';
import type { SharingSettings } from '../../src/domain/sharing.js';

const T0 = Date.parse('2026-11-29T12:00:00.000Z');

async function setup(account: SharingSettings | undefined, disables = true) {
  let now = T0;
  const store = new SqliteStore({ file: ':memory:', now: () => now });
  await store.createAccount({ id: 'SHARE1', name: 'share', createdOn: new Date(T0).toISOString(), secureViewer: false, sharing: account });
  const flags: Array<{ what: 'notify' | 'limit' | 'disable'; flag: SharingFlag }> = [];
  const actions: SharingActions = {
    notify: async (flag) => void flags.push({ what: 'notify', flag }),
    limit: async (flag) => {
      flags.push({ what: 'limit', flag });
      return 0;
    },
    disable: async (flag) => {
      flags.push({ what: 'disable', flag });
      return disables;
    },
  };
  const metrics = new Metrics({ defaultMetrics: false });
  const monitor = new SharingMonitor(store, testPlaces, actions, metrics, pino({ level: 'silent' }), () => now, { flushMs: 1000, queueSize: 50 });
  const token = { accountId: 'SHARE1', kind: 'subscribe' as const, id: 7 };
  const counted = async (name: string) => Object.fromEntries(((await metrics.registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [Object.values(v.labels).join(','), v.value]));
  return {
    store,
    monitor,
    token,
    flags,
    counted,
    tick: (ms: number) => {
      now += ms;
    },
  };
}

describe('token sharing monitor', () => {
  it('20 addresses in 5 countries within 10 minutes: notify once per window, with what the window held', async () => {
    const t = await setup({ enabled: true });
    for (let i = 0; i < 20; i++) {
      t.monitor.observe(t.token, `198.51.${i}.1`, 1);
      t.tick(30_000);
    }
    await t.monitor.flush();
    assert.deepEqual(t.flags.map((f) => f.what), ['notify']);
    const a = t.flags[0].flag.assessment;
    assert.deepEqual([a.addresses, a.networks, a.asns, a.countries, a.flags], [20, 20, 20, 5, ['networks', 'asns', 'countries']]);
    assert.equal(t.flags[0].flag.newestIp, '198.51.19.1');
    assert.equal((await t.store.sharingUses('SHARE1', 'subscribe:7', 3_600_000)).length, 20);
    // more uses in the same window: flagged again, not notified again
    t.monitor.observe(t.token, '198.51.20.1', 1);
    await t.monitor.flush();
    assert.deepEqual(t.flags.map((f) => f.what), ['notify']);
    assert.deepEqual(await t.counted('streamgate_sharing_flags_total'), { notify: 1 });
    assert.deepEqual(await t.counted('streamgate_sharing_uses_total'), { recorded: 21 });
    // the next window notifies again
    t.tick(3_600_000);
    for (let i = 30; i < 40; i++) t.monitor.observe(t.token, `198.51.${i}.1`, 1);
    await t.monitor.flush();
    assert.deepEqual(t.flags.map((f) => f.what), ['notify', 'notify']);
  });

  it('limit acts at every flagged write, disable once; the token overrides its account', async () => {
    const t = await setup({ enabled: true, action: 'limit' });
    for (let i = 0; i < 6; i++) {
      t.monitor.observe(t.token, `198.51.${i}.1`, 1);
      t.tick(1000);
    }
    await t.monitor.flush();
    t.monitor.observe(t.token, '198.51.9.1', 1);
    await t.monitor.flush();
    assert.deepEqual(t.flags.map((f) => [f.what, f.flag.newestIp]), [['notify', '198.51.5.1'], ['limit', '198.51.5.1'], ['limit', '198.51.9.1']]);

    const other = { accountId: 'SHARE1', kind: 'publish' as const, id: 8, sharing: { action: 'disable' as const } };
    for (let i = 0; i < 6; i++) t.monitor.observe(other, `198.51.${i}.1`, 1);
    await t.monitor.flush();
    t.monitor.observe(other, '198.51.9.1', 1);
    await t.monitor.flush();
    assert.deepEqual(t.flags.slice(3).map((f) => [f.what, f.flag.kind, f.flag.tokenId]), [['notify', 'publish', 8], ['disable', 'publish', 8]]);
  });

  it('not flagged: four devices on one /24 and a switch to a mobile network within an hour; one address with many sessions', async () => {
    const t = await setup({ enabled: true });
    for (const d of [1, 2, 3, 4]) {
      t.monitor.observe(t.token, `192.0.2.${d}`, 1);
      t.tick(10 * 60_000);
    }
    t.monitor.observe(t.token, '100.64.7.9', 1);
    for (let i = 0; i < 50; i++) t.monitor.observe({ accountId: 'SHARE1', kind: 'subscribe', id: 9 }, '192.0.2.200', 1);
    await t.monitor.flush();
    assert.deepEqual(t.flags, []);
    assert.equal((await t.store.sharingUses('SHARE1', 'subscribe:7', 3_600_000)).length, 5);
    assert.equal((await t.store.sharingUses('SHARE1', 'subscribe:9', 3_600_000)).length, 1, 'one address, offered once a minute');
  });

  it('off: an account without a policy records nothing, and once its version is known its uses are not even queued; a token may turn it on', async () => {
    const t = await setup(undefined);
    t.monitor.observe(t.token, '198.51.1.1', 4);
    await t.monitor.flush();
    assert.deepEqual(await t.store.sharingUses('SHARE1', 'subscribe:7', 3_600_000), []);
    for (let i = 0; i < 100; i++) t.monitor.observe(t.token, `198.51.${i}.1`, 4);
    assert.deepEqual(await t.counted('streamgate_sharing_uses_total'), {}, 'nothing queued, nothing dropped');
    t.monitor.observe({ ...t.token, sharing: { enabled: true } }, '203.0.113.5', 4);
    await t.monitor.flush();
    assert.deepEqual((await t.store.sharingUses('SHARE1', 'subscribe:7', 3_600_000)).map((u) => u.ip), ['203.0.113.5']);
  });

  it("an issuer's subjects are credentials of their own under the policy token's policy: counted apart from each other and from the token", async () => {
    const t = await setup({ enabled: true, action: 'disable' });
    const policy = { accountId: 'SHARE1', kind: 'subscribe' as const, id: 7 };
    // alice from three countries, bob from one address, the policy token itself from one address
    for (let i = 0; i < 3; i++) t.monitor.observe(policy, `198.51.${i}.1`, 1, 4, 'sub:alice');
    for (let i = 0; i < 3; i++) t.monitor.observe(policy, '198.51.9.1', 1, 4, 'sub:bob');
    t.monitor.observe(policy, '198.51.8.1', 1);
    await t.monitor.flush();
    assert.deepEqual(
      t.flags.map((f) => [f.what, f.flag.tokenId, f.flag.issuerId, f.flag.subject, f.flag.action]),
      [
        ['notify', 7, 4, 'sub:alice', 'disable'],
        ['disable', 7, 4, 'sub:alice', 'disable'],
      ],
    );
    const alice = credentialKey({ kind: 'subscribe', tokenId: 7, issuerId: 4, subject: 'sub:alice' });
    assert.match(alice, /^issuer:4:[A-Za-z0-9_-]{22}$/);
    assert.notEqual(alice, credentialKey({ kind: 'subscribe', tokenId: 7, issuerId: 5, subject: 'sub:alice' }), 'another issuer, another credential');
    assert.equal((await t.store.sharingUses('SHARE1', alice, 3_600_000)).length, 3);
    assert.equal((await t.store.sharingUses('SHARE1', credentialKey({ kind: 'subscribe', tokenId: 7, issuerId: 4, subject: 'sub:bob' }), 3_600_000)).length, 1);
    assert.deepEqual((await t.store.sharingUses('SHARE1', 'subscribe:7', 3_600_000)).map((u) => u.ip), ['198.51.8.1']);
    // the webhook names the subject and its claim
    const event = tokenSharingEvent(t.flags[0].flag, 'paid event');
    assert.deepEqual([event.data.tokenId, event.data.issuerId, event.data.subject, event.data.subjectClaim], [7, 4, 'alice', 'sub']);
  });

  it('disable of a subject no revocation list names, or one its issuer cannot list, acts as limit', async () => {
    const t = await setup({ enabled: true, action: 'disable' }, false);
    const policy = { accountId: 'SHARE1', kind: 'subscribe' as const, id: 7 };
    for (let i = 0; i < 3; i++) t.monitor.observe(policy, `198.51.${i}.1`, 1, 4, 'viewer:v-1');
    for (let i = 0; i < 3; i++) t.monitor.observe(policy, `198.51.${i}.1`, 1, 4, 'sub:carol');
    await t.monitor.flush();
    assert.deepEqual(
      t.flags.map((f) => [f.what, f.flag.subject, f.flag.action]),
      [
        // an IVS-style viewer claim: the webhook says limit, and the newest device keeps it
        ['notify', 'viewer:v-1', 'limit'],
        ['limit', 'viewer:v-1', 'limit'],
        // a sub its issuer could not list (its list full): limited instead
        ['notify', 'sub:carol', 'disable'],
        ['disable', 'sub:carol', 'disable'],
        ['limit', 'sub:carol', 'disable'],
      ],
    );
    assert.deepEqual(await t.counted('streamgate_sharing_flags_total'), { limit: 1, disable: 1 });
  });

  it('a full queue drops the excess and counts it', async () => {
    const t = await setup({ enabled: true, maxNetworks: 0, maxAsns: 0, maxCountries: 0, travelKmh: 0 });
    for (let i = 0; i < 60; i++) t.monitor.observe(t.token, `10.0.${i}.1`, 1);
    assert.deepEqual(await t.counted('streamgate_sharing_uses_total'), { dropped: 10 });
    await t.monitor.flush();
    assert.deepEqual(await t.counted('streamgate_sharing_uses_total'), { dropped: 10, recorded: 50 });
    assert.deepEqual(t.flags, []);
  });
});
