// The data directory holds token values (the embedded store) and the first start's API secret: a
// real process (and the CLI) makes it 0700 and every file in it 0600, through writes and restarts;
// it narrows a directory it made should it be widened, and leaves one it did not make as it found
// it, warning at start and in /readyz while other users can enter it (docs/operations.md#the-data-directory).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runNode, startServer, type RunningServer } from '../helpers/process.js';
import { CREATED_MARKER, dataDirWarning } from '../../src/store/data-dir.js';

const mode = (p: string) => statSync(p).mode & 0o777;
/** Every entry of the directory with its mode, in octal. */
const modes = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((f) => [f, mode(path.join(dir, f)).toString(8)]));
/** The embedded store, its decision history beside it (docs/api.md#decision-history), the audit key and the first start's secret. */
const STORE_FILES = {
  'audit-key': '600',
  'default-api-secret': '600',
  'streamgate-history.db': '600',
  'streamgate-history.db-shm': '600',
  'streamgate-history.db-wal': '600',
  'streamgate.db': '600',
  'streamgate.db-shm': '600',
  'streamgate.db-wal': '600',
};

const warnings = (s: RunningServer) =>
  s.logs.flatMap((l) => l.split('\n')).flatMap((l) => {
    try {
      const j = JSON.parse(l) as { level?: number; msg?: string };
      return j.level === 40 && j.msg ? [j.msg] : [];
    } catch {
      return [];
    }
  });

async function stop(s: RunningServer) {
  s.proc.kill('SIGTERM');
  await s.exited;
}

async function readyz(s: RunningServer) {
  const r = await fetch(`${s.base}/readyz`);
  return { status: r.status, body: await r.json() };
}

/** Writes of every kind the store takes here: a token, and an RTMP play and its end. */
async function write(s: RunningServer, dir: string, n: number) {
  const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
  const r = await fetch(`${s.base}/api/publish_token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: `t${n}`, streams: [{ streamName: `cam${n}` }] }),
  });
  assert.equal(r.status, 200);
  for (const call of ['play', 'play_done']) {
    const h = await fetch(`${s.base}/hooks/nginx-rtmp`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `app=live&addr=127.0.0.1&clientid=${n}&call=${call}&name=open${n}`,
    });
    assert.equal(h.status, 200);
  }
}

const made: string[] = [];
/** A fresh parent directory (0700, from mkdtemp) for a data directory `name` inside it. */
function inFreshParent(name: string): string {
  const parent = mkdtempSync(path.join(tmpdir(), 'sg-datadir-'));
  made.push(parent);
  return path.join(parent, name);
}

describe('the data directory', () => {
  after(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('a fresh one is made 0700 with every file 0600, after start, after writes and after a restart; widened, it is narrowed again', async () => {
    const dir = inFreshParent('data');
    const env = { STREAMGATE_DATA_DIR: dir };
    const expected = { [CREATED_MARKER]: '600', ...STORE_FILES };
    const s = await startServer(env);
    try {
      assert.equal(mode(dir), 0o700);
      assert.deepEqual(modes(dir), expected, 'after start');
      await write(s, dir, 1);
      assert.deepEqual(modes(dir), expected, 'after writes');
      assert.deepEqual(await readyz(s), { status: 200, body: { status: 'success', data: { ready: true, store: 'sqlite' } } });
      assert.deepEqual(warnings(s), []);
    } finally {
      await stop(s);
    }
    // the closed store removed its log; the next start makes it again, with the store file's mode
    chmodSync(dir, 0o755);
    const again = await startServer(env);
    try {
      assert.equal(mode(dir), 0o700, 'the directory Streamgate made is narrowed back at start');
      await write(again, dir, 2);
      assert.deepEqual(modes(dir), expected, 'after a restart and writes');
      assert.deepEqual(warnings(again), []);
    } finally {
      await stop(again);
    }
  });

  it('an existing 0755 directory Streamgate did not make stays 0755, with a warning at start and in /readyz; the files it makes there are 0600', async () => {
    const dir = inFreshParent('volume');
    mkdirSync(dir);
    chmodSync(dir, 0o755); // as a volume or an operator's mkdir leaves it
    const warning = dataDirWarning(dir);
    assert.equal(
      warning,
      "dataDir: the data directory is open to other users (mode 0755): they can read the store's token values and the first start's API secret wherever those files' modes allow; chmod 700 it (Streamgate narrows only a data directory it created itself)",
    );
    const s = await startServer({ STREAMGATE_DATA_DIR: dir });
    try {
      await write(s, dir, 1);
      assert.equal(mode(dir), 0o755, 'left as it was found');
      assert.deepEqual(modes(dir), STORE_FILES, 'no marker: Streamgate did not make it');
      assert.deepEqual(warnings(s), [warning]);
      assert.deepEqual(await readyz(s), { status: 200, body: { status: 'success', data: { ready: true, store: 'sqlite', warnings: [warning] } } });
      chmodSync(dir, 0o750); // the operator narrows it: /readyz says so at once
      assert.deepEqual(await readyz(s), { status: 200, body: { status: 'success', data: { ready: true, store: 'sqlite' } } });
    } finally {
      await stop(s);
    }
  });

  it('the CLI makes a missing data directory 0700 and the store file 0600', async () => {
    const dir = inFreshParent('data');
    const r = await runNode(['--import', 'tsx', 'src/cli.ts', 'accounts', 'create', '--name', 'acme'], { STREAMGATE_DATA_DIR: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(mode(dir), 0o700);
    // the audit log's key, made beside the store as the server makes it (docs/operations.md#audit-log)
    assert.deepEqual(modes(dir), { [CREATED_MARKER]: '600', 'audit-key': '600', 'streamgate.db': '600' });
  });
});
