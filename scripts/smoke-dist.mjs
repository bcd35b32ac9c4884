#!/usr/bin/env node
// Runs what ships: `node dist/main.js` (the image's entry) on a fresh data directory, then checks
// /healthz, creates a publish token with the first-start API secret, asks one decision on each
// store the build can reach without setup (the embedded one), and stops it with SIGTERM (exit 0).
// Used by .ci/run after `npm run build`; exits non-zero naming the step that failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const fail = (msg) => {
  console.error(`smoke: ${msg}`);
  process.exit(1);
};

for (const f of ['dist/main.js', 'dist/index.js', 'dist/store/redis/lua']) if (!existsSync(f)) fail(`${f} is missing: run npm run build first`);

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const port = await freePort();
const dataDir = mkdtempSync(path.join(tmpdir(), 'sg-smoke-'));
const child = spawn(process.execPath, ['dist/main.js'], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', STREAMGATE_DATA_DIR: dataDir, STREAMGATE_LOG_LEVEL: 'warn', REDIS_URL: '' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
let exited = null;
child.on('exit', (code, signal) => (exited = { code, signal }));
const base = `http://127.0.0.1:${port}`;

const deadline = Date.now() + 20_000;
for (;;) {
  if (exited) fail(`dist/main.js exited during start-up (${JSON.stringify(exited)})`);
  try {
    const r = await fetch(`${base}/healthz`);
    if (r.status === 200) break;
  } catch {}
  if (Date.now() > deadline) fail('no 200 from /healthz within 20 s');
  await new Promise((r) => setTimeout(r, 200));
}

try {
  const secret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();
  const created = await fetch(`${base}/api/publish_token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'smoke', streams: [{ streamName: 'cam1' }] }),
  });
  if (created.status !== 200) fail(`token create answered ${created.status}: ${await created.text()}`);
  const { token } = (await created.json()).data;
  const ask = (body) =>
    fetch(`${base}/hooks/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const allowed = await ask({ action: 'publish', token, streamName: 'cam1', protocol: 'rtmp' });
  if (allowed.status !== 200 || (await allowed.json()).allowed !== true) fail(`the decision for a valid token was not an allow (${allowed.status})`);
  const refused = await ask({ action: 'publish', token, streamName: 'other', protocol: 'rtmp' });
  if (refused.status !== 403) fail(`a name outside the token was answered ${refused.status}, not 403`);
} catch (e) {
  child.kill('SIGKILL');
  fail(String(e));
}

child.kill('SIGTERM');
const stopBy = Date.now() + 15_000;
while (!exited && Date.now() < stopBy) await new Promise((r) => setTimeout(r, 100));
if (!exited) {
  child.kill('SIGKILL');
  fail('no exit within 15 s of SIGTERM');
}
if (exited.code !== 0) fail(`exit ${JSON.stringify(exited)} after SIGTERM, expected 0`);
rmSync(dataDir, { recursive: true, force: true });
console.log(`smoke: dist/main.js served /healthz, a token, an allow and a refusal, and stopped cleanly`);
