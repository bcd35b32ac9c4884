// Token sharing end to end on a real nginx-rtmp with ffmpeg viewers (docs/api.md#token-sharing):
// one subscribe token played from three addresses is flagged, and with the action `limit` the
// newest device wins — the two earlier viewers are cut at their next on_update, the newest plays
// on. Each viewer reaches nginx from an address of its own (127.0.0.2, .3, .4) through a relay in
// this test, since ffmpeg cannot choose its source address. Then the same over two Streamgate
// instances on one Redis, each behind its own nginx-rtmp: the flag one instance raises cuts a
// viewer the other instance admitted, at that nginx's next on_update.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { exitOf } from './nginx.js';
import { startStand, until, type Stand } from './rtmp-stand.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

/** A TCP relay on 127.0.0.1 that connects to `port` from `localAddress`. */
async function relayFrom(localAddress: string, port: number): Promise<net.Server> {
  const server = net.createServer((down) => {
    const up = net.connect({ host: '127.0.0.1', port, localAddress });
    down.pipe(up).pipe(down);
    const close = () => {
      down.destroy();
      up.destroy();
    };
    down.on('error', close).on('close', close);
    up.on('error', close).on('close', close);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

/**
 * An ffmpeg viewer of `name` on `stand`'s nginx from 127.0.0.`n` (through a relay kept in
 * `relays`), once its session is in the registry as `readVia` reads it: the process and the session.
 */
async function viewerFrom(stand: Stand, readVia: Stand, relays: net.Server[], name: string, token: { id: number; token: string }, n: number) {
  const relay = await relayFrom(`127.0.0.${n}`, stand.rtmpPort);
  relays.push(relay);
  const proc = stand.viewAt(`rtmp://127.0.0.1:${(relay.address() as AddressInfo).port}/live/${name}?token=${token.token}`);
  let found: { id: string } | undefined;
  assert.ok(
    await until(async () => {
      found = (await readVia.sessionsOf(token.id)).find((x) => x.clientIp === `127.0.0.${n}`);
      return found !== undefined;
    }, 15000),
    `viewer from 127.0.0.${n} admitted`,
  );
  return { proc, session: found! };
}

describe('token sharing on nginx-rtmp (action limit, on_update every 1 s)', () => {
  let s: Stand;
  const relays: net.Server[] = [];
  before(async () => {
    s = await startStand({ updateEvery: '1s' });
  });
  after(async () => {
    for (const r of relays) r.close();
    await s?.stop();
  });

  it('three addresses on one token: the newest device plays on, the two earlier viewers are cut at their next on_update', async () => {
    // flagged on a third address (the databases place none of 127.0.0.x: addresses are what counts here)
    const policy = await s.api('PUT', '/api/sharing/policy', { enabled: true, maxAddresses: 2, maxNetworks: 0, maxAsns: 0, maxCountries: 0, travelKmh: 0, action: 'limit' });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    const pub = (await s.api('POST', '/api/publish_token', { label: 'src', streams: [{ streamName: 'cam8' }] })).body.data as { id: number; token: string };
    const sub = (await s.api('POST', '/api/subscribe_token', { label: 'shared', streams: [{ streamName: 'cam8' }] })).body.data as { id: number; token: string };
    s.publish('cam8', pub.token);
    assert.ok(await until(async () => (await s.sessionsOf(pub.id)).length === 1, 15000), 'the publisher is live');

    // each viewer's session as admitted (the earlier two are ended within moments of the third)
    const admitted: Array<{ id: string }> = [];
    const viewers = [];
    for (const n of [2, 3, 4]) {
      const v = await viewerFrom(s, s, relays, 'cam8', sub, n);
      viewers.push(v.proc);
      admitted.push(v.session);
    }
    const at = Date.now();
    const [first, second, newest] = viewers;
    const cut = await Promise.all([exitOf(first, 10000), exitOf(second, 10000)]);
    const ms = Date.now() - at;
    console.log(`# shared on a third address -> earlier viewers cut in ${ms} ms (ffmpeg exits ${cut.join(', ')})`);
    assert.ok(cut.every((c) => c !== -1), `both earlier viewers were cut (exits ${cut.join(', ')})`);
    // the newest viewer's next re-asks after the cut are admitted: it plays on
    const newestId = admitted[2].id;
    assert.ok(
      await until(async () => {
        const v = (await s.api('GET', `/api/sessions/${newestId}`)).body.data as { lastSeenAt: string; endedReason: string | null };
        return v.endedReason === null && Date.parse(v.lastSeenAt) > Date.now() - 500 && Date.now() - at > 2000;
      }, 10000),
      'the newest viewer re-asked and was admitted after the cut',
    );
    assert.equal(newest.exitCode, null, 'the newest viewer plays on');
    const sessions = await Promise.all(admitted.map(async (x) => (await s.api('GET', `/api/sessions/${x.id}`)).body.data as { clientIp: string; endedReason: string | null }));
    assert.deepEqual(
      sessions.map((x) => [x.clientIp, x.endedReason]).sort(),
      [
        ['127.0.0.2', 'shared'],
        ['127.0.0.3', 'shared'],
        ['127.0.0.4', null],
      ],
    );
    const window = await s.api('GET', `/api/sharing/subscribe_token/${sub.id}`);
    assert.deepEqual([window.body.data.addresses, window.body.data.flags], [3, ['addresses']]);
  });
});

describe('token sharing over two instances on one Redis, each behind its own nginx-rtmp (action limit, on_update every 1 s)', () => {
  let redis: TestRedis;
  let a: Stand;
  let b: Stand;
  const relays: net.Server[] = [];
  before(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: redis.prefix() };
    // the first instance creates the account; the second finds it in the store
    // both servers run on this host: each names itself in its notify URL, as docs/callers.md#nginx-rtmp-debian-libnginx-mod-rtmp asks
    a = await startStand({ updateEvery: '1s', env, serverName: 'edge-a' });
    b = await startStand({ updateEvery: '1s', env, secret: a.secret, serverName: 'edge-b' });
  });
  after(async () => {
    for (const r of relays) r.close();
    await a?.stop();
    await b?.stop();
    await redis?.stop();
  });

  it("viewers on both instances: the newest device plays on, and the earlier viewer the other instance admitted is cut by that instance's nginx", async () => {
    const policy = await a.api('PUT', '/api/sharing/policy', { enabled: true, maxAddresses: 2, maxNetworks: 0, maxAsns: 0, maxCountries: 0, travelKmh: 0, action: 'limit' });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    // one stream on each server (a publish token for both names: publishers of one name on two servers would conflict)
    const pub = (await a.api('POST', '/api/publish_token', { label: 'src', streams: [{ streamName: 'edge1' }, { streamName: 'edge2' }] })).body.data as { id: number; token: string };
    const sub = (await a.api('POST', '/api/subscribe_token', { label: 'shared', streams: [{ streamName: 'edge1' }, { streamName: 'edge2' }] })).body.data as { id: number; token: string };
    a.publish('edge1', pub.token);
    b.publish('edge2', pub.token);
    assert.ok(await until(async () => (await a.sessionsOf(pub.id)).length === 2, 15000), 'both publishers are live');

    // 127.0.0.2 on the first server, 127.0.0.3 on the second, then 127.0.0.4 on the first
    const plan: Array<[Stand, string, number]> = [
      [a, 'edge1', 2],
      [b, 'edge2', 3],
      [a, 'edge1', 4],
    ];
    const viewers = [];
    const admitted: Array<{ id: string }> = [];
    for (const [stand, name, n] of plan) {
      // read through the other instance: the registry is the store's
      const v = await viewerFrom(stand, stand === a ? b : a, relays, name, sub, n);
      viewers.push(v.proc);
      admitted.push(v.session);
    }
    const at = Date.now();
    const cut = await Promise.all([exitOf(viewers[0], 10000), exitOf(viewers[1], 10000)]);
    console.log(`# shared on a third address over two instances -> earlier viewers cut in ${Date.now() - at} ms (ffmpeg exits ${cut.join(', ')})`);
    assert.ok(cut.every((c) => c !== -1), `both earlier viewers were cut (exits ${cut.join(', ')})`);
    // the second server's viewer was refused by the second instance, at its nginx's re-ask
    assert.ok(
      b.decisions().some((d) => d.action === 'subscribe' && !d.allowed && d.tokenId === sub.id),
      'the second instance refused its viewer\'s re-ask',
    );
    const newestId = admitted[2].id;
    assert.ok(
      await until(async () => {
        const v = (await b.api('GET', `/api/sessions/${newestId}`)).body.data as { lastSeenAt: string; endedReason: string | null };
        return v.endedReason === null && Date.parse(v.lastSeenAt) > Date.now() - 500 && Date.now() - at > 2000;
      }, 10000),
      'the newest viewer re-asked and was admitted after the cut',
    );
    assert.equal(viewers[2].exitCode, null, 'the newest viewer plays on');
    const sessions = await Promise.all(admitted.map(async (x) => (await b.api('GET', `/api/sessions/${x.id}`)).body.data as { clientIp: string; endedReason: string | null }));
    assert.deepEqual(
      sessions.map((x) => [x.clientIp, x.endedReason]).sort(),
      [
        ['127.0.0.2', 'shared'],
        ['127.0.0.3', 'shared'],
        ['127.0.0.4', null],
      ],
    );
    // both instances wrote to the one window
    const window = await b.api('GET', `/api/sharing/subscribe_token/${sub.id}`);
    assert.deepEqual([window.body.data.addresses, window.body.data.flags], [3, ['addresses']]);
  });
});
