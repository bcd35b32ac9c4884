// `streamgate store session-records [compact|json]`: shows and switches the form a Redis store
// writes session records in (docs/operations.md, The record's form); the embedded store has none.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

describe('streamgate store session-records', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });
  const run = async (args: string[], env: Record<string, string>) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { out: (s) => out.push(s), err: (s) => err.push(s) }, env);
    return { code, out, err };
  };

  it('a store whose first account the CLI creates writes rows; the form is shown and switched', async () => {
    const env = { REDIS_URL: server.url, STREAMGATE_REDIS_KEYPREFIX: server.prefix() };
    assert.equal((await run(['accounts', 'create', '--name', 'first'], env)).code, 0);
    assert.deepEqual(await run(['store', 'session-records'], env), { code: 0, out: ['{"sessionRecords":"compact"}'], err: [] });
    assert.deepEqual(await run(['store', 'session-records', 'json'], env), { code: 0, out: ['{"sessionRecords":"json"}'], err: [] });
    assert.deepEqual(await run(['store', 'session-records'], env), { code: 0, out: ['{"sessionRecords":"json"}'], err: [] });
    assert.deepEqual(await run(['store', 'session-records', 'compact'], env), { code: 0, out: ['{"sessionRecords":"compact"}'], err: [] });
  });

  it('a form other than compact or json is a usage error that changes nothing', async () => {
    const env = { REDIS_URL: server.url, STREAMGATE_REDIS_KEYPREFIX: server.prefix() };
    assert.equal((await run(['store', 'session-records', 'json'], env)).code, 0);
    const bad = await run(['store', 'session-records', 'rows'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.err[0], /store session-records takes compact or json, not 'rows'/);
    assert.deepEqual((await run(['store', 'session-records'], env)).out, ['{"sessionRecords":"json"}']);
  });

  it('the embedded store refuses it, naming why', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-records-'));
    try {
      const r = await run(['store', 'session-records', 'compact'], { STREAMGATE_DATA_DIR: dir });
      assert.deepEqual(r, {
        code: 1,
        out: [],
        err: ['streamgate: store session-records: the embedded store keeps session records in SQLite rows, in one form; the setting is for a Redis store (REDIS_URL)'],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
