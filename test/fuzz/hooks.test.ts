// Fuzzing every hook adapter (/hooks/*: authorize, auth-request in both modes, nginx-rtmp POST and
// GET, MediaMTX auth and events, SRS, OvenMediaEngine, generic events, usage, thumbnails) with
// mutated fixtures, hostile headers, queries, content types and raw bytes. The harness checks
// each answer (no 5xx, a refusal changes nothing stored) and the run (alive, no prototype
// pollution, bounded event loop delay, every hook hit).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CALLERS } from '../../src/callers/registry.js';
import { checkOne, finishRun, fuzzOptions, fuzzTarget, startRun, type Target } from './harness.js';
import { caseOf, FORM, toRequest, type EntryPoint } from './cases.js';

const rtmp = (t: Target) => ({ call: 'publish', name: 'cam1', addr: '203.0.113.7', clientid: '7', app: 'live', tcurl: 'rtmp://h/live', token: t.seeded.pub.token });

let reports = 0; // each usage report its own id, the same ids on every run of a seed

const HOOKS: EntryPoint[] = [
  {
    method: 'POST',
    path: '/hooks/authorize',
    auth: 'none',
    body: (t) => ({ action: 'publish', token: t.seeded.pub.token, streamName: 'cam1', clientIp: '203.0.113.7', origin: 'https://www.example.com', country: 'us', protocol: 'webrtc', sessionId: 's1' }),
  },
  // an SRT stream id in the standard syntax: mutations reach the id's pairs, its length, its mode
  { method: 'POST', path: '/hooks/authorize', auth: 'none', body: (t) => ({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${t.seeded.pub.token},user_ref=enc-7`, clientIp: '203.0.113.7' }) },
  { method: 'GET', path: '/hooks/auth-request', auth: 'none', headers: (t) => ({ 'x-original-uri': `/live/cam1/index.m3u8?token=${t.seeded.sub.token}` }) },
  { method: 'POST', path: '/hooks/auth-request', auth: 'streamToken', headers: () => ({ 'x-forwarded-uri': '/hls/cam1.m3u8' }) },
  { method: 'GET', path: '/hooks/auth-request/hls/cam1/seg-1.ts', auth: 'none', query: (t) => `token=${t.seeded.sub.token}` },
  // a viewer's segment with its session credential and no token (mutations reach the cookie too)
  { method: 'GET', path: '/hooks/auth-request', auth: 'none', headers: (t) => ({ 'x-original-uri': '/hls/cam1/seg-3.ts', cookie: `theme=dark; streamgate_session=${t.seeded.viewerCookie}` }) },
  { method: 'POST', path: '/hooks/nginx-rtmp', auth: 'none', type: FORM, body: rtmp, raw: (t) => new URLSearchParams(rtmp(t)).toString() },
  { method: 'GET', path: '/hooks/nginx-rtmp', auth: 'none', query: (t) => new URLSearchParams({ ...rtmp(t), call: 'play', token: t.seeded.sub.token }).toString() },
  {
    method: 'POST',
    path: '/hooks/mediamtx/auth',
    auth: 'none',
    body: (t) => ({ ip: '203.0.113.7', user: '', password: '', token: t.seeded.pub.token, action: 'publish', path: 'live/cam1', protocol: 'rtmp', id: 'mtx-1', query: '' }),
  },
  { method: 'POST', path: '/hooks/mediamtx/event', auth: 'none', body: (t) => ({ event: 'runOnReady', path: 'live/cam1', sourceId: 'mtx-1', query: `token=${t.seeded.pub.token}` }) },
  {
    method: 'POST',
    path: '/hooks/srs',
    auth: 'none',
    body: (t) => ({ action: 'on_publish', client_id: 'c1', ip: '203.0.113.7', vhost: '__defaultVhost__', app: 'live', stream: 'cam1', param: `?token=${t.seeded.pub.token}`, server_id: 'srv1', tcUrl: 'rtmp://h/live', pageUrl: '' }),
  },
  {
    method: 'POST',
    path: '/hooks/ome/admission',
    auth: 'none',
    body: (t) => ({ client: { address: '203.0.113.7', port: 5000 }, request: { direction: 'incoming', protocol: 'webrtc', status: 'opening', url: `ws://h:3333/app/cam1?token=${t.seeded.pub.token}`, time: '2026-01-01T00:00:00Z' } }),
  },
  { method: 'POST', path: '/hooks/events', auth: 'none', body: (t) => ({ type: 'recording', event: 'completed', streamId: `${t.seeded.accountId}/cam1`, tokenId: t.seeded.pub.id, data: { path: '/rec/a.flv', feedId: 'f1' } }) },
  {
    method: 'POST',
    path: '/hooks/usage',
    auth: 'none',
    body: (t) => ({ tokenId: t.seeded.sub.id, streamName: 'cam1', bytesOut: 1000, bytesIn: 10, reportId: `r-${++reports}`, at: Date.now() }),
  },
  { method: 'POST', path: '/hooks/thumbnail', auth: 'none', type: 'image/jpeg', query: (t) => `streamId=${t.seeded.accountId}/cam1`, raw: () => Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 0xff, 0xd9]) },
];

describe('fuzzing the hook adapters', () => {
  let t: Target;
  before(async () => {
    t = await fuzzTarget();
  });
  after(() => t.close());

  it('covers every route of every registered caller, and every documented hook endpoint', () => {
    const covered = (method: string, path: string, below = false) =>
      HOOKS.some((h) => (method === 'ALL' || h.method === method) && (h.path === path || (below && h.path.startsWith(`${path}/`))));
    const routes = CALLERS.flatMap((c) => c.routes.map((r) => ({ caller: c.name, ...r })));
    assert.deepEqual(routes.filter((r) => !covered(r.method, r.path)).map((r) => `${r.caller}: ${r.method} ${r.path}`), []);
    assert.deepEqual(routes.filter((r) => r.below && !covered(r.method, r.path, true)).map((r) => `${r.caller}: ${r.method} ${r.path}/…`), []);
    // A documented path parameter (:originalPath) is covered by any path below its prefix.
    const documented = CALLERS.flatMap((c) => c.routes.flatMap((r) => r.docs.map((d) => d.path ?? r.path))).filter((p) => p.startsWith('/hooks/'));
    assert.deepEqual(documented.filter((p) => (p.includes('/:') ? !covered('ALL', p.slice(0, p.indexOf('/:')), true) : !covered('ALL', p))), []);
  });

  it('every hook: no 5xx, refusals change nothing, the process stays healthy', { timeout: 600_000 }, async () => {
    const run = startRun();
    await fc.assert(
      fc.asyncProperty(caseOf(HOOKS, t), async (c) => {
        const req = await toRequest(c, t);
        const a = await checkOne(t, req, run.stats);
        // auth_request and its kin take anything but 200/401/403 as an error (CONTRACT 5.7); 431 is
        // Node refusing oversized headers before any of Streamgate runs.
        if (req.route.includes('/hooks/auth-request')) assert.ok([200, 401, 403, 431].includes(a.status), `${req.method} ${req.path.slice(0, 120)} -> ${a.status} ${a.text.slice(0, 200)}`);
      }),
      fuzzOptions(400, 2500),
    );
    await finishRun(t, run, HOOKS.map((e) => `${e.method} ${e.path}`));
  });
});
