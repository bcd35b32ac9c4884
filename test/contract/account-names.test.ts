// Account names are unique (docs/api.md#account-names) from this build on. Stores written by earlier
// builds may hold accounts that share a name: they keep starting, those accounts keep their names,
// a new account or a rename may not take such a name, and either account may be renamed to a free
// one; the start names them in one warning. On Redis, a create or rename interrupted between its
// name claim and its confirmation holds the name off for its deadline only
// (docs/architecture.md#account-names).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { NAME_TAKING_MS } from '../../src/store/redis/accounts.js';
import type { Account, Store } from '../../src/store/store.js';
import { loadConfig } from '../../src/config/load.js';
import { createServices } from '../../src/services.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const account = (id: string, name: string, at = 0): Account => ({ id, name, createdOn: new Date(NOW + at).toISOString(), secureViewer: false });
const taken = { name: 'AccountNameTaken' };
const names = async (s: Store) => (await s.listAccounts()).map((a) => [a.id, a.name]);

/**
 * The rules on a store holding AAAAAA "acme" and BBBBBB "ACME " from an earlier build (and CCCCCC
 * "other"): both keep their names, no other account takes it, either may be renamed.
 */
async function sharedNameRules(s: Store): Promise<void> {
  assert.deepEqual(await names(s), [
    ['AAAAAA', 'acme'],
    ['BBBBBB', 'ACME '],
    ['CCCCCC', 'other'],
  ]);
  await assert.rejects(s.createAccount(account('DDDDDD', 'Acme', 3)), taken);
  await assert.rejects(s.updateAccount('CCCCCC', { name: 'acme' }), taken);
  // each keeps its name, in any case
  assert.equal((await s.updateAccount('AAAAAA', { name: 'Acme' }))?.name, 'Acme');
  assert.equal((await s.updateAccount('BBBBBB', { name: 'ACME', secureViewer: true }))?.name, 'ACME');
  // one renamed to a free name; the other still holds the name
  assert.equal((await s.updateAccount('BBBBBB', { name: 'acme west' }))?.name, 'acme west');
  await assert.rejects(s.createAccount(account('DDDDDD', 'acme', 3)), taken);
  await assert.rejects(s.updateAccount('BBBBBB', { name: 'acme' }), taken);
  // both renamed: the name is free
  assert.equal((await s.updateAccount('AAAAAA', { name: 'acme east' }))?.name, 'acme east');
  await s.createAccount(account('DDDDDD', 'ACME', 3));
  assert.deepEqual(await names(s), [
    ['AAAAAA', 'acme east'],
    ['BBBBBB', 'acme west'],
    ['CCCCCC', 'other'],
    ['DDDDDD', 'ACME'],
  ]);
}

/** The start's warnings about shared names, on a store holding them. */
async function startWarnings(store: Store): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  const services = await createServices(loadConfig({ env: {}, overrides: { log: { level: 'warn' } } }), { store, logger: createLogger('warn', sink) });
  await services.close();
  return lines.filter((l) => String(l.msg).includes('share names')).map(({ accountIds, msg }) => ({ accountIds, msg }));
}

const WARNING = 'accounts share names (given before names were unique): they keep them, and no other account may take them; rename all but one to end it';

describe('account names: a SQLite file of an earlier build', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-names-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A file as an earlier build (user_version 3) left it: no name keys, two accounts of one name. */
  async function earlierFile(name: string): Promise<string> {
    const file = path.join(dir, name);
    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    await s.createAccount(account('AAAAAA', 'acme'));
    await s.createAccount(account('BBBBBB', 'bravo', 1));
    await s.createAccount(account('CCCCCC', 'other', 2));
    await s.close();
    const raw = new Database(file);
    raw.exec("DROP INDEX accounts_by_name_key; ALTER TABLE accounts DROP COLUMN name_key; UPDATE accounts SET name = 'ACME ' WHERE id = 'BBBBBB'");
    raw.pragma('user_version = 3');
    raw.close();
    return file;
  }

  it('opens: both accounts keep the name, no other account takes it, and either may be renamed', async () => {
    const s = new SqliteStore({ file: await earlierFile('rules.db'), synchronous: 'NORMAL' });
    try {
      await sharedNameRules(s);
    } finally {
      await s.close();
    }
  });

  it('the start names the accounts in one warning, and none once they are renamed', async () => {
    const file = await earlierFile('warned.db');
    assert.deepEqual(await startWarnings(new SqliteStore({ file, synchronous: 'NORMAL' })), [{ accountIds: [['AAAAAA', 'BBBBBB']], msg: WARNING }]);
    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    await s.updateAccount('BBBBBB', { name: 'bravo' });
    await s.close();
    assert.deepEqual(await startWarnings(new SqliteStore({ file, synchronous: 'NORMAL' })), []);
  });
});

describe('account names: Redis data of an earlier build', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  async function client(keyPrefix: string): Promise<Redis> {
    const c = new Redis(server.url, { keyPrefix, enableOfflineQueue: false, lazyConnect: true });
    await c.connect();
    return c;
  }

  /** Data as an earlier build left it: no name claims, two accounts of one name. Answers its key prefix. */
  async function earlierData(): Promise<string> {
    const prefix = server.prefix();
    const s = new RedisStore(await client(prefix), {});
    await s.createAccount(account('AAAAAA', 'acme'));
    await s.createAccount(account('BBBBBB', 'bravo', 1));
    await s.createAccount(account('CCCCCC', 'other', 2));
    await s.close();
    const raw = await client(prefix);
    assert.equal(await raw.del('aname:acme', 'aname:bravo', 'aname:other', 'meta:account-names'), 4);
    await raw.hset('{a:BBBBBB}:account', 'name', 'ACME ');
    raw.disconnect();
    return prefix;
  }

  it('after upgrade(): both accounts keep the name, no other account takes it, and either may be renamed', async () => {
    const s = new RedisStore(await client(await earlierData()), {});
    await s.upgrade();
    assert.equal(await s.getMeta('account-names'), '1');
    await sharedNameRules(s);
    await s.close();
  });

  it('without upgrade() (a CLI command), the first name write claims the names of earlier accounts first', async () => {
    const s = new RedisStore(await client(await earlierData()), {});
    await sharedNameRules(s);
    await s.close();
  });

  it('the start names the accounts in one warning', async () => {
    assert.deepEqual(await startWarnings(new RedisStore(await client(await earlierData()), {})), [{ accountIds: [['AAAAAA', 'BBBBBB']], msg: WARNING }]);
  });
});

describe('account names on Redis: a create interrupted between its claim and its confirmation', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  let client: Redis;
  async function store(now: () => number): Promise<RedisStore> {
    client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    return new RedisStore(client, { now });
  }

  /** Claims `name` for `id` as a create does before writing its record (the script the store defined), and stops there. */
  async function claimOnly(id: string, name: string, at: number): Promise<void> {
    const run = client as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>;
    assert.equal(await run.accountNameClaim(`aname:${name}`, id, 'n1', at, at + NAME_TAKING_MS, '', '0'), 1);
  }

  it('before writing its record: the name is refused until the deadline, then free', async () => {
    let now = NOW;
    const s = await store(() => now);
    await s.upgrade();
    await claimOnly('GHOST1', 'ghost', now);
    await assert.rejects(s.createAccount(account('AAAAAA', 'Ghost')), { name: 'AccountNameTaken', heldBy: 'GHOST1' });
    now += NAME_TAKING_MS - 1;
    await assert.rejects(s.createAccount(account('AAAAAA', 'Ghost')), { name: 'AccountNameTaken', heldBy: 'GHOST1' });
    now += 1;
    await s.createAccount(account('AAAAAA', 'Ghost'));
    assert.deepEqual(await names(s), [['AAAAAA', 'Ghost']]);
    await assert.rejects(s.createAccount(account('BBBBBB', 'ghost')), { name: 'AccountNameTaken', heldBy: 'AAAAAA' });
    await s.close();
  });

  it('after writing its record: past the deadline the record holds the name', async () => {
    let now = NOW;
    const s = await store(() => now);
    await s.upgrade();
    await claimOnly('HALF01', 'half', now);
    await s.createAccount(account('HALF01', 'other name'));
    // the record as the interrupted create wrote it, without confirming its claim
    await client.hset('{a:HALF01}:account', 'name', 'half');
    now += NAME_TAKING_MS;
    await assert.rejects(s.createAccount(account('AAAAAA', 'HALF')), { name: 'AccountNameTaken', heldBy: 'HALF01' });
    assert.deepEqual(await names(s), [['HALF01', 'half']]);
    await s.close();
  });
});
