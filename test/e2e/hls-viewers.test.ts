// HTTP viewer sessions end to end (docs/callers.md#http-viewer-sessions): ffmpeg publishes over
// RTMP to Debian's nginx-rtmp writing HLS, the same nginx serves it behind auth_request to a real
// Streamgate process on a private Redis, and a viewer with a cookie jar plays it. One full decision
// per viewer, then every playlist and segment on the credential cookie; refused from another
// address (bindAddress always), tampered, expired, after the token is disabled (also on another
// instance, within revalidateSeconds); served on without the store, while a new viewer is not.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mintCredential, readCredential } from '../../src/sessions/viewer-credential.js';
import { keyFromSecret } from '../../src/sessions/credential-keys.js';
import { STREAM, Viewer, delta, get, startHlsStand, type HlsStand } from './hls-stand.js';
import { until } from './rtmp-stand.js';

const COOKIE = 'streamgate_session';
const CREDENTIAL_SECONDS = 20;
const REVALIDATE_SECONDS = 2;
const WATCH_MS = 30_000;

const FULL_ALLOWED = '{action="subscribe",adapter="auth-request",result="allow",reason="allowed",kind="full"}';
/**
 * A refused credential on a secured stream: the request is decided in full as one without a token,
 * and counted as the answer names it, the credential's problem.
 */
const refusedAs = (reason: string) => `{action="subscribe",adapter="auth-request",result="deny",reason="${reason}",kind="full"}`;
const CREDENTIAL_ALLOWED = '{action="subscribe",adapter="auth-request",result="allow",reason="allowed",kind="credential"}';
/** An allow's cookie, as Streamgate serialises it (cookie: name, Max-Age, Path, HttpOnly, SameSite). */
const SET_COOKIE = new RegExp(`^${COOKIE}=([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}); Max-Age=(\\d+); Path=/; HttpOnly; SameSite=Lax$`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HLS viewers: nginx-rtmp writing HLS, nginx auth_request to Streamgate, a viewer with a cookie jar', () => {
  let s: HlsStand;
  /** The viewer that watches from the start and holds its cookie through the store's outage. */
  let viewer: Viewer;
  let token: { id: number; token: string };

  const subscribeToken = async (label: string) => {
    const r = await s.api('POST', '/api/subscribe_token', { label, streams: [{ streamName: STREAM }] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as { id: number; token: string };
  };
  /** The newest segment the playlist lists (a cookie-only request for it is what a player makes). */
  const newestSegment = async (v: Viewer) => {
    const r = await v.fetch(`/hls/${STREAM}.m3u8?token=${token.token}`);
    const uris = r.body.toString('utf8').split('\n').filter((l) => l.endsWith('.ts'));
    return `/hls/${uris[uris.length - 1]}`;
  };

  /**
   * The auth subrequest nginx makes for `uri`, sent to Streamgate directly (nginx answers its own
   * error page, not Streamgate's body): the status and the reason Streamgate gives.
   */
  const asked = async (uri: string, cookie: string | undefined, clientIp = '127.0.0.1') => {
    const r = await fetch(`${s.sg.base}/hooks/auth-request`, {
      headers: { 'x-original-uri': uri, 'x-real-ip': clientIp, ...(cookie === undefined ? {} : { cookie: `${COOKIE}=${cookie}` }) },
    });
    const body = (await r.json()) as { reason?: string };
    return [r.status, body.reason ?? null];
  };

  before(async () => {
    s = await startHlsStand({
      STREAMGATE_SESSIONS_HTTP_BINDADDRESS: 'always',
      STREAMGATE_SESSIONS_HTTP_REVALIDATESECONDS: String(REVALIDATE_SECONDS),
      STREAMGATE_SESSIONS_HTTP_CREDENTIALSECONDS: String(CREDENTIAL_SECONDS),
    });
    // the stream needs a token to be viewed
    const pub = await s.api('POST', '/api/publish_token', { label: 'source', streams: [{ streamName: STREAM }], subscribeRequiresAuth: true });
    assert.equal(pub.status, 200, JSON.stringify(pub.body));
    token = await subscribeToken('viewer');
  });

  after(async () => {
    await s?.stop();
  });

  it('a viewer watching 30 s: every request 200, one full decision and the rest credential checks, refreshed cookies, one live viewer session', async () => {
    const anonymous = await get(s.httpPort, `/hls/${STREAM}.m3u8`);
    assert.deepEqual([anonymous.status, anonymous.setCookie], [401, []], 'the stream is secured: no token, no playlist');

    const before = await s.decisions();
    viewer = new Viewer(s.httpPort, token.token, COOKIE);
    const started = Date.now();
    await viewer.watch(WATCH_MS);
    const log = viewer.log;
    const after = await s.decisions();
    const segments = log.filter((f) => f.target.endsWith('.ts'));
    const playlists = log.filter((f) => f.target.includes('.m3u8'));
    const refreshes = log.slice(1).filter((f) => f.setCookie.length > 0);
    console.log(
      `# watched ${Date.now() - started} ms: ${log.length} requests (${playlists.length} playlists, ${segments.length} segments), ${refreshes.length} refreshed cookies at ${refreshes.map((f) => `${Math.round((f.at - started) / 1000)} s`).join(', ')}`,
    );
    console.log(`# decisions during the watch: ${JSON.stringify(delta(before, after))}`);

    const bad = log.filter((f) => f.status !== 200);
    assert.deepEqual(bad, [], 'every playlist and segment answered 200');
    assert.ok(segments.length >= 25, `one-second segments over 30 s: ${segments.length} fetched`);
    assert.deepEqual(
      segments.filter((f) => !f.media).map((f) => f.target),
      [],
      'every segment is MPEG-TS',
    );

    // the first request: a full decision, and the cookie
    const first = log[0]!;
    assert.equal(first.presented, undefined);
    assert.equal(first.setCookie.length, 1, JSON.stringify(first.setCookie));
    const granted = SET_COOKIE.exec(first.setCookie[0]!);
    assert.ok(granted, first.setCookie[0]);
    assert.ok([CREDENTIAL_SECONDS - 1, CREDENTIAL_SECONDS].includes(Number(granted[2])), `Max-Age ${granted[2]}`);
    // every later request presented a cookie; a refreshed one replaced it past half its life
    assert.deepEqual(
      log.slice(1).filter((f) => f.presented === undefined).map((f) => f.target),
      [],
    );
    for (const f of refreshes) {
      assert.equal(f.setCookie.length, 1);
      const m = SET_COOKIE.exec(f.setCookie[0]!);
      assert.ok(m, f.setCookie[0]);
      assert.ok([CREDENTIAL_SECONDS - 1, CREDENTIAL_SECONDS].includes(Number(m[2])), `Max-Age ${m[2]}`);
    }
    assert.ok(refreshes.length >= 2 && refreshes.length <= 3, `a ${CREDENTIAL_SECONDS} s credential is refreshed every ~${CREDENTIAL_SECONDS / 2} s over 30 s: ${refreshes.length}`);
    const gaps = [first, ...refreshes].map((f, i, all) => (i === 0 ? 0 : f.at - all[i - 1]!.at)).slice(1);
    for (const g of gaps) assert.ok(g >= (CREDENTIAL_SECONDS / 2) * 1000 - 1500 && g <= (CREDENTIAL_SECONDS / 2) * 1000 + 1500, `refreshes ${gaps.join(', ')} ms apart`);

    assert.deepEqual(delta(before, after), { [FULL_ALLOWED]: 1, [CREDENTIAL_ALLOWED]: log.length - 1 });

    let live: any[] = [];
    const one = await until(async () => {
      const r = await s.api('GET', `/api/sessions?direction=subscribe&tokenId=${token.id}`);
      live = r.body.data.data.filter((x: { endedReason: unknown }) => x.endedReason === null);
      return live.length === 1;
    }, 5000);
    assert.ok(one, `one live viewer session: ${JSON.stringify(live)}`);
    assert.deepEqual(
      [live[0].caller, live[0].tokenId, live[0].streamName, live[0].direction, live[0].clientIp],
      ['auth-request', token.id, STREAM, 'subscribe', '127.0.0.1'],
    );
    const seen = Date.now() - Date.parse(live[0].lastSeenAt);
    assert.ok(seen < (REVALIDATE_SECONDS + 2) * 1000, `lastSeenAt ${seen} ms ago (touched every ${REVALIDATE_SECONDS} s)`);
  });

  it('bindAddress always: the same cookie from 127.0.0.2 is refused (403); from 127.0.0.1 it serves segments and a playlist without the token', async () => {
    const segment = await newestSegment(viewer);
    const before = await s.decisions();
    const elsewhere = await get(s.httpPort, segment, { cookie: `${COOKIE}=${viewer.cookie}`, from: '127.0.0.2' });
    const playlistElsewhere = await get(s.httpPort, `/hls/${STREAM}.m3u8`, { cookie: `${COOKIE}=${viewer.cookie}`, from: '127.0.0.2' });
    const here = await viewer.fetch(segment);
    // a playlist reload without the token (a player that dropped the query): the cookie alone serves it
    const reload = await viewer.fetch(`/hls/${STREAM}.m3u8`);
    console.log(`# cookie from 127.0.0.2: segment ${elsewhere.status}, playlist ${playlistElsewhere.status}; from 127.0.0.1: segment ${here.status}, playlist without the token ${reload.status}`);
    const counted = delta(before, await s.decisions());
    console.log(`# decisions: ${JSON.stringify(counted)}`);
    assert.deepEqual(counted, { [refusedAs('credential_address')]: 2, [CREDENTIAL_ALLOWED]: 2 });
    assert.equal(reload.status, 200);
    assert.match(reload.body.toString('utf8'), /^#EXTM3U\n/);
    assert.deepEqual([elsewhere.status, elsewhere.setCookie], [403, []]);
    assert.deepEqual(await asked(segment, viewer.cookie!, '127.0.0.2'), [403, 'credential_address']);
    assert.deepEqual([playlistElsewhere.status, playlistElsewhere.setCookie], [403, []]);
    assert.equal(here.status, 200);
  });

  it('a tampered cookie (one character changed) and an expired one are refused with 401 without a token', async () => {
    const segment = await newestSegment(viewer);
    const value = viewer.cookie!;
    const flip = (v: string, i: number) => v.slice(0, i) + (v[i] === 'A' ? 'B' : 'A') + v.slice(i + 1);
    const dot = value.indexOf('.');
    const key = keyFromSecret(s.credentialSecret);
    const claims = readCredential(key, value);
    assert.ok(claims, 'the test signs with the key Streamgate uses');
    const expired = mintCredential(key, { ...claims, e: Math.floor(Date.now() / 1000) - 1 });
    const cases: Array<[string, string, string]> = [
      ['claims changed', flip(value, 5), 'credential_invalid'],
      ['signature changed', flip(value, dot + 3), 'credential_invalid'],
      ['expired (signed, e in the past)', expired, 'credential_expired'],
      ['not a credential', 'x', 'credential_invalid'],
    ];
    const before = await s.decisions();
    const seen: Array<[string, number, number]> = [];
    for (const [name, v] of cases) {
      const seg = await get(s.httpPort, segment, { cookie: `${COOKIE}=${v}` });
      const pl = await get(s.httpPort, `/hls/${STREAM}.m3u8`, { cookie: `${COOKIE}=${v}` });
      seen.push([name, seg.status, pl.status]);
      assert.deepEqual(seg.setCookie, [], name);
    }
    const counted = delta(before, await s.decisions());
    console.log(`# refused cookies [case, segment, playlist]: ${JSON.stringify(seen)}`);
    console.log(`# decisions: ${JSON.stringify(counted)}`);
    const byReason: Record<string, number> = {};
    for (const [, , reason] of cases) byReason[refusedAs(reason)] = (byReason[refusedAs(reason)] ?? 0) + 2;
    assert.deepEqual(counted, byReason);
    assert.deepEqual(
      seen,
      cases.map(([name]) => [name, 401, 401]),
    );
    for (const [name, v, reason] of cases) assert.deepEqual(await asked(segment, v), [401, reason], name);
    // the real one still serves
    assert.equal((await viewer.fetch(segment)).status, 200);
  });

  it(`a disabled token: its cookie is refused at once on the instance that disabled it, within ${REVALIDATE_SECONDS} s + 1 s when another instance did`, async () => {
    const measure = async (on: 'sg' | 'other') => {
      const t = await subscribeToken(`disabled on ${on}`);
      const v = new Viewer(s.httpPort, t.token, COOKIE);
      await v.step();
      assert.equal(v.log[0]!.status, 200);
      assert.ok(v.cookie, 'a cookie granted');
      const segment = v.log[v.log.length - 1]!.target;
      assert.ok(segment.endsWith('.ts'));
      const put = await s.api('PUT', `/api/subscribe_token/${t.id}`, { isActive: false }, on);
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const at = Date.now();
      let served = 0;
      let last = 0;
      while (Date.now() - at < (REVALIDATE_SECONDS + 3) * 1000) {
        last = (await v.fetch(segment)).status;
        if (last !== 200) break;
        served++;
        await sleep(100);
      }
      const ms = Date.now() - at;
      console.log(`# token disabled through ${on === 'sg' ? 'the instance nginx asks' : 'another instance'}: cookie refused (${last}) after ${ms} ms, ${served} requests served meanwhile`);
      assert.deepEqual(await asked(segment, v.cookie), [401, 'token_disabled']);
      return { last, ms, served };
    };
    const here = await measure('sg');
    assert.deepEqual([here.last, here.served], [401, 0], 'refused at the first request after the change');
    const elsewhere = await measure('other');
    assert.equal(elsewhere.last, 401);
    assert.ok(elsewhere.ms <= (REVALIDATE_SECONDS + 1) * 1000, `refused ${elsewhere.ms} ms after the change`);
    // the first viewer's token is untouched
    assert.equal((await viewer.fetch(await newestSegment(viewer))).status, 200);
  });

  it('the store stopped: the viewer holding a cookie keeps getting its playlist and segments; a new viewer is refused', async () => {
    await s.stopStore();
    const from = viewer.log.length;
    const started = Date.now();
    await viewer.watch(5000);
    const during = viewer.log.slice(from);
    const fresh = new Viewer(s.httpPort, token.token, COOKIE);
    const newcomer = await fresh.fetch(`/hls/${STREAM}.m3u8?token=${token.token}`);
    console.log(
      `# Redis stopped: the holding viewer made ${during.length} requests in ${Date.now() - started} ms (statuses ${JSON.stringify(
        [...new Set(during.map((f) => f.status))],
      )}, ${during.filter((f) => f.target.endsWith('.ts')).length} segments); a new viewer got ${newcomer.status}`,
    );
    assert.deepEqual(
      during.filter((f) => f.status !== 200).map((f) => [f.target, f.status]),
      [],
    );
    assert.ok(during.filter((f) => f.target.endsWith('.ts')).length >= 3, 'new segments fetched meanwhile');
    assert.notEqual(newcomer.status, 200);
    assert.equal(newcomer.status, 500, 'Streamgate answers 503 (store unavailable); nginx turns that into 500');
    assert.deepEqual(newcomer.setCookie, []);
    assert.deepEqual(await asked(`/hls/${STREAM}.m3u8?token=${token.token}`, undefined), [503, 'store_unavailable']);
  });
});
