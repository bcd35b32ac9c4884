// `streamgate keys rotate viewer` rotates the key of HTTP viewer credentials in the store the server
// uses (docs/callers.md#http-viewer-sessions, Keys); `keys rotate` alone stays the director's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CREDENTIAL_KEYS_META, parseCredentialKeys } from '../../src/sessions/credential-keys.js';
import { SIGNING_KEYS_META } from '../../src/director/keys.js';

describe('streamgate keys rotate viewer', () => {
  it('makes a new viewer credential key and keeps the old one as previous; the director keys are untouched', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-keys-'));
    const env = { STREAMGATE_DATA_DIR: dir };
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
    assert.equal(await runCli(['keys', 'rotate', 'viewer'], io, env), 0);
    assert.equal(await runCli(['keys', 'rotate', 'viewer'], io, env), 0);
    const [first, second] = out.map((l) => JSON.parse(l) as { id: string; previousId?: string });
    assert.deepEqual([first.previousId, second.previousId], [undefined, first.id]);
    const store = new SqliteStore({ file: path.join(dir, 'streamgate.db') });
    try {
      const keys = parseCredentialKeys((await store.getMeta(CREDENTIAL_KEYS_META))!);
      assert.deepEqual([keys.current.id, keys.previous?.id], [second.id, first.id]);
      assert.equal(await store.getMeta(SIGNING_KEYS_META), null, 'the director keys are another command');
    } finally {
      await store.close();
    }
    assert.equal(await runCli(['keys', 'rotate', 'other'], io, env), 2);
    assert.match(err.at(-1)!, /unknown command 'keys rotate other'/);
  });
});
