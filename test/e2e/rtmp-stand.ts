// A real Streamgate process (configured from a file) behind a real nginx-rtmp, with ffmpeg
// publishers and viewers: what the running-session end-to-end tests share (docs/api.md#running-sessions).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { rtmpBlock, startNginx, requireBinaries, publishTestPattern, type Nginx } from './nginx.js';

export interface SessionView {
  id: string;
  callerSessionId: string;
  tokenId: number | null;
  streamName: string;
  direction: string;
  clientIp: string | null;
  endedReason: string | null;
}

export interface Decision {
  adapter: string;
  action: string;
  allowed: boolean;
  reason: string;
  tokenId?: number;
  streamName: string;
}

export interface StandOptions {
  /** Settings merged over config/default.yaml (written as the STREAMGATE_CONFIG file). */
  config?: Record<string, unknown>;
  /** nginx-rtmp notify_update_timeout, e.g. '1s'. */
  updateEvery: string;
  /** Also an http server with the nginx-rtmp control module at /control, named in sessions.servers. */
  control?: boolean;
  /** nginx worker processes (default 1). */
  workers?: number;
  /** More environment for Streamgate (a shared Redis: REDIS_URL, STREAMGATE_REDIS_KEYPREFIX). */
  env?: Record<string, string>;
  /** The API secret to use, for an instance whose account another instance created on a shared store. */
  secret?: string;
  /** The server's name in its notify URL (/hooks/nginx-rtmp/<name>): servers on one host need one each. */
  serverName?: string;
}

export interface Stand {
  sg: RunningServer;
  nginx: Nginx;
  rtmpPort: number;
  controlPort?: number;
  secret: string;
  api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** The account's live sessions of the token. */
  sessionsOf(tokenId: number): Promise<SessionView[]>;
  url(name: string, token: string): string;
  publish(name: string, token: string): ChildProcess;
  /** An ffmpeg viewer pulling the stream over RTMP until it ends (or `seconds`). */
  view(name: string, token: string, seconds?: number): ChildProcess;
  /** An ffmpeg viewer pulling the RTMP URL given (a relay's), until it ends. */
  viewAt(url: string): ChildProcess;
  /** Streamgate's decision log lines since log line `from`. */
  decisions(from?: number): Decision[];
  stop(): Promise<void>;
}

/** Polls `cond` every 100 ms until true (resolves true) or `ms` passed (resolves false). */
export async function until(cond: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export async function startStand(opts: StandOptions): Promise<Stand> {
  requireBinaries();
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-sessions-e2e-'));
  const rtmpPort = await freePort();
  const controlPort = opts.control ? await freePort() : undefined;
  const config: Record<string, unknown> = { ...(opts.config ?? {}) };
  if (controlPort !== undefined) {
    config.sessions = { ...((config.sessions as object) ?? {}), servers: [{ caller: 'nginx-rtmp', url: `http://127.0.0.1:${controlPort}/control` }] };
  }
  const configFile = path.join(dir, 'config.json'); // JSON is YAML
  writeFileSync(configFile, JSON.stringify(config));
  const sg = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_CONFIG: configFile, ...opts.env });
  const secret = opts.secret ?? readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
  const hook = `http://127.0.0.1:${sg.port}/hooks/nginx-rtmp${opts.serverName === undefined ? '' : `/${opts.serverName}`}`;
  let nginx: Nginx;
  try {
    nginx = await startNginx(
      `${rtmpBlock(rtmpPort, hook, opts.updateEvery)}
${
  controlPort === undefined
    ? ''
    : `http {
  access_log DIR/logs/access.log;
  client_body_temp_path DIR/tmp;
  proxy_temp_path DIR/tmp;
  fastcgi_temp_path DIR/tmp;
  uwsgi_temp_path DIR/tmp;
  scgi_temp_path DIR/tmp;
  server {
    listen 127.0.0.1:${controlPort};
    location /control { rtmp_control all; }
  }
}`
}`,
      controlPort === undefined ? [rtmpPort] : [rtmpPort, controlPort],
      true,
      opts.workers,
    );
  } catch (e) {
    sg.proc.kill('SIGTERM');
    await sg.exited;
    throw e;
  }
  const running: ChildProcess[] = [];
  const viewer = (at: string, seconds?: number) => {
    const args = ['-hide_banner', '-loglevel', 'error', '-i', at];
    if (seconds !== undefined) args.push('-t', String(seconds));
    args.push('-f', 'null', '-');
    const p = spawn('ffmpeg', args, { stdio: 'ignore' });
    running.push(p);
    return p;
  };
  const url = (name: string, token: string) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}?token=${token}`;
  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(sg.base + p, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    return { status: r.status, body: text === '' ? null : JSON.parse(text) };
  };
  return {
    sg,
    nginx,
    rtmpPort,
    controlPort,
    secret,
    api,
    url,
    async sessionsOf(tokenId) {
      const r = await api('GET', `/api/sessions?tokenId=${tokenId}`);
      if (r.status !== 200) throw new Error(`GET /api/sessions answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data.data as SessionView[];
    },
    publish(name, token) {
      const p = publishTestPattern(url(name, token), 120);
      running.push(p);
      return p;
    },
    view(name, token, seconds) {
      return viewer(url(name, token), seconds);
    },
    viewAt(at: string) {
      return viewer(at);
    },
    decisions(from = 0) {
      const out: Decision[] = [];
      for (const chunk of sg.logs.slice(from)) {
        for (const line of chunk.split('\n')) {
          try {
            const j = JSON.parse(line) as Decision & { msg?: string };
            if (j.msg === 'decision') out.push(j);
          } catch {
            /* not JSON */
          }
        }
      }
      return out;
    },
    async stop() {
      for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      await nginx.stop();
      sg.proc.kill('SIGTERM');
      await sg.exited;
    },
  };
}
