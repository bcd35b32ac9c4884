// HLS viewers end to end (docs/callers.md#http-viewer-sessions): ffmpeg publishes a test pattern
// over RTMP to Debian's nginx-rtmp, which writes HLS; the same nginx serves that directory over HTTP
// behind auth_request to a real Streamgate process on a private Redis. A second Streamgate process
// on the same Redis is "another instance" (API changes made there reach the first by revalidation).
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort, startRedis, type TestRedis } from '../helpers/redis.js';
import { HTTP_TEMP_PATHS, publishTestPattern, requireBinaries, startNginx, type Nginx } from './nginx.js';
import { until } from './rtmp-stand.js';

/**
 * The nginx-rtmp application that writes HLS: one-second fragments (ffmpeg sends a key frame every
 * second), six seconds of playlist. Publishing is left open: viewing is what is under test.
 */
export function hlsRtmpApplication(hlsPath: string): string {
  return `application live {
      live on;
      hls on;
      hls_path ${hlsPath};
      hls_fragment 1s;
      hls_playlist_length 6s;
    }`;
}

/**
 * The http locations serving the HLS directory behind Streamgate (docs/callers.md quotes this):
 * auth_request asks Streamgate about every playlist and segment, and the viewer-session cookie of
 * an allow goes back to the viewer. nginx passes the client's Cookie header to the auth subrequest
 * as it is; X-Real-IP carries the viewer's address (Streamgate trusts nginx for it:
 * hooks.trustedProxies ['127.0.0.1'], hooks.realIpHeader X-Real-IP).
 * `root` is the directory holding `hls/` (hls_path is `<root>/hls`).
 */
export function hlsAuthRequestLocations(streamgate: string, root: string): string {
  return `location /hls/ {
      auth_request /_auth;
      auth_request_set $sg_cookie $upstream_http_set_cookie;
      add_header Set-Cookie $sg_cookie;
      types {
        application/vnd.apple.mpegurl m3u8;
        video/mp2t ts;
      }
      root ${root};
    }
    location = /_auth {
      internal;
      proxy_pass ${streamgate}/hooks/auth-request;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Real-IP $remote_addr;
    }`;
}

export interface HlsStand {
  redis: TestRedis;
  /** The instance nginx asks. */
  sg: RunningServer;
  /** Another instance on the same store (same settings); nginx never asks it. */
  other: RunningServer;
  nginx: Nginx;
  httpPort: number;
  secret: string;
  /** sessions.http.secret of both instances. */
  credentialSecret: string;
  /** The API of `sg` (or of `other` with `on: 'other'`). */
  api(method: string, p: string, body?: unknown, on?: 'sg' | 'other'): Promise<{ status: number; body: any }>;
  /** The HLS directory nginx-rtmp writes. */
  hlsDir: string;
  ffmpeg: ChildProcess;
  /** Kills the private Redis (an outage); stop() cleans up after it. */
  stopStore(): Promise<void>;
  /** `sg`'s streamgate_decisions_total, by its label string. */
  decisions(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

export const STREAM = 'cam1';


async function stopServer(s: RunningServer | undefined): Promise<void> {
  if (!s || s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  s.proc.kill('SIGTERM');
  const t = setTimeout(() => s.proc.kill('SIGKILL'), 5000);
  await s.exited;
  clearTimeout(t);
}

export async function startHlsStand(settings: Record<string, string>): Promise<HlsStand> {
  requireBinaries();
  const credentialSecret = 'e2e-viewer-credentials-0123456789abcdef';
  const redis = await startRedis();
  const prefix = redis.prefix();
  const env = (dir: string) => ({
    STREAMGATE_DATA_DIR: dir,
    REDIS_URL: redis.url,
    STREAMGATE_REDIS_KEYPREFIX: prefix,
    STREAMGATE_HOOKS_TRUSTEDPROXIES: '["127.0.0.1"]',
    STREAMGATE_HOOKS_REALIPHEADER: 'X-Real-IP',
    STREAMGATE_SESSIONS_HTTP_SECRET: credentialSecret,
    ...settings,
  });
  let sg: RunningServer | undefined;
  let other: RunningServer | undefined;
  let nginx: Nginx | undefined;
  let ffmpeg: ChildProcess | undefined;
  let storeStopped = false;
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-hls-e2e-'));
  const stop = async () => {
    if (ffmpeg && ffmpeg.exitCode === null && ffmpeg.signalCode === null) ffmpeg.kill('SIGKILL');
    await nginx?.stop();
    await Promise.all([stopServer(sg), stopServer(other)]);
    // a killed redis-server has a signalCode and no exitCode, which the helper's stop() would wait
    // on forever: started again first, then stopped (which also removes its directory)
    if (storeStopped) await redis.start();
    await redis.stop();
    // the data directories and the HLS fragments
    for (const d of [dir, nginx?.dir]) if (d) rmSync(d, { recursive: true, force: true });
  };
  try {
    // the first instance creates the account; the second finds it in the store
    sg = await startServer(env(dir));
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const otherDir = path.join(dir, 'other');
    mkdirSync(otherDir);
    other = await startServer(env(otherDir));

    const httpPort = await freePort();
    const rtmpPort = await freePort();
    nginx = await startNginx(
      `rtmp {
  server {
    listen 127.0.0.1:${rtmpPort};
    chunk_size 4096;
    ${hlsRtmpApplication('DIR/www/hls')}
  }
}
http {
  ${HTTP_TEMP_PATHS}
  server {
    listen 127.0.0.1:${httpPort};
    ${hlsAuthRequestLocations(`http://127.0.0.1:${sg.port}`, 'DIR/www')}
  }
}`,
      [httpPort, rtmpPort],
      true,
    );
    const hlsDir = path.join(nginx.dir, 'www/hls');
    ffmpeg = publishTestPattern(`rtmp://127.0.0.1:${rtmpPort}/live/${STREAM}`, 180);
    let ffmpegErr = '';
    ffmpeg.stderr?.on('data', (b: Buffer) => (ffmpegErr += b.toString()));
    // a playlist with three segments: a viewer has something to fetch from its first request
    const playlist = path.join(hlsDir, `${STREAM}.m3u8`);
    const ready = await until(() => existsSync(playlist) && readdirSync(hlsDir).filter((f) => f.endsWith('.ts')).length >= 3, 20000);
    if (!ready) throw new Error(`nginx-rtmp wrote no HLS playlist within 20 s (ffmpeg: ${ffmpegErr || 'no output'}):\n${nginx.errorLog()}`);

    const servers = { sg, other };
    const api = async (method: string, p: string, body?: unknown, on: 'sg' | 'other' = 'sg') => {
      const r = await fetch(servers[on].base + p, {
        method,
        headers: { authorization: `Bearer ${secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await r.text();
      return { status: r.status, body: text === '' ? null : JSON.parse(text) };
    };
    const base = sg.base;
    return {
      redis,
      sg,
      other,
      nginx,
      httpPort,
      secret,
      credentialSecret,
      api,
      hlsDir,
      ffmpeg,
      async stopStore() {
        storeStopped = true;
        await redis.kill();
      },
      async decisions() {
        const text = await (await fetch(`${base}/metrics`)).text();
        const out = new Map<string, number>();
        for (const line of text.split('\n')) {
          const m = /^streamgate_decisions_total(\{[^}]*\}) (\S+)$/.exec(line);
          if (m) out.set(m[1]!, Number(m[2]));
        }
        return out;
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** What changed between two decision counts (labels → increase), zeros left out. */
export function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

export interface Answer {
  status: number;
  /** The Set-Cookie lines of the answer. */
  setCookie: string[];
  body: Buffer;
}

/** One GET through nginx, from `from` (a loopback address), with the given Cookie header and other headers. */
export function get(port: number, target: string, opts: { cookie?: string; from?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        localAddress: opts.from ?? '127.0.0.1',
        agent: false,
        headers: Object.assign({}, opts.headers, opts.cookie !== undefined ? { cookie: opts.cookie } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, setCookie: res.headers['set-cookie'] ?? [], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${target}: no answer in 5 s`)));
    req.end();
  });
}

/** One request a viewer made, and what came back. */
export interface Fetched {
  at: number;
  target: string;
  status: number;
  /** The cookie value presented (undefined: none). */
  presented?: string;
  setCookie: string[];
  /** Segments: whether the body starts with an MPEG-TS sync byte. */
  media?: boolean;
}

/**
 * A player with a one-cookie jar: loads the playlist with its token every second (the URL a page
 * gives hls.js) and fetches every new segment by its relative URI (no token: the cookie only).
 */
export class Viewer {
  cookie?: string;
  readonly log: Fetched[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly port: number,
    private readonly token: string,
    private readonly cookieName: string,
    private readonly from = '127.0.0.1',
  ) {}

  /** One request through the jar: the cookie presented, a Set-Cookie of the answer kept. */
  async fetch(target: string): Promise<Fetched & { body: Buffer }> {
    const presented = this.cookie;
    const a = await get(this.port, target, { cookie: presented === undefined ? undefined : `${this.cookieName}=${presented}`, from: this.from });
    for (const line of a.setCookie) {
      const m = new RegExp(`^${this.cookieName}=([^;]*)`).exec(line);
      if (m) this.cookie = m[1];
    }
    const f: Fetched = { at: Date.now(), target, status: a.status, presented, setCookie: a.setCookie };
    if (target.endsWith('.ts')) f.media = a.body.length > 0 && a.body[0] === 0x47;
    this.log.push(f);
    return { ...f, body: a.body };
  }

  /** The playlist once, then every segment in it not fetched before. */
  async step(): Promise<void> {
    const playlist = await this.fetch(`/hls/${STREAM}.m3u8?token=${this.token}`);
    if (playlist.status !== 200) return;
    const uris = playlist.body
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    for (const uri of uris) {
      if (this.seen.has(uri)) continue;
      this.seen.add(uri);
      await this.fetch(new URL(uri, `http://nginx/hls/${STREAM}.m3u8`).pathname);
    }
  }

  /** Watches for `ms`: a step every second. */
  async watch(ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const started = Date.now();
      await this.step();
      const wait = Math.min(1000 - (Date.now() - started), end - Date.now());
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
}
