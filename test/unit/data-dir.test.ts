// The data directory's permissions (src/store/data-dir.ts): what Streamgate makes is its user's
// alone, what it finds keeps its mode, and the warning names a directory other users can enter.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CREATED_MARKER, dataDirWarning, ensurePrivateDir, ensurePrivateFile } from '../../src/store/data-dir.js';

const mode = (p: string) => statSync(p).mode & 0o777;
const made: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'sg-data-dir-'));
  made.push(d);
  return d;
};

describe('data directory permissions', () => {
  after(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });

  it('makes a missing directory (and missing parents) 0700, with a 0600 marker in the data directory alone', () => {
    const parent = path.join(tmp(), 'a');
    const dir = path.join(parent, 'b');
    ensurePrivateDir(dir);
    assert.equal(mode(parent), 0o700);
    assert.equal(mode(dir), 0o700);
    assert.equal(mode(path.join(dir, CREATED_MARKER)), 0o600);
    assert.equal(existsSync(path.join(parent, CREATED_MARKER)), false);
  });

  it('narrows a directory it made back to 0700, and leaves one it did not make as it is', () => {
    const made = path.join(tmp(), 'made');
    ensurePrivateDir(made);
    chmodSync(made, 0o755);
    ensurePrivateDir(made);
    assert.equal(mode(made), 0o700);

    const found = path.join(tmp(), 'found');
    mkdirSync(found);
    for (const m of [0o755, 0o750, 0o777]) {
      chmodSync(found, m);
      ensurePrivateDir(found);
      assert.equal(mode(found), m);
      assert.equal(existsSync(path.join(found, CREATED_MARKER)), false);
    }
  });

  it('refuses a directory that cannot be made, naming it, instead of retrying for ever', () => {
    // /proc exists and refuses a new directory with ENOENT, where Node's recursive mkdir loops
    assert.throws(() => ensurePrivateDir('/proc/streamgate-data/db'), {
      message: 'cannot create the data directory /proc/streamgate-data/db (dataDir / STREAMGATE_DATA_DIR): ENOENT making /proc/streamgate-data',
    });
    const file = path.join(tmp(), 'a-file');
    writeFileSync(file, '');
    assert.throws(() => ensurePrivateDir(path.join(file, 'sub')), { message: `cannot create the data directory ${path.join(file, 'sub')} (dataDir / STREAMGATE_DATA_DIR): ENOTDIR making ${path.join(file, 'sub')}` });
  });

  it('creates a missing file empty and 0600, and leaves an existing one (its mode and content) alone', () => {
    const dir = tmp();
    const fresh = path.join(dir, 'fresh');
    ensurePrivateFile(fresh);
    assert.equal(mode(fresh), 0o600);
    assert.equal(readFileSync(fresh, 'utf8'), '');
    const old = path.join(dir, 'old');
    writeFileSync(old, 'kept');
    chmodSync(old, 0o644);
    ensurePrivateFile(old);
    assert.equal(mode(old), 0o644);
    assert.equal(readFileSync(old, 'utf8'), 'kept');
  });

  it('warns about a directory other users can enter, list or write, and only then', () => {
    const dir = tmp();
    const expected = (m: string) =>
      `dataDir: the data directory is open to other users (mode ${m}): they can read the store's token values and the first start's API secret wherever those files' modes allow; chmod 700 it (Streamgate narrows only a data directory it created itself)`;
    const cases: Array<[number, string | undefined]> = [
      [0o700, undefined],
      [0o750, undefined],
      [0o770, undefined],
      [0o755, expected('0755')],
      [0o701, expected('0701')],
      [0o702, expected('0702')],
      [0o777, expected('0777')],
    ];
    for (const [m, want] of cases) {
      chmodSync(dir, m);
      assert.equal(dataDirWarning(dir), want, m.toString(8));
    }
    chmodSync(dir, 0o700);
    assert.equal(dataDirWarning(path.join(dir, 'missing')), undefined);
  });
});
