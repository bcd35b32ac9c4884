// What a deployment gets without configuring anything, and what it must say to open up: loopback
// unless told otherwise, no reachable hooks without a hook secret, and warnings an operator sees
// (start-up log and /readyz) for settings that leave a door open.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ROOT, runNode, startServer, type RunningServer } from '../helpers/process.js';
import { OPEN_HOOKS_WARNING, SHARED_PATHS_WARNING } from '../../src/observability/warnings.js';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'sg-safe-'));
const ADMIN = 'admin-key-for-the-safe-defaults-test-0123';

async function stop(s: RunningServer) {
  s.proc.kill('SIGTERM');
  return s.exited;
}

const warnings = (s: RunningServer) =>
  s.logs.flatMap((l) => l.split('\n')).flatMap((l) => {
    try {
      const j = JSON.parse(l) as { level?: number; msg?: string };
      return j.level === 40 && j.msg ? [j.msg] : [];
    } catch {
      return [];
    }
  });

describe('safe defaults', () => {
  it('with no HOST listens on loopback only', async () => {
    // startServer sets HOST; this start leaves it unset, as `npm start` on a fresh machine does.
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', STREAMGATE_DATA_DIR: tmp() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const listening = await new Promise<{ host: string; port: number }>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`no listening line: ${buf}`)), 20000);
      proc.stdout.on('data', (b: Buffer) => {
        buf += b.toString();
        for (const line of buf.split('\n')) {
          try {
            const j = JSON.parse(line) as { msg?: string; host: string; port: number };
            if (j.msg === 'listening') {
              clearTimeout(timer);
              resolve(j);
            }
          } catch {
            /* partial line */
          }
        }
      });
    });
    try {
      assert.equal(listening.host, '127.0.0.1');
      const r = await fetch(`http://127.0.0.1:${listening.port}/healthz`);
      assert.equal(r.status, 200);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.on('exit', r));
    }
  });

  it('refuses to start on every interface without a hook secret, naming the ways out (exit 2)', async () => {
    const r = await runNode(['--import', 'tsx', 'src/main.ts'], { PORT: '0', HOST: '0.0.0.0', STREAMGATE_DATA_DIR: tmp() });
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr.trim(),
      'streamgate: invalid configuration: hooks.secret: required when listening on 0.0.0.0 (reachable from other machines): set STREAMGATE_HOOK_SECRET (32+ characters), listen on 127.0.0.1, or set hooks.allowUnauthenticated: true to leave /hooks/* open',
    );
  });

  it('refuses an admin key or a hook secret shorter than 32 characters (exit 2)', async () => {
    const admin = await runNode(['--import', 'tsx', 'src/main.ts'], { PORT: '0', STREAMGATE_DATA_DIR: tmp(), STREAMGATE_ADMIN_KEY: 'admin-key-31-characters-long-xx' });
    assert.deepEqual([admin.code, admin.stderr.trim()], [2, 'streamgate: invalid configuration: adminKey (from STREAMGATE_ADMIN_KEY): must be empty (off) or at least 32 characters']);
    const hook = await runNode(['--import', 'tsx', 'src/main.ts'], { PORT: '0', STREAMGATE_DATA_DIR: tmp(), STREAMGATE_HOOK_SECRET: 'hunter2' });
    assert.deepEqual([hook.code, hook.stderr.trim()], [2, 'streamgate: invalid configuration: hooks.secret (from STREAMGATE_HOOK_SECRET): must be empty (off) or at least 32 characters']);
  });

  it('on every interface with hooks.allowUnauthenticated: starts, warns at start and in /readyz', async () => {
    const s = await startServer({ HOST: '0.0.0.0', STREAMGATE_HOOKS_ALLOWUNAUTHENTICATED: 'true', STREAMGATE_DATA_DIR: tmp() });
    try {
      assert.deepEqual(warnings(s), [OPEN_HOOKS_WARNING]);
      const r = await fetch(`${s.base}/readyz`);
      assert.deepEqual(await r.json(), { status: 'success', data: { ready: true, store: 'sqlite', warnings: [OPEN_HOOKS_WARNING] } });
    } finally {
      assert.equal(await stop(s), 0);
    }
  });

  it('with a hook secret on every interface: no warning, hooks closed to callers without it', async () => {
    const secret = 'hook-secret-for-the-safe-defaults-0123';
    const s = await startServer({ HOST: '0.0.0.0', STREAMGATE_HOOK_SECRET: secret, STREAMGATE_DATA_DIR: tmp() });
    try {
      assert.deepEqual(warnings(s), []);
      const r = await fetch(`${s.base}/readyz`);
      assert.deepEqual(await r.json(), { status: 'success', data: { ready: true, store: 'sqlite' } });
      const forged = await fetch(`${s.base}/hooks/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(forged.status, 401);
    } finally {
      assert.equal(await stop(s), 0);
    }
  });

  it('warns when several accounts share media-server paths (accountInPath off), at start and in /readyz', async () => {
    const dir = tmp();
    const s = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_ADMIN_KEY: ADMIN });
    try {
      assert.deepEqual(warnings(s), [], 'one account: nothing to warn about');
      assert.deepEqual(await (await fetch(`${s.base}/readyz`)).json(), { status: 'success', data: { ready: true, store: 'sqlite' } });
      const created = await fetch(`${s.base}/admin/accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: '{"name":"second"}',
      });
      assert.equal(created.status, 201);
      assert.deepEqual(await (await fetch(`${s.base}/readyz`)).json(), {
        status: 'success',
        data: { ready: true, store: 'sqlite', warnings: [SHARED_PATHS_WARNING] },
      });
    } finally {
      assert.equal(await stop(s), 0);
    }
    const again = await startServer({ STREAMGATE_DATA_DIR: dir });
    try {
      assert.deepEqual(warnings(again), [SHARED_PATHS_WARNING], 'a restart with two accounts warns at start');
    } finally {
      assert.equal(await stop(again), 0);
    }
    const tenants = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_HOOKS_ACCOUNTINPATH: 'true' });
    try {
      assert.deepEqual(warnings(tenants), [], 'accountInPath: paths name the account');
    } finally {
      assert.equal(await stop(tenants), 0);
    }
  });
});
