// Store failures are types: each backend turns its driver's "did not answer" errors into
// StoreUnavailable, compare-and-set gives up after a bound with StoreConflict, and the HTTP error
// handler maps the types (never an error's text) to answers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { pino } from 'pino';
import { StoreConflict, StoreUnavailable } from '../../src/errors.js';
import { compareAndSet, typeStoreFailures } from '../../src/store/failures.js';
import { isRedisUnavailable } from '../../src/store/redis/failures.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { errorHandler } from '../../src/http/middleware.js';
import type { Store } from '../../src/store/store.js';

const named = (name: string, message: string, code?: string): Error => Object.assign(new Error(message), { name }, code ? { code } : {});

describe('isRedisUnavailable', () => {
  const cases: Array<[Error | string, boolean]> = [
    [new Error('Command timed out'), true],
    [new Error('Connection is closed.'), true],
    [new Error("Stream isn't writeable and enableOfflineQueue options is false"), true],
    [named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 1).'), true],
    [named('ClusterAllFailedError', 'Failed to refresh slots cache.'), true],
    [named('Error', 'connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), true],
    [named('ReplyError', "READONLY You can't write against a read only replica."), true],
    [named('ReplyError', 'LOADING Redis is loading the dataset in memory'), true],
    [named('ReplyError', 'CLUSTERDOWN The cluster is down'), true],
    [named('ReplyError', 'ERR unknown command'), false],
    [named('ReplyError', 'WRONGTYPE Operation against a key holding the wrong kind of value'), false],
    [new TypeError("Cannot read properties of undefined (reading 'x')"), false],
    ['Command timed out', false],
  ];
  for (const [e, expected] of cases) {
    it(`${typeof e === 'string' ? `string ${e}` : `${e.name}: ${e.message}`} → ${expected}`, () => {
      assert.equal(isRedisUnavailable(e), expected);
    });
  }
});

describe('typeStoreFailures', () => {
  const fake = (fail: unknown, sync = false) => {
    const store = {
      async getMeta(): Promise<string | null> {
        throw fail;
      },
      setMeta(): Promise<boolean> {
        if (sync) throw fail;
        return Promise.resolve(true);
      },
      async ping(): Promise<void> {},
    } as unknown as Store;
    typeStoreFailures(store, (e) => e instanceof Error && e.message === 'down');
    return store;
  };

  it('an unavailable driver rejects as StoreUnavailable with the driver error as its cause', async () => {
    const cause = new Error('down');
    const err = await fake(cause).getMeta('k').then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof StoreUnavailable);
    assert.equal(err.cause, cause);
    assert.equal(err.publicMessage, 'Store unavailable; retry');
  });

  it('a synchronous throw rejects the same way', async () => {
    await assert.rejects(fake(new Error('down'), true).setMeta('k', 'v'), StoreUnavailable);
  });

  it('any other error passes unchanged, and results pass untouched', async () => {
    const other = new Error('bug');
    await assert.rejects(fake(other).getMeta('k'), (e) => e === other);
    const conflict = new StoreConflict('token 1', 3);
    await assert.rejects(fake(conflict).getMeta('k'), (e) => e === conflict);
    assert.equal(await fake(other).setMeta('k', 'v'), true);
    assert.equal(await fake(other).ping(), undefined);
  });
});

describe('compareAndSet', () => {
  it('runs the step again on retry and settles with its value', async () => {
    let calls = 0;
    assert.equal(await compareAndSet('x', 5, async () => (++calls < 3 ? 'retry' : { done: 'ok' })), 'ok');
    assert.equal(calls, 3);
  });

  it('settles with null or false values too', async () => {
    assert.equal(await compareAndSet('x', 1, async () => ({ done: null })), null);
    assert.equal(await compareAndSet('x', 1, async () => ({ done: false })), false);
  });

  it('gives up after the bound with StoreConflict, having tried exactly that often', async () => {
    let calls = 0;
    await assert.rejects(
      compareAndSet('token 9', 4, async () => {
        calls++;
        return 'retry';
      }),
      (e) => e instanceof StoreConflict && e.message === 'token 9: too much write contention (4 attempts)',
    );
    assert.equal(calls, 4);
  });
});

describe('SQLite locked past its busy timeout', () => {
  it('a write rejects as StoreUnavailable, and succeeds once the lock is gone', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-busy-')), 'db');
    const holder = new SqliteStore({ file, synchronous: 'NORMAL' });
    const writer = new SqliteStore({ file, synchronous: 'NORMAL' });
    // the connection's database handle (src/store/sqlite/connection.ts), which the store keeps private
    const db = (s: SqliteStore) => (s as unknown as { c: { db: { exec(sql: string): void; pragma(p: string): unknown } } }).c.db;
    db(writer).pragma('busy_timeout = 0');
    db(holder).exec('BEGIN IMMEDIATE');
    const account = { id: 'AAAAAA', name: 'a', createdOn: '2026-01-01T00:00:00.000Z', secureViewer: false };
    await assert.rejects(writer.createAccount(account), (e) => e instanceof StoreUnavailable && (e.cause as { code?: string }).code === 'SQLITE_BUSY');
    db(holder).exec('ROLLBACK');
    assert.deepEqual(await writer.createAccount(account), account);
    await holder.close();
    await writer.close();
  });
});

describe('errorHandler', () => {
  const answer = async (err: unknown) => {
    const app = express();
    app.get('/x', () => {
      throw err;
    });
    app.use(errorHandler(pino({ level: 'silent' })));
    const res = await request(app).get('/x');
    return [res.status, res.body] as const;
  };

  it('StoreUnavailable → 503 with its public message only', async () => {
    assert.deepEqual(await answer(new StoreUnavailable(new Error('connect ECONNREFUSED 10.0.0.5:6379'))), [503, { status: 'fail', data: { message: 'Store unavailable; retry' } }]);
    const waited = 'Write not confirmed by 1 replica(s) within 50 ms; retry';
    assert.deepEqual(await answer(new StoreUnavailable(new Error(waited), waited)), [503, { status: 'fail', data: { message: waited } }]);
  });

  it('StoreConflict → 503', async () => {
    assert.deepEqual(await answer(new StoreConflict('token 1', 100)), [503, { status: 'fail', data: { message: 'Store unavailable; retry' } }]);
  });

  it('an untyped error is a 500 whatever its text says', async () => {
    assert.deepEqual(await answer(new Error('Command timed out')), [500, { status: 'error', message: 'Internal error', code: 500 }]);
  });
});
