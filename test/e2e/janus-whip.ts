// A real WHIP server for end-to-end tests: Debian's Janus (its VideoRoom plugin, WebSocket API and
// HTTP Admin API) and Meetecho's simple-whip-server in front of it, each run from a temp dir on free
// ports and stopped by the caller, also on failure. Installs nothing: .ci/run does (apt-get install
// janus; test/e2e/install-simple-whip-server.sh for simple-whip-server's files).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../helpers/redis.js';
import { waitForPort } from './nginx.js';

/** Where test/e2e/install-simple-whip-server.sh puts simple-whip-server's files. */
export const SIMPLE_WHIP_SERVER_DIR = process.env.SIMPLE_WHIP_SERVER_DIR ?? '/opt/simple-whip-server';

/** Janus's plugin and transport folders (/usr/lib/<multiarch>/janus), if the janus package is installed. */
function janusLibDir(): string | undefined {
  for (const arch of existsSync('/usr/lib') ? readdirSync('/usr/lib') : []) {
    const dir = path.join('/usr/lib', arch, 'janus');
    if (existsSync(path.join(dir, 'plugins/libjanus_videoroom.so')) && existsSync(path.join(dir, 'transports/libjanus_websockets.so'))) return dir;
  }
  return undefined;
}

/** Fails naming what to install when Janus or simple-whip-server's files are missing. */
export function requireJanusWhip(): void {
  const missing: string[] = [];
  if (spawnSync('janus', ['--version']).error || !janusLibDir()) missing.push("Debian's janus (apt-get install janus)");
  if (!existsSync(path.join(SIMPLE_WHIP_SERVER_DIR, 'src/server.js')) || !existsSync(path.join(SIMPLE_WHIP_SERVER_DIR, 'node_modules/express'))) {
    missing.push(`the Debian package simple-whip-server's files in ${SIMPLE_WHIP_SERVER_DIR} (bash test/e2e/install-simple-whip-server.sh)`);
  }
  if (missing.length > 0) throw new Error(`the real WHIP test needs ${missing.join(' and ')}; .ci/run installs them`);
}

/**
 * The address Janus gathers its ICE candidates on. Janus never offers a loopback candidate (it skips
 * loopback interfaces), so media goes to this machine's own first non-loopback IPv4 address; packets
 * to a local address never leave the machine.
 */
function iceAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('Janus offers no loopback ICE candidates, and this machine has no other IPv4 address to publish media to');
}

/** A Janus VideoRoom publisher as the Admin API's handle_info shows it, with what it received. */
export interface JanusPublisher {
  display: string;
  dtlsState: string;
  /** Per m-line: its kind, codec and the RTP received from the publisher. */
  media: Array<{ type: string; codec: string; packets: number; bytes: number }>;
}

export interface Janus {
  /** The WebSocket API's address (ws://127.0.0.1:port), the one simple-whip-server talks to. */
  wsUrl: string;
  logs: string[];
  /** The VideoRoom's listparticipants answer for `room`, through the Admin API. */
  participants(room: number): Promise<Array<{ id: number; display: string; publisher: boolean }>>;
  /** The room's publisher shown as `display`, with its media counters, or undefined. */
  publisher(room: number, display: string): Promise<JanusPublisher | undefined>;
  stop(): Promise<void>;
}

/** Stops `proc` with SIGTERM, then SIGKILL if it has not exited after 5 s. */
async function terminate(proc: ChildProcess, exited: Promise<void>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

/** Keeps a child's output lines in `logs`. */
function collect(proc: ChildProcess, logs: string[]): void {
  for (const s of [proc.stdout, proc.stderr]) if (s) createInterface({ input: s }).on('line', (l) => logs.push(l));
}

/** Starts Janus with only the VideoRoom plugin (one room per entry of `rooms`), its WebSocket API and its HTTP Admin API. */
export async function startJanus(rooms: number[]): Promise<Janus> {
  const lib = janusLibDir();
  if (!lib) throw new Error("Debian's janus is not installed (apt-get install janus)");
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-janus-'));
  const [wsPort, adminPort] = [await freePort(), await freePort()];
  const adminSecret = randomBytes(16).toString('hex');
  const others = (kind: string, keep: string[]) =>
    readdirSync(path.join(lib, kind))
      .filter((f) => /^libjanus_\w+\.so$/.test(f) && !keep.includes(f))
      .join(',');
  const files: Record<string, string> = {
    'janus.jcfg': `general: {
  configs_folder = "${dir}"
  plugins_folder = "${lib}/plugins"
  transports_folder = "${lib}/transports"
  events_folder = "${lib}/events"
  loggers_folder = "${lib}/loggers"
  debug_level = 4
  debug_colors = false
  admin_secret = "${adminSecret}"
}
nat: {
  ice_enforce_list = "${iceAddress()}"
  ignore_mdns = true
}
plugins: { disable = "${others('plugins', ['libjanus_videoroom.so'])}" }
transports: { disable = "${others('transports', ['libjanus_websockets.so', 'libjanus_http.so'])}" }
loggers: { disable = "${others('loggers', [])}" }
events: { broadcast = false }
`,
    'janus.transport.websockets.jcfg': `general: { ws = true, ws_ip = "127.0.0.1", ws_port = ${wsPort}, wss = false }
admin: { admin_ws = false, admin_wss = false }
`,
    'janus.transport.http.jcfg': `general: { http = false, https = false }
admin: { admin_http = true, admin_ip = "127.0.0.1", admin_port = ${adminPort}, admin_base_path = "/admin", admin_https = false }
`,
    'janus.plugin.videoroom.jcfg': `general: {}
${rooms.map((r) => `room-${r}: { description = "room ${r}", publishers = 4, audiocodec = "opus", videocodec = "vp8" }`).join('\n')}
`,
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const proc = spawn('janus', ['-F', dir, '-C', path.join(dir, 'janus.jcfg')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const logs: string[] = [];
  collect(proc, logs);
  const stop = async () => {
    await terminate(proc, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(wsPort);
    await waitForPort(adminPort);
  } catch (e) {
    await stop();
    throw new Error(`Janus did not start: ${(e as Error).message}\n${logs.slice(-30).join('\n')}`);
  }

  const admin = async (body: Record<string, unknown>): Promise<any> => {
    const r = await fetch(`http://127.0.0.1:${adminPort}/admin`, {
      method: 'POST',
      body: JSON.stringify({ ...body, transaction: randomBytes(6).toString('hex'), admin_secret: adminSecret }),
    });
    const answer = (await r.json()) as { janus: string };
    if (answer.janus !== 'success') throw new Error(`Janus Admin API ${JSON.stringify(body)}: ${JSON.stringify(answer)}`);
    return answer;
  };
  return {
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    logs,
    async participants(room) {
      const a = await admin({ janus: 'message_plugin', plugin: 'janus.plugin.videoroom', request: { request: 'listparticipants', room } });
      return a.response.participants;
    },
    async publisher(room, display) {
      for (const session of (await admin({ janus: 'list_sessions' })).sessions as number[]) {
        for (const handle of (await admin({ janus: 'list_handles', session_id: session })).handles as number[]) {
          const { info } = await admin({ janus: 'handle_info', session_id: session, handle_id: handle });
          const p = info.plugin_specific;
          if (info.plugin !== 'janus.plugin.videoroom' || p?.type !== 'publisher' || p.room !== room || p.display !== display) continue;
          return {
            display: p.display,
            dtlsState: info.webrtc?.dtls?.['dtls-state'],
            media: Object.values((info.webrtc?.media ?? {}) as Record<string, any>).map((m) => ({
              type: m.type,
              codec: m.codecs?.codec,
              packets: m.stats?.in?.packets ?? 0,
              bytes: m.stats?.in?.bytes ?? 0,
            })),
          };
        }
      }
      return undefined;
    },
    stop,
  };
}

export interface SimpleWhipServer {
  /** Its own address (http://127.0.0.1:port): what nginx proxies to. */
  base: string;
  logs: string[];
  /**
   * "METHOD /whip/..." of every request that reached it, in order, from its own request log, read
   * once a marker request sent now is there too: its log reaches the test later than its answers.
   */
  requests(): Promise<string[]>;
  /** Creates the WHIP endpoint /whip/endpoint/<id> publishing to `room` as `label` (its /whip/create). */
  createEndpoint(id: string, room: number, label: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts simple-whip-server against Janus's WebSocket API. Its src/ is copied into a temp dir with a
 * config.js of its own (server.js requires ./config.js), beside links to the installed modules and web/.
 * Its express router's debug log is on: one "dispatching METHOD path" line per request it received.
 */
export async function startSimpleWhipServer(janusWsUrl: string): Promise<SimpleWhipServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-simple-whip-'));
  mkdirSync(path.join(dir, 'src'));
  for (const f of ['server.js', 'whip-janus.js']) copyFileSync(path.join(SIMPLE_WHIP_SERVER_DIR, 'src', f), path.join(dir, 'src', f));
  symlinkSync(path.join(SIMPLE_WHIP_SERVER_DIR, 'node_modules'), path.join(dir, 'node_modules'));
  symlinkSync(path.join(SIMPLE_WHIP_SERVER_DIR, 'web'), path.join(dir, 'web'));
  const port = await freePort();
  const config = { janus: { address: janusWsUrl }, port, rest: '/whip', allowTrickle: true, strictETags: false, iceServers: [] };
  writeFileSync(path.join(dir, 'src/config.js'), `module.exports = ${JSON.stringify(config)};\n`);
  const proc = spawn(process.execPath, ['src/server.js'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DEBUG: 'whip:*,janus:info,janus:warn,janus:error,express:router', DEBUG_COLORS: 'no' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const logs: string[] = [];
  const stop = async () => {
    await terminate(proc, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // it listens only once connected to Janus
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('not listening after 15 s')), 15000);
      for (const s of [proc.stdout!, proc.stderr!]) {
        createInterface({ input: s }).on('line', (l) => {
          logs.push(l);
          if (l.startsWith('WHIP REST API listening on')) {
            clearTimeout(timer);
            resolve();
          }
        });
      }
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`exited (${proc.exitCode ?? proc.signalCode})`));
      });
    });
  } catch (e) {
    await stop();
    throw new Error(`simple-whip-server did not start: ${(e as Error).message}\n${logs.slice(-30).join('\n')}`);
  }
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    logs,
    async requests() {
      const mark = `GET /whip/healthcheck?mark=${randomBytes(6).toString('hex')}`;
      const r = await fetch(`${base}${mark.slice(4)}`);
      if (r.status !== 200) throw new Error(`simple-whip-server ${mark}: ${r.status}`);
      const deadline = Date.now() + 5000;
      for (;;) {
        const seen = logs.flatMap((l) => /express:router dispatching (\S+) (\/whip\/\S*)$/.exec(l)?.slice(1, 3).join(' ') ?? []);
        if (seen.includes(mark)) return seen.filter((x) => !x.startsWith('GET /whip/healthcheck?mark='));
        if (Date.now() > deadline) throw new Error(`simple-whip-server did not log ${mark}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async createEndpoint(id, room, label) {
      const r = await fetch(`${base}/whip/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, room, label }) });
      if (r.status !== 200) throw new Error(`simple-whip-server /whip/create ${id}: ${r.status} ${await r.text()}`);
    },
    stop,
  };
}

/**
 * Debian 12's whip-client links libsoup 2, and GStreamer's libnice plugin links GUPnP-IGD (UPnP port
 * mapping), which links libsoup 3: the client aborts at start ("Using libsoup2 and libsoup3 in the
 * same process is not supported"). On this machine's own addresses no port needs mapping, so the
 * client runs with a stand-in libgupnp-igd-1.0.so.4 first on its library path, built here from four
 * functions: libnice asks it for a port-mapping thread, gets none and gathers its candidates without
 * UPnP (as with its `upnp` property off). Nothing else of the client or GStreamer is replaced.
 */
const IGD_STAND_IN = `#include <stddef.h>
void *gupnp_simple_igd_thread_new(void) { return NULL; }
unsigned long gupnp_simple_igd_get_type(void) { return 0; }
void gupnp_simple_igd_add_port(void *igd, const char *protocol, unsigned short external_port, const char *local_ip, unsigned short local_port, unsigned int lease, const char *description) {}
void gupnp_simple_igd_remove_port_local(void *igd, const char *protocol, const char *local_ip, unsigned short local_port) {}
`;

/** Fails naming the package when Debian's whip-client or a C compiler (for the stand-in above) is missing. */
export function requireWhipClient(): void {
  const missing: string[] = [];
  if (spawnSync('whip-client', ['--help']).error) missing.push("Debian's whip-client (apt-get install simple-whip-client)");
  if (spawnSync('cc', ['--version']).error) missing.push('a C compiler (apt-get install gcc)');
  if (missing.length > 0) throw new Error(`the real WHIP client test needs ${missing.join(' and ')}; .ci/run installs them`);
}

export interface WhipClient {
  logs: string[];
  /** Resolves when the client has exited, with its exit code (or signal). */
  exited: Promise<number | string>;
  /** SIGINT, as a user's Ctrl-C: the client sends its DELETE and exits. Then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/**
 * Runs Debian's whip-client: a live test pattern (VP8) and tone (Opus), the payload types and codecs
 * Janus's VideoRoom takes, offered to `url` with `-t bearer` (its Authorization: Bearer on every
 * request), with no STUN server and no trickle (its candidates in the offer).
 */
export async function startWhipClient(url: string, bearer: string): Promise<WhipClient> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-whip-client-'));
  writeFileSync(path.join(dir, 'igd.c'), IGD_STAND_IN);
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-Wl,-soname,libgupnp-igd-1.0.so.4', '-o', path.join(dir, 'libgupnp-igd-1.0.so.4'), path.join(dir, 'igd.c')], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`building the GUPnP-IGD stand-in failed: ${cc.stderr}`);
  const audio = 'audiotestsrc is-live=true wave=sine ! audioconvert ! audioresample ! queue ! opusenc ! rtpopuspay pt=111 ssrc=1 ! queue ! application/x-rtp,media=audio,encoding-name=OPUS,payload=111';
  const video = 'videotestsrc is-live=true pattern=ball ! videoconvert ! queue ! vp8enc deadline=1 ! rtpvp8pay pt=96 ssrc=2 ! queue ! application/x-rtp,media=video,encoding-name=VP8,payload=96';
  const proc = spawn('whip-client', ['-u', url, '-t', bearer, '-A', audio, '-V', video, '-n', '-o', '-l', '4'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LD_LIBRARY_PATH: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  collect(proc, logs);
  const exited = new Promise<number | string>((r) => proc.once('exit', (code, signal) => r(code ?? signal ?? 'unknown')));
  void exited.then(() => rmSync(dir, { recursive: true, force: true }));
  return {
    logs,
    exited,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGINT');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(t);
    },
  };
}
