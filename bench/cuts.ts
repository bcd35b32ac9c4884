// Time to cut (docs/performance.md#time-to-cut): how long a running session outlives its
// revocation, on real processes. Each sample admits one client with a token of its own, revokes
// its session through the API — the token deleted, the token disabled (enforcement.terminateOn
// lists disable for the media servers; an HTTP viewer's credential follows a disable whatever it
// lists), its stream stopped, the session cut by id — and times, on this process's clock, from
// just before the API request is sent to:
// - nginx-rtmp (Debian's nginx with libnginx-mod-rtmp, on_update every CUT_UPDATE_SECONDS, no
//   control module): the exit of the ffmpeg publisher or viewer nginx dropped;
// - an HTTP viewer session: the first refusal of the viewer's segment requests carrying its
//   session credential at /hooks/auth-request (one every BENCH_CUT_POLL_MS), asked of the instance
//   that revoked, and of another instance on the same Redis;
// - MediaMTX, SRS, OvenMediaEngine: the stand-in of the server's API (test/helpers/stand-ins/)
//   receiving the driver's call, Streamgate's side of the cut alone (none of them is packaged for
//   Debian).
// nginx-rtmp re-asks, and another instance revalidates, on periods of their own: each revocation
// waits a random part of that period first, so the samples cover every phase of it.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Nginx, publishTestPattern, requireBinaries, rtmpBlock, startNginx } from '../test/e2e/nginx.js';
import type { ReceivedCall, StandIn } from '../test/helpers/stand-ins/base.js';
import { mediamtxStandIn } from '../test/helpers/stand-ins/mediamtx.js';
import { omeStandIn } from '../test/helpers/stand-ins/ome.js';
import { srsStandIn } from '../test/helpers/stand-ins/srs.js';
import { CUT_POLL_MS, CUT_REPEATS, type CutPart, STREAMGATE_ENV, STREAMGATE_NODE_FLAGS } from './lib/config.js';
import {
  CUT_DRIVER_TIMEOUT_MS,
  CUT_GRACE_MS,
  CUT_REVALIDATE_SECONDS,
  CUT_ROWS,
  CUT_UPDATE_SECONDS,
  type CutFigures,
  type CutKind,
  type CutRowSpec,
  cutMs,
  cutStats,
} from './lib/goals.js';
import { type BenchRedis, freePort, startProcess, stopTarget, streamgate, type Target } from './lib/targets.js';

/** Clients in flight at once on nginx-rtmp (each publisher an x264 encoder), and HTTP viewers on another instance. */
const RTMP_CONCURRENCY = 6;
const OTHER_INSTANCE_CONCURRENCY = 6;
/** How long a client may take to be admitted and registered. */
const ADMIT_MS = 15000;
/** The stream the viewers of the nginx-rtmp and HTTP rows watch. */
const VIEWED = 'viewed';
const COOKIE = 'streamgate_session';

type Sample = { ms: number; outcome: string } | { missed: true } | { error: string };

interface Api {
  base: string;
  secret: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `get()`'s first defined answer, asked every `every` ms; undefined after `ms`. */
async function waitFor<T>(get: () => T | undefined, ms: number, every = 1): Promise<T | undefined> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined || performance.now() > deadline) return v;
    await sleep(every);
  }
}

/** `p`'s value, or undefined when it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => {
    timer = setTimeout(() => r(undefined), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** One API call of the account; anything but 200 throws. */
// biome-ignore lint/suspicious/noExplicitAny: API answers of several shapes, read field by field
async function call(sg: Api, method: string, p: string, body?: unknown): Promise<any> {
  const r = await fetch(sg.base + p, {
    method,
    headers: { authorization: `Bearer ${sg.secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${method} ${p.split('?')[0]} answered ${r.status} ${text.slice(0, 200)}`);
  return text === '' ? null : (JSON.parse(text) as { data: unknown }).data;
}

interface Revocable {
  tokenKind: 'publish' | 'subscribe';
  tokenId: number;
  streamName: string;
  sessionId: string;
}

/** The revocation: one API request. */
async function revoke(sg: Api, kind: CutKind, r: Revocable): Promise<void> {
  switch (kind) {
    case 'token delete':
      await call(sg, 'DELETE', `/api/${r.tokenKind}_token/${r.tokenId}`);
      return;
    case 'token disable':
      await call(sg, 'PUT', `/api/${r.tokenKind}_token/${r.tokenId}`, { isActive: false });
      return;
    case 'stream stop': {
      const d = await call(sg, 'POST', '/api/stream/stop', { streamId: r.streamName });
      if (d?.stoppingLevel !== 'Stream') throw new Error(`the stream stop found nothing live (${JSON.stringify(d)})`);
      return;
    }
    case 'session cut':
      await call(sg, 'DELETE', `/api/sessions/${r.sessionId}`);
      return;
  }
}

/** The registry's endedReason of each revocation (docs/api.md#running-sessions). */
const ENDED_AS: Record<CutKind, string> = { 'token delete': 'token_revoked', 'token disable': 'token_revoked', 'stream stop': 'stopped', 'session cut': 'stopped' };

/** The token's one live session once it is in the registry (admissions are registered after the answer). */
async function liveSession(sg: Api, tokenId: number): Promise<{ id: string } | undefined> {
  const deadline = performance.now() + ADMIT_MS;
  while (performance.now() < deadline) {
    const page = await call(sg, 'GET', `/api/sessions?tokenId=${tokenId}`);
    const live = (page.data as Array<{ id: string; endedReason: string | null }>).filter((s) => s.endedReason === null);
    if (live.length === 1) return live[0];
    await sleep(50);
  }
  return undefined;
}

/** Why the session did not end as the revocation ends it, if it did not. */
async function wrongEnd(sg: Api, sessionId: string, kind: CutKind): Promise<string | undefined> {
  const s = await call(sg, 'GET', `/api/sessions/${sessionId}`);
  return s.endedReason === ENDED_AS[kind] ? undefined : `a session ended as ${s.endedReason}, not ${ENDED_AS[kind]}`;
}

/** CUT_REPEATS samples of one row, `concurrency` at a time; a sample that throws is one not taken. */
async function measureRow(spec: CutRowSpec, concurrency: number, one: () => Promise<Sample>): Promise<CutFigures> {
  const taken: Sample[] = [];
  let next = 0;
  const worker = async () => {
    while (next < CUT_REPEATS) {
      next++;
      taken.push(await one().catch((e: Error) => ({ error: e.message })));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, CUT_REPEATS) }, worker));
  const f: CutFigures = {
    path: spec.path,
    kind: spec.kind,
    samples: taken.flatMap((s) => ('ms' in s ? [Math.round(s.ms * 10) / 10] : [])),
    missed: taken.filter((s) => 'missed' in s).length,
    errors: taken.flatMap((s) => ('error' in s ? [s.error] : [])),
    outcomes: [...new Set(taken.flatMap((s) => ('outcome' in s ? [s.outcome] : [])))],
  };
  const st = cutStats(f);
  console.log(`time to cut: ${spec.path}, ${spec.kind}: n ${st.n}, p50 ${cutMs(st.p50)} ms, p99 ${cutMs(st.p99)} ms (bound ${spec.boundMs} ms)${f.missed ? `, ${f.missed} not cut` : ''}${f.errors.length ? `, ${f.errors.length} not taken` : ''}`);
  return f;
}

const notRun = (specs: readonly CutRowSpec[], why: string): CutFigures[] => specs.map((s) => ({ path: s.path, kind: s.kind, samples: [], missed: 0, errors: [], outcomes: [], notRun: why }));

/** An ffmpeg viewer pulling an RTMP URL until the stream ends for it, copying packets (no decoding). */
function rtmpViewer(url: string): ChildProcess {
  return spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', url, '-c', 'copy', '-f', 'null', '-'], { stdio: 'ignore' });
}

/** When the process exits (this process's clock), and how. */
function exitOf(p: ChildProcess): Promise<{ at: number; how: string }> {
  return new Promise((resolve) => p.once('exit', (code, signal) => resolve({ at: performance.now(), how: code !== null ? `exit ${code}` : `signal ${signal}` })));
}

/**
 * nginx-rtmp without the control module: a session Streamgate ended is refused at its next
 * on_update, and nginx drops the client. One Streamgate (SQLite, terminateOn [delete, disable]).
 */
async function nginxRtmpRows(specs: readonly CutRowSpec[]): Promise<CutFigures[]> {
  try {
    requireBinaries();
  } catch (e) {
    return notRun(specs, (e as Error).message);
  }
  const sg = await streamgate('streamgate (time to cut: nginx-rtmp)', { STREAMGATE_ENFORCEMENT_TERMINATEON: 'delete,disable' });
  const api: Api = { base: sg.t.base, secret: sg.secret };
  const clients: ChildProcess[] = [];
  let nginx: Nginx | undefined;
  try {
    const rtmpPort = await freePort();
    nginx = await startNginx(rtmpBlock(rtmpPort, `${sg.t.base}/hooks/nginx-rtmp`, `${CUT_UPDATE_SECONDS}s`), [rtmpPort], true);
    const url = (name: string, token: string) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}?token=${token}`;
    const publish = (u: string) => {
      const p = publishTestPattern(u);
      p.stderr?.resume();
      return p;
    };
    const source = await call(api, 'POST', '/api/publish_token', { label: 'time to cut: the viewed stream', streams: [{ streamName: VIEWED }] });
    clients.push(publish(url(VIEWED, source.token)));
    if (!(await liveSession(api, source.id))) throw new Error(`nginx-rtmp: the publisher of ${VIEWED} was not admitted within ${ADMIT_MS} ms`);
    let seq = 0;
    const out: CutFigures[] = [];
    for (const spec of specs) {
      out.push(
        await measureRow(spec, RTMP_CONCURRENCY, async () => {
          const publisher = spec.client === 'publisher';
          const tokenKind = publisher ? 'publish' : 'subscribe';
          const name = publisher ? `cut${++seq}` : VIEWED;
          const t = await call(api, 'POST', `/api/${tokenKind}_token`, { label: 'time to cut', streams: [{ streamName: name }] });
          const ff = publisher ? publish(url(name, t.token)) : rtmpViewer(url(name, t.token));
          clients.push(ff);
          const exited = exitOf(ff);
          try {
            const session = await liveSession(api, t.id);
            if (!session) return { error: `the ${spec.client} was not admitted within ${ADMIT_MS} ms` };
            await sleep(Math.random() * CUT_UPDATE_SECONDS * 1000);
            if (ff.exitCode !== null || ff.signalCode !== null) return { error: `the ${spec.client} ended before the revocation` };
            const t0 = performance.now();
            const revoked = revoke(api, spec.kind, { tokenKind, tokenId: t.id, streamName: name, sessionId: session.id });
            const end = await within(exited, spec.boundMs + CUT_GRACE_MS);
            await revoked;
            if (!end) return { missed: true };
            const wrong = await wrongEnd(api, session.id, spec.kind);
            return wrong ? { error: wrong } : { ms: end.at - t0, outcome: `ffmpeg ${end.how}` };
          } finally {
            if (ff.exitCode === null && ff.signalCode === null) ff.kill('SIGKILL');
          }
        }),
      );
    }
    return out;
  } finally {
    for (const c of clients) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await nginx?.stop();
    await stopTarget(sg.t);
  }
}

/**
 * A viewer holding its session credential, asking for a segment every CUT_POLL_MS as nginx's
 * auth_request would (the cookie, no token), until stopped. `refused`: the first refusal answered
 * at or after `since`; a refusal before it, or a request that fails, is an error.
 */
class Viewer {
  since = Infinity;
  readonly refused: Promise<{ at: number; outcome: string } | { error: string }>;
  private stopped = false;
  private settle: (v: { at: number; outcome: string } | { error: string }) => void = () => {};

  constructor(
    private readonly base: string,
    private readonly cookie: string,
  ) {
    this.refused = new Promise((r) => {
      this.settle = r;
    });
    void this.run();
  }

  stop(): void {
    this.stopped = true;
  }

  private async run(): Promise<void> {
    for (let k = 0; !this.stopped; k++) {
      let status: number;
      let body: string;
      try {
        const r = await fetch(`${this.base}/hooks/auth-request`, { headers: { 'x-original-uri': `/hls/${VIEWED}/seg-${k}.ts`, cookie: this.cookie } });
        status = r.status;
        body = await r.text();
      } catch (e) {
        this.settle({ error: `a viewer request failed: ${(e as Error).message}` });
        return;
      }
      const at = performance.now();
      if (status !== 200) {
        let reason = '';
        try {
          reason = (JSON.parse(body) as { reason?: string }).reason ?? '';
        } catch {
          // not JSON: the status says it
        }
        this.settle(at >= this.since ? { at, outcome: `${status} ${reason}`.trim() } : { error: `the viewer was refused before the revocation (${status} ${reason})` });
        return;
      }
      await sleep(CUT_POLL_MS);
    }
  }
}

/**
 * HTTP viewer sessions on two instances on one private Redis (sessions.http.revalidateSeconds
 * CUT_REVALIDATE_SECONDS on both): every revocation is made through A; a viewer admitted by A is
 * asked again at A, one admitted by B at B.
 */
async function httpRows(specs: readonly CutRowSpec[], redis: BenchRedis): Promise<CutFigures[]> {
  const env = { REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: `cuts${Date.now()}:`, STREAMGATE_SESSIONS_HTTP_REVALIDATESECONDS: String(CUT_REVALIDATE_SECONDS) };
  const a = await streamgate('streamgate A (time to cut: HTTP viewers)', env);
  let b: Target | undefined;
  try {
    // another instance: the account A made on its first start is found in the store
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-bench-'));
    b = await startProcess('streamgate B (time to cut: HTTP viewers)', [process.execPath, ...STREAMGATE_NODE_FLAGS, 'dist/main.js'], { ...STREAMGATE_ENV, ...env, STREAMGATE_DATA_DIR: dir });
    const api: Api = { base: a.t.base, secret: a.secret };
    // the stream needs a subscribe token: a credential that no longer holds is a refused request
    await call(api, 'POST', '/api/publish_token', { label: 'time to cut: secures the viewed stream', streams: [{ streamName: VIEWED }], subscribeRequiresAuth: true });
    const out: CutFigures[] = [];
    for (const spec of specs) {
      const same = spec.path === 'http, same instance';
      const at = same ? a.t : b;
      // the phase the revocation may fall in: between two requests of the viewer, or two revalidations of B
      const period = same ? CUT_POLL_MS : CUT_REVALIDATE_SECONDS * 1000;
      out.push(
        await measureRow(spec, same ? 1 : OTHER_INSTANCE_CONCURRENCY, async () => {
          const t = await call(api, 'POST', '/api/subscribe_token', { label: 'time to cut', streams: [{ streamName: VIEWED }] });
          const first = await fetch(`${at.base}/hooks/auth-request`, { headers: { 'x-original-uri': `/hls/${VIEWED}/index.m3u8?token=${t.token}` } });
          await first.text();
          const cookie = first.headers
            .getSetCookie()
            .find((c) => c.startsWith(`${COOKIE}=`))
            ?.split(';')[0];
          if (first.status !== 200 || cookie === undefined) return { error: `the viewer's first request was answered ${first.status} without a session credential` };
          const session = await liveSession(api, t.id);
          if (!session) return { error: `the viewer session was not registered within ${ADMIT_MS} ms` };
          const viewer = new Viewer(at.base, cookie);
          try {
            await sleep(Math.random() * period);
            const t0 = performance.now();
            viewer.since = t0;
            const revoked = revoke(api, spec.kind, { tokenKind: 'subscribe', tokenId: t.id, streamName: VIEWED, sessionId: session.id });
            const refusal = await within(viewer.refused, spec.boundMs + CUT_GRACE_MS);
            await revoked;
            if (!refusal) return { missed: true };
            if ('error' in refusal) return refusal;
            // a cut by id names the session; a token change is followed by the credential whatever terminateOn says
            const wrong = spec.kind === 'session cut' ? await wrongEnd(api, session.id, spec.kind) : undefined;
            return wrong ? { error: wrong } : { ms: refusal.at - t0, outcome: refusal.outcome };
          } finally {
            viewer.stop();
          }
        }),
      );
    }
    return out;
  } finally {
    if (b) await stopTarget(b);
    await stopTarget(a.t);
  }
}

/** How a publisher of `name` is admitted through each caller's hook, and the call its cut makes. */
interface DriverPath {
  standIn: StandIn;
  /** The hook request; the session it starts is then made live on the stand-in. */
  admit(name: string, token: string, n: number): { hook: string; body: unknown; live(): void; call: (c: ReceivedCall) => boolean; shown: string };
}

/**
 * Sessions cut through the media servers' APIs: one Streamgate (SQLite, terminateOn [delete,
 * disable]) with a MediaMTX, an SRS and an OvenMediaEngine stand-in in sessions.servers;
 * publishers admitted through each caller's hook.
 */
async function driverRows(specs: readonly CutRowSpec[]): Promise<CutFigures[]> {
  const accessToken = 'time-to-cut-ome-access-token';
  const mtx = await mediamtxStandIn();
  const srs = await srsStandIn();
  const ome = await omeStandIn(accessToken);
  const paths: Record<'mediamtx' | 'srs' | 'ome', DriverPath> = {
    mediamtx: {
      standIn: mtx,
      admit: (name, token) => {
        const id = randomUUID();
        const p = `/v3/rtmpconns/kick/${id}`;
        return {
          hook: '/hooks/mediamtx/auth',
          body: { ip: '203.0.113.7', user: '', password: '', token, action: 'publish', path: name, protocol: 'rtmp', id, query: '' },
          live: () => mtx.sessions.add(`rtmpconns/${id}`),
          call: (c) => c.method === 'POST' && c.path === p,
          shown: 'POST /v3/rtmpconns/kick/{id}',
        };
      },
    },
    srs: {
      standIn: srs,
      admit: (name, token, n) => {
        const clientId = `bench${n}`;
        const p = `/api/v1/clients/${clientId}`;
        return {
          hook: '/hooks/srs',
          body: { action: 'on_publish', client_id: clientId, ip: '203.0.113.7', vhost: '__defaultVhost__', app: 'live', stream: name, param: `?token=${token}`, server_id: 'vid-bench', stream_id: `vid-${n}`, tcUrl: 'rtmp://127.0.0.1/live' },
          live: () => srs.sessions.add(clientId),
          call: (c) => c.method === 'DELETE' && c.path === p,
          shown: 'DELETE /api/v1/clients/{client_id}',
        };
      },
    },
    ome: {
      standIn: ome,
      admit: (name, token, n) => {
        const p = `/v1/vhosts/default/apps/app/streams/${name}`;
        return {
          hook: '/hooks/ome/admission',
          body: { client: { address: '203.0.113.7', port: 40000 + n }, request: { direction: 'incoming', protocol: 'rtmp', status: 'opening', url: `rtmp://127.0.0.1:1935/app/${name}?token=${token}` } },
          live: () => ome.sessions.add(`default/app/${name}`),
          call: (c) => c.method === 'DELETE' && c.path === p,
          shown: 'DELETE /v1/vhosts/default/apps/app/streams/{stream}',
        };
      },
    },
  };
  const servers = [
    { caller: 'mediamtx', url: mtx.base },
    { caller: 'srs', url: srs.base },
    { caller: 'ome', url: ome.base, accessToken },
  ];
  let sg: Awaited<ReturnType<typeof streamgate>> | undefined;
  try {
    sg = await streamgate('streamgate (time to cut: drivers)', {
      STREAMGATE_ENFORCEMENT_TERMINATEON: 'delete,disable',
      STREAMGATE_SESSIONS_SERVERS: JSON.stringify(servers),
      STREAMGATE_SESSIONS_DRIVERTIMEOUTMS: String(CUT_DRIVER_TIMEOUT_MS),
    });
    const api: Api = { base: sg.t.base, secret: sg.secret };
    let seq = 0;
    const out: CutFigures[] = [];
    for (const spec of specs) {
      const driver = paths[spec.path as keyof typeof paths];
      out.push(
        await measureRow(spec, 1, async () => {
          const n = ++seq;
          const name = `cut${n}`;
          const t = await call(api, 'POST', '/api/publish_token', { label: 'time to cut', streams: [{ streamName: name }] });
          const a = driver.admit(name, t.token, n);
          const r = await fetch(api.base + a.hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(a.body) });
          const answer = await r.text();
          if (r.status !== 200 || /"allowed":false|"code":[1-9]/.test(answer)) return { error: `the ${spec.path} admission was answered ${r.status} ${answer.slice(0, 120)}` };
          a.live();
          const session = await liveSession(api, t.id);
          if (!session) return { error: `the ${spec.path} session was not registered within ${ADMIT_MS} ms` };
          const from = driver.standIn.calls.length;
          const t0 = performance.now();
          const revoked = revoke(api, spec.kind, { tokenKind: 'publish', tokenId: t.id, streamName: name, sessionId: session.id });
          const received = await waitFor(() => driver.standIn.calls[from], spec.boundMs + CUT_GRACE_MS);
          await revoked;
          if (!received) return { missed: true };
          if (!a.call(received)) return { error: `the stand-in received ${received.method} ${received.path}, not the cut` };
          const wrong = await wrongEnd(api, session.id, spec.kind);
          return wrong ? { error: wrong } : { ms: received.at - t0, outcome: a.shown };
        }),
      );
    }
    return out;
  } finally {
    if (sg) await stopTarget(sg.t);
    for (const s of [mtx, srs, ome]) await s.close();
  }
}

/**
 * The time-to-cut rows of the parts selected (BENCH_CUTS), the others NOT RUN. `redis`: the
 * bench's private Redis, which the HTTP viewer rows' two instances share (a key prefix of their own).
 */
export async function cutRun(redis: BenchRedis, parts: ReadonlySet<CutPart>): Promise<CutFigures[]> {
  console.log(`\ntime to cut: ${CUT_REPEATS} samples per row; nginx-rtmp on_update every ${CUT_UPDATE_SECONDS} s; HTTP viewers ask every ${CUT_POLL_MS} ms, revalidateSeconds ${CUT_REVALIDATE_SECONDS}; driverTimeoutMs ${CUT_DRIVER_TIMEOUT_MS}`);
  const of = (p: (s: CutRowSpec) => boolean) => CUT_ROWS.filter(p);
  const left = (part: CutPart) => `BENCH_CUTS leaves out ${part}`;
  const rtmp = of((s) => s.path === 'nginx-rtmp');
  const http = of((s) => s.path.startsWith('http'));
  const drivers = of((s) => ['mediamtx', 'srs', 'ome'].includes(s.path));
  // a part that stops (a process that would not start) fails its rows; the other parts still run
  const guarded = async (part: CutPart, specs: readonly CutRowSpec[], run: () => Promise<CutFigures[]>): Promise<CutFigures[]> => {
    const started = performance.now();
    try {
      const rows = await run();
      console.log(`time to cut: ${part} took ${((performance.now() - started) / 1000).toFixed(0)} s`);
      return rows;
    } catch (e) {
      console.error(e);
      return specs.map((s) => ({ path: s.path, kind: s.kind, samples: [], missed: 0, errors: [`the part stopped: ${(e as Error).message}`], outcomes: [] }));
    }
  };
  return [
    ...(parts.has('drivers') ? await guarded('drivers', drivers, () => driverRows(drivers)) : notRun(drivers, left('drivers'))),
    ...(parts.has('http') ? await guarded('http', http, () => httpRows(http, redis)) : notRun(http, left('http'))),
    ...(parts.has('nginx-rtmp') ? await guarded('nginx-rtmp', rtmp, () => nginxRtmpRows(rtmp)) : notRun(rtmp, left('nginx-rtmp'))),
  ];
}
