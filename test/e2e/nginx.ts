// Runs a real nginx (with Debian's libnginx-mod-rtmp) from a config written into a temp dir, on
// free ports; stopped by the caller, also on failure. Installs nothing: .ci/run does that.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:net';
import type { RunningServer } from '../helpers/process.js';

/** The http block's log and temporary paths, inside the nginx run's own directory (DIR). */
export const HTTP_TEMP_PATHS = `access_log DIR/logs/access.log;
  client_body_temp_path DIR/tmp/body;
  proxy_temp_path DIR/tmp/proxy;
  fastcgi_temp_path DIR/tmp/fastcgi;
  uwsgi_temp_path DIR/tmp/uwsgi;
  scgi_temp_path DIR/tmp/scgi;`;

export const RTMP_MODULE = '/usr/lib/nginx/modules/ngx_rtmp_module.so';

export function requireBinaries(): void {
  const missing: string[] = [];
  if (spawnSync('nginx', ['-v']).error) missing.push('nginx');
  if (!existsSync(RTMP_MODULE)) missing.push('libnginx-mod-rtmp');
  if (spawnSync('ffmpeg', ['-version']).error) missing.push('ffmpeg');
  if (missing.length > 0) throw new Error(`end-to-end tests need ${missing.join(', ')}: apt-get install -y ${missing.join(' ')} (.ci/run does)`);
}

export interface Nginx {
  dir: string;
  stop(): Promise<void>;
  errorLog(): string;
}

/** Resolves once something accepts connections on 127.0.0.1:`port`, else throws after `ms`. */
export async function waitForPort(port: number, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port} after ${ms} ms`);
}

/** `body` is the config below the main context (rtmp {...} and/or http {...}); DIR is replaced. */
/**
 * The rtmp block both nginx-rtmp suites run: one `live` application whose publish, play, done and
 * update notifications all go to Streamgate's nginx-rtmp hook, asked again every `updateEvery`.
 */
export function rtmpBlock(rtmpPort: number, hook: string, updateEvery: string): string {
  return `rtmp {
  server {
    listen 127.0.0.1:${rtmpPort};
    chunk_size 4096;
    application live {
      live on;
      on_publish ${hook};
      on_play ${hook};
      on_publish_done ${hook};
      on_play_done ${hook};
      on_update ${hook};
      notify_update_timeout ${updateEvery};
    }
  }
}`;
}

/** A directory of its own for one nginx run, with tmp/, www/ and logs/ in it. */
function runDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-nginx-'));
  for (const d of ['tmp', 'www', 'logs']) mkdirSync(path.join(dir, d), { recursive: true });
  return dir;
}

/** `workers` > 1 runs that many worker processes (with `rtmp_auto_push on`, as nginx-rtmp needs for them). */
export async function startNginx(body: string, ports: number[], withRtmp: boolean, workers = 1): Promise<Nginx> {
  const dir = runDir();
  const conf = `${withRtmp ? `load_module ${RTMP_MODULE};\n` : ''}user root;
worker_processes ${workers};
${withRtmp && workers > 1 ? 'rtmp_auto_push on;\n' : ''}daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log info;
events { worker_connections 256; }
${body.replaceAll('DIR', dir)}
`;
  return runNginx(dir, conf, ports, []);
}

/**
 * Runs a complete nginx.conf, main context included, as a user would install it: `conf` is given
 * the run's directory. Only the run's own pid file, foreground mode and error log (at `info`) are
 * added, on the command line; the directory is opened to nginx's worker user (the file's `user`).
 */
export async function startNginxConf(conf: (dir: string) => string, ports: number[]): Promise<Nginx> {
  const dir = runDir();
  chmodSync(dir, 0o755);
  chmodSync(path.join(dir, 'www'), 0o755);
  return runNginx(dir, conf(dir), ports, ['-g', `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/logs/error.log info;`]);
}

async function runNginx(dir: string, conf: string, ports: number[], args: string[]): Promise<Nginx> {
  writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const run = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), ...args];
  const test = spawnSync('nginx', ['-t', ...run], { encoding: 'utf8' });
  if (test.status !== 0) throw new Error(`nginx -t failed:\n${test.stderr}\n${conf}`);
  const proc: ChildProcess = spawn('nginx', run, { stdio: 'ignore' });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    for (const p of ports) await waitForPort(p);
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  return {
    dir,
    errorLog: () => readFileSync(path.join(dir, 'logs/error.log'), 'utf8'),
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGQUIT');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** ffmpeg publishing a generated test pattern to an RTMP URL. */
export function publishTestPattern(url: string, seconds?: number): ChildProcess {
  const args = ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15'];
  if (seconds) args.push('-t', String(seconds));
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-pix_fmt', 'yuv420p', '-f', 'flv', url);
  return spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Resolves with ffmpeg's exit code (or -1 if it had to be killed after `ms`). */
export function exitOf(p: ChildProcess, ms: number): Promise<number> {
  return new Promise((resolve) => {
    if (p.exitCode !== null) return resolve(p.exitCode);
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      resolve(-1);
    }, ms);
    p.once('exit', (code) => {
      clearTimeout(t);
      resolve(code ?? -1);
    });
  });
}

/**
 * The internal location an `auth_request /_streamgate;` points at: Streamgate's auth-request hook
 * with the original URI and the client's address chain (nginx is in hooks.trustedProxies).
 */
export function authRequestLocation(sgPort: number): string {
  return `location = /_streamgate {
      internal;
      proxy_pass http://127.0.0.1:${sgPort}/hooks/auth-request;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }`;
}

/** Stops what an end-to-end suite started: its ffmpeg processes, nginx, then Streamgate (awaited). */
export async function stopAll(running: ChildProcess[], nginx: Nginx | undefined, sg: RunningServer | undefined): Promise<void> {
  for (const p of running) p.kill('SIGKILL');
  await nginx?.stop();
  if (sg) {
    sg.proc.kill('SIGTERM');
    await sg.exited;
  }
}
