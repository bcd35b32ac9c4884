// Running-session control end to end (docs/api.md#running-sessions): a real Streamgate, a real
// nginx-rtmp and ffmpeg publishers and viewers. Streamgate ends a session at nginx's next on_update
// (refused), or at once through the control module's drop when sessions.servers names it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exitOf } from './nginx.js';
import { startStand, until, type Stand } from './rtmp-stand.js';

/** Milliseconds from `since` until `p` exits, and its exit code (-1: still running after `ms`, then killed). */
async function exitAfter(p: ChildProcess, since: number, ms: number): Promise<{ code: number; ms: number }> {
  const code = await exitOf(p, ms);
  return { code, ms: Date.now() - since };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function token(s: Stand, kind: 'publish' | 'subscribe', body: Record<string, unknown>): Promise<{ id: number; token: string }> {
  const r = await s.api('POST', `/api/${kind}_token`, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

/** Waits until the token has `count` live sessions in the registry (lifecycle-queued ones included); answers them. */
async function live(s: Stand, tokenId: number, count: number, ms = 15000) {
  let sessions = await s.sessionsOf(tokenId);
  const ok = await until(async () => {
    sessions = (await s.sessionsOf(tokenId)).filter((x) => x.endedReason === null);
    return sessions.length === count;
  }, ms);
  assert.ok(ok, `token ${tokenId}: ${count} live session(s) expected, found ${JSON.stringify(sessions)}`);
  return sessions;
}

describe('running sessions on nginx-rtmp (default enforcement, on_update every 1 s)', () => {
  let s: Stand;
  before(async () => {
    s = await startStand({ updateEvery: '1s' });
  });
  after(async () => {
    await s?.stop();
  });

  it('deleting the publish token cuts its publisher within 2 s; disabling it does not (still publishing 4 s later)', async () => {
    const pub = await token(s, 'publish', { label: 'del', streams: [{ streamName: 'cam1' }] });
    const ff = s.publish('cam1', pub.token);
    const [session] = await live(s, pub.id, 1);
    assert.equal(session!.direction, 'publish');
    assert.equal((await s.api('PUT', `/api/publish_token/${pub.id}`, { isActive: false })).status, 200);
    await sleep(4000);
    assert.equal(ff.exitCode, null, 'a disabled token keeps its publisher (terminateOn [delete])');
    assert.equal((await s.sessionsOf(pub.id)).filter((x) => x.endedReason === null).length, 1);
    const at = Date.now();
    assert.equal((await s.api('DELETE', `/api/publish_token/${pub.id}`)).status, 200);
    const { code, ms } = await exitAfter(ff, at, 10000);
    console.log(`# token deleted -> publisher cut in ${ms} ms (ffmpeg exit ${code})`);
    assert.ok(code !== -1 && code !== 0, `ffmpeg was cut with an error exit (got ${code})`);
    assert.ok(ms <= 2000, `cut ${ms} ms after the deletion`);
    const ended = await s.api('GET', `/api/sessions/${session!.id}`);
    assert.equal(ended.status, 200);
    assert.equal(ended.body.data.endedReason, 'token_revoked');
  });

  it('POST /api/stream/stop cuts the publisher at its next on_update; the same token is refused (session_terminated) on reconnecting', async () => {
    const pub = await token(s, 'publish', { label: 'stop', streams: [{ streamName: 'cam3' }] });
    const ff = s.publish('cam3', pub.token);
    const [session] = await live(s, pub.id, 1);
    const at = Date.now();
    const stop = await s.api('POST', '/api/stream/stop', { streamId: 'cam3' });
    assert.equal(stop.status, 200, JSON.stringify(stop.body));
    assert.deepEqual(stop.body.data, { stoppingLevel: 'Stream' });
    const { code, ms } = await exitAfter(ff, at, 10000);
    console.log(`# stream stop (no control module) -> publisher cut in ${ms} ms (ffmpeg exit ${code})`);
    assert.ok(code !== -1 && code !== 0, `ffmpeg was cut with an error exit (got ${code})`);
    assert.ok(ms <= 2000, `cut ${ms} ms after the stop`);
    assert.equal((await s.api('GET', `/api/sessions/${session!.id}`)).body.data.endedReason, 'stopped');

    const logFrom = s.sg.logs.length;
    const again = s.publish('cam3', pub.token);
    const re = await exitAfter(again, Date.now(), 15000);
    assert.ok(re.code !== -1 && re.code !== 0, `the reconnecting publisher is dropped (exit ${re.code})`);
    const refusals = s.decisions(logFrom).filter((d) => d.tokenId === pub.id && d.action === 'publish');
    assert.deepEqual(
      refusals.map((d) => [d.adapter, d.allowed, d.reason]),
      [['nginx-rtmp', false, 'session_terminated']],
    );
    assert.deepEqual((await s.sessionsOf(pub.id)).filter((x) => x.endedReason === null), []);
    const again2 = await s.api('POST', '/api/stream/stop', { streamId: 'cam3' });
    assert.deepEqual(again2.body.data, { stoppingLevel: 'None' }, 'nothing left to stop');

    // an update of the token lifts the hold
    assert.equal((await s.api('PUT', `/api/publish_token/${pub.id}`, { label: 'stop again' })).status, 200);
    const third = s.publish('cam3', pub.token);
    await live(s, pub.id, 1);
    assert.equal(third.exitCode, null, 'publishing again after the token was updated');
  });

  it('maxConcurrentSessions 1 on a subscribe token: a second viewer is refused while the first plays, and admitted once it left', async () => {
    const pub = await token(s, 'publish', { label: 'src', streams: [{ streamName: 'cam5' }] });
    const sub = await token(s, 'subscribe', { label: 'one', streams: [{ streamName: 'cam5' }], maxConcurrentSessions: 1 });
    s.publish('cam5', pub.token);
    await live(s, pub.id, 1);
    const first = s.view('cam5', sub.token);
    const [viewing] = await live(s, sub.id, 1);
    assert.equal(viewing!.direction, 'subscribe');

    const logFrom = s.sg.logs.length;
    const second = s.view('cam5', sub.token, 5);
    const refused = await exitAfter(second, Date.now(), 15000);
    assert.ok(refused.code !== -1 && refused.code !== 0, `the second viewer is dropped (exit ${refused.code})`);
    assert.deepEqual(
      s.decisions(logFrom).filter((d) => d.tokenId === sub.id && d.action === 'subscribe' && !d.allowed).map((d) => d.reason),
      ['session_limit'],
    );
    assert.equal(first.exitCode, null, 'the first viewer plays on');

    first.kill('SIGINT');
    assert.notEqual(await exitOf(first, 10000), -1);
    await live(s, sub.id, 0);
    const third = s.view('cam5', sub.token, 2);
    assert.equal(await exitOf(third, 20000), 0, 'a viewer after the first left plays 2 s and ends normally');
  });
});

describe('running sessions on nginx-rtmp (terminateOn [disable, expire], on_update every 1 s)', () => {
  let s: Stand;
  before(async () => {
    s = await startStand({ updateEvery: '1s', config: { enforcement: { terminateOn: ['disable', 'expire'] } } });
  });
  after(async () => {
    await s?.stop();
  });

  it('disabling a subscribe token cuts its ffmpeg viewer within 2 s', async () => {
    const pub = await token(s, 'publish', { label: 'src', streams: [{ streamName: 'cam2' }] });
    const sub = await token(s, 'subscribe', { label: 'viewers', streams: [{ streamName: 'cam2' }] });
    const ff = s.publish('cam2', pub.token);
    await live(s, pub.id, 1);
    const viewer = s.view('cam2', sub.token);
    const [session] = await live(s, sub.id, 1);
    await sleep(1500);
    assert.equal(viewer.exitCode, null, 'the viewer plays');
    const at = Date.now();
    assert.equal((await s.api('PUT', `/api/subscribe_token/${sub.id}`, { isActive: false })).status, 200);
    const { code, ms } = await exitAfter(viewer, at, 10000);
    console.log(`# subscribe token disabled -> viewer cut in ${ms} ms (ffmpeg exit ${code})`);
    assert.notEqual(code, -1, 'the viewer was cut (not killed by the test)');
    assert.ok(ms <= 2000, `cut ${ms} ms after disabling`);
    assert.equal((await s.api('GET', `/api/sessions/${session!.id}`)).body.data.endedReason, 'token_revoked');
    assert.equal(ff.exitCode, null, 'the publisher (another token) is untouched');
  });

  it('a publish token with expires: 5 has its publisher cut between 4 and 7 s after its creation', async () => {
    const created = Date.now();
    const pub = await token(s, 'publish', { label: 'exp', streams: [{ streamName: 'cam6' }], expires: 5 });
    const ff = s.publish('cam6', pub.token);
    const [session] = await live(s, pub.id, 1, 4000);
    const { code, ms } = await exitAfter(ff, created, 15000);
    console.log(`# expires: 5 -> publisher cut ${ms} ms after the token's creation (ffmpeg exit ${code})`);
    assert.ok(code !== -1 && code !== 0, `ffmpeg was cut with an error exit (got ${code})`);
    assert.ok(ms >= 4000 && ms <= 7000, `cut at ${ms} ms`);
    assert.equal((await s.api('GET', `/api/sessions/${session!.id}`)).body.data.endedReason, 'token_expired');
  });
});

describe('running sessions on nginx-rtmp (enforcement.liveTtlSeconds 5, on_update every 1 s)', () => {
  let s: Stand;
  before(async () => {
    s = await startStand({ updateEvery: '1s', config: { enforcement: { liveTtlSeconds: 5 } } });
  });
  after(async () => {
    await s?.stop();
  });

  it('a healthy publisher outlives the TTL three times over: its updates keep the session and the live stream', async () => {
    const pub = await token(s, 'publish', { label: 'ttl', streams: [{ streamName: 'cam7' }] });
    const ff = s.publish('cam7', pub.token);
    const [first] = await live(s, pub.id, 1);
    await sleep(15000);
    assert.equal(ff.exitCode, null, 'still publishing after 15 s');
    const now = await s.sessionsOf(pub.id);
    assert.deepEqual(
      now.map((x) => [x.id, x.direction, x.streamName, x.endedReason]),
      [[first!.id, 'publish', 'cam7', null]],
    );
    const seen = Date.now() - Date.parse((now[0] as unknown as { lastSeenAt: string }).lastSeenAt);
    assert.ok(seen >= 0 && seen < 2500, `lastSeenAt ${seen} ms ago (on_update every 1 s)`);
    const active = await s.api('GET', '/api/publish_token/active/all');
    assert.deepEqual(active.body.data, { tokenIds: [pub.id] }, 'the live stream is kept too');
  });
});

describe('running sessions on nginx-rtmp with the control module in sessions.servers (on_update every 30 s)', () => {
  let s: Stand;
  before(async () => {
    s = await startStand({ updateEvery: '30s', control: true });
  });
  after(async () => {
    await s?.stop();
  });

  it('POST /api/stream/stop drops the publisher within 1 s through the control module', async () => {
    const pub = await token(s, 'publish', { label: 'ctl', streams: [{ streamName: 'cam4' }] });
    const ff = s.publish('cam4', pub.token);
    const [session] = await live(s, pub.id, 1);
    await sleep(1000);
    const at = Date.now();
    const stop = await s.api('POST', '/api/stream/stop', { streamId: 'cam4' });
    assert.deepEqual([stop.status, stop.body.data], [200, { stoppingLevel: 'Stream' }]);
    const { code, ms } = await exitAfter(ff, at, 10000);
    console.log(`# stream stop (control module) -> publisher dropped in ${ms} ms (ffmpeg exit ${code})`);
    assert.ok(code !== -1 && code !== 0, `ffmpeg was dropped with an error exit (got ${code})`);
    assert.ok(ms <= 1000, `dropped ${ms} ms after the stop`);
    await sleep(1000); // nginx's on_publish_done has arrived: the reason stays Streamgate's
    assert.equal((await s.api('GET', `/api/sessions/${session!.id}`)).body.data.endedReason, 'stopped');
    const drops = readFileSync(path.join(s.nginx.dir, 'logs/access.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('/control/drop/'));
    assert.equal(drops.length, 1, drops.join('\n'));
    assert.match(drops[0]!, /"GET \/control\/drop\/publisher\?app=live&name=cam4&clientid=\d+ HTTP\/1\.1" 200 /);
    const metrics = await (await fetch(`${s.sg.base}/metrics`)).text();
    assert.deepEqual(
      metrics.split('\n').filter((l) => l.startsWith('streamgate_session_cuts_total{')),
      ['streamgate_session_cuts_total{caller="nginx-rtmp",outcome="cut"} 1'],
    );
  });

  it('DELETE /api/sessions/{id} drops one ffmpeg viewer within 1 s through the control module; the publisher and the other viewer stay', async () => {
    const pub = await token(s, 'publish', { label: 'src', streams: [{ streamName: 'cam8' }] });
    const sub = await token(s, 'subscribe', { label: 'viewers', streams: [{ streamName: 'cam8' }] });
    const ff = s.publish('cam8', pub.token);
    await live(s, pub.id, 1);
    const v1 = s.view('cam8', sub.token);
    await live(s, sub.id, 1);
    const v2 = s.view('cam8', sub.token);
    const both = await live(s, sub.id, 2);
    const at = Date.now();
    const cut = await s.api('DELETE', `/api/sessions/${both[0]!.id}`);
    assert.deepEqual([cut.status, cut.body.data.id, cut.body.data.endedReason], [200, both[0]!.id, 'stopped']);
    // sessions are listed oldest first: both[0] is v1's
    const first = await exitAfter(v1, at, 5000);
    console.log(`# DELETE /api/sessions/{id} (control module) -> viewer dropped in ${first.ms} ms (ffmpeg exit ${first.code})`);
    assert.notEqual(first.code, -1);
    assert.ok(first.ms <= 1000, `dropped ${first.ms} ms after the DELETE`);
    await sleep(1000);
    assert.equal(v2.exitCode, null, 'the other viewer plays on');
    assert.equal(ff.exitCode, null, 'the publisher streams on');
    assert.deepEqual(
      (await s.sessionsOf(sub.id)).filter((x) => x.endedReason === null).map((x) => x.id),
      [both[1]!.id],
    );
    const drops = readFileSync(path.join(s.nginx.dir, 'logs/access.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('/control/drop/subscriber'));
    assert.equal(drops.length, 1, drops.join('\n'));
    assert.match(drops[0]!, /"GET \/control\/drop\/subscriber\?app=live&name=cam8&clientid=\d+ HTTP\/1\.1" 200 /);
  });
});

describe('running sessions on nginx-rtmp with two worker processes', () => {
  let s: Stand;
  before(async () => {
    s = await startStand({ updateEvery: '1s', workers: 2 });
  });
  after(async () => {
    await s?.stop();
  });

  it('every worker refuses the re-ask of a session Streamgate ended: four publishers, whichever worker holds them, are cut within 2 s', async () => {
    const pub = await token(s, 'publish', { label: 'workers', streams: [{ streamName: 'w1' }, { streamName: 'w2' }, { streamName: 'w3' }, { streamName: 'w4' }] });
    const ffs = ['w1', 'w2', 'w3', 'w4'].map((name) => s.publish(name, pub.token));
    const sessions = await live(s, pub.id, 4);
    assert.equal(new Set(sessions.map((x) => x.callerSessionId)).size, 4, 'nginx numbers connections across workers');
    await sleep(1500); // several updates from each worker pass while the token stands
    const workers = new Set([...s.nginx.errorLog().matchAll(/\[info\] (\d+)#\d+: \*\d+ client connected/g)].map((m) => m[1]));
    console.log(`# two workers: the publishers' connections were accepted by ${workers.size} worker(s)`);
    assert.deepEqual(ffs.map((f) => f.exitCode), [null, null, null, null]);
    const at = Date.now();
    assert.equal((await s.api('DELETE', `/api/publish_token/${pub.id}`)).status, 200);
    const exits = await Promise.all(ffs.map((f) => exitAfter(f, at, 10000)));
    console.log(`# two workers: publishers cut in ${exits.map((e) => e.ms).join(', ')} ms`);
    for (const e of exits) {
      assert.ok(e.code !== -1 && e.code !== 0, `ffmpeg was cut with an error exit (got ${e.code})`);
      assert.ok(e.ms <= 2000, `cut ${e.ms} ms after the deletion`);
    }
  });
});
