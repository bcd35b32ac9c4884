// `streamgate accounts create --name` refuses a name another account has, as the admin API does
// (docs/operations.md#accounts): exit code 1, a message naming the name and the account, nothing
// created.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli.js';

describe('streamgate accounts create', () => {
  it('refuses a name another account has, whatever its case and the white space around it, with exit code 1', async () => {
    const env = { STREAMGATE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'sg-accounts-cli-')) };
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
    assert.equal(await runCli(['accounts', 'create', '--name', ' Acme '], io, env), 0);
    const acme = JSON.parse(out[0]) as { id: string; name: string };
    assert.equal(acme.name, 'Acme', 'stored without the white space around it');
    err.length = 0; // the warning that the store is new
    for (const name of ['acme', 'ACME ']) {
      assert.equal(await runCli(['accounts', 'create', '--name', name], io, env), 1);
      assert.deepEqual(err.splice(0), [
        `streamgate: accounts create: account name ${JSON.stringify(name.trim())} is taken by account ${acme.id}; account names are unique (compared without case and surrounding white space)`,
      ]);
    }
    assert.equal(out.length, 1, 'no account was answered');
    assert.equal(await runCli(['accounts', 'list'], io, env), 0);
    assert.deepEqual(out.slice(1).map((l) => (JSON.parse(l) as { id: string }).id), [acme.id]);
    assert.equal(await runCli(['accounts', 'create', '--name', 'Acme 2'], io, env), 0);
  });

  it('refuses a blank name as a usage error', async () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (s: string) => err.push(s) };
    assert.equal(await runCli(['accounts', 'create', '--name', '  '], io, { STREAMGATE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'sg-accounts-cli-')) }), 2);
    assert.match(err[0], /^streamgate: accounts create needs --name <name> \(not blank\)\n/);
  });
});
