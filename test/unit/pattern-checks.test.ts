// Stream patterns of API writes: the cost check on the event loop, RE2's compile on worker threads.
// The 400 lists the same fields with the same messages as the synchronous check; a full queue and a
// dead worker answer 503 with Retry-After; the pool closes.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { PatternChecks } from '../../src/patterns/pattern-checks.js';
import { tokenSchemas, type PatternCheck } from '../../src/http/management/schemas.js';
import { webhookSchemas } from '../../src/http/management/webhooks.routes.js';
import { parseOr400Async } from '../../src/http/validation.js';
import { streamPatternProblem } from '../../src/domain/matchers.js';
import { ApiError } from '../../src/errors.js';
import { heavy } from '../helpers/pattern-load.js';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp } from '../helpers/app.js';

// The messages as the synchronous check words them, written out.
const RE2 = 'not a valid regular expression for the RE2 engine (no backreferences or look-around): ';
const OVER_COST = (cost: number) =>
  `too large for the RE2 engine: Unicode classes (\\pL), case-insensitive classes and counted repetitions ({400}) compile into a program too big to build on every change (cost ${cost} instructions, at most 2000); use + or *, fewer repetitions or an ASCII class such as [a-z]`;
const PROBE = 's0_0(?i:[Ͱ-Ͽ]){497}';

const mixed = {
  label: '',
  streams: [
    { streamName: 'cam[0-9]+', isRegex: true },
    { streamName: PROBE, isRegex: true },
    { streamName: 'a)|(.*', isRegex: true },
    { streamName: '\\Q', isRegex: true },
    { streamName: '(a)\\1', isRegex: true },
    { streamName: 'x(?=a)', isRegex: false },
    { streamName: heavy(1, 1), isRegex: true },
    { streamName: '\\pL', isRegex: true },
  ],
};
const MIXED_ERRORS = {
  label: ['Too small: expected string to have >=1 characters'],
  'streams[1].streamName': [OVER_COST(10441)],
  'streams[2].streamName': [`${RE2}unexpected ): a)|(.*`],
  'streams[3].streamName': [`${RE2}missing ): ^(?:\\Q)$`],
  'streams[4].streamName': [`${RE2}invalid escape sequence: \\1`],
  'streams[7].streamName': [OVER_COST(3522)],
};

async function errorsOf(p: Promise<unknown>): Promise<{ status: number; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    // As the client reads it: the error map is built on a null prototype.
    return { status: e.status, message: e.message, details: JSON.parse(JSON.stringify(e.details)) as Record<string, unknown> };
  }
  throw new Error('expected a refusal');
}

/** The pool, recording every batch it is asked to compile. */
function recorded(checks: PatternChecks): string[][] {
  const batches: string[][] = [];
  const compile = checks.compileProblems.bind(checks);
  checks.compileProblems = (patterns) => {
    batches.push(patterns);
    return compile(patterns);
  };
  return batches;
}

describe('stream patterns checked on worker threads', () => {
  const checks = new PatternChecks({ workers: 1, queue: 4 });
  after(() => checks.close());

  it('a mix of valid, over-cost and RE2-invalid patterns: the 400 the synchronous check gives, every field listed; the over-cost ones never reach a worker, the rest go as one batch', async () => {
    const batches = recorded(checks);
    const sync: PatternCheck = { problem: streamPatternProblem };
    const pooled = await errorsOf(parseOr400Async(tokenSchemas(checks).create('publish'), mixed, 'body'));
    assert.deepEqual(pooled, { status: 400, message: 'Validation errors', details: { errors: MIXED_ERRORS } });
    const before = await errorsOf(parseOr400Async(tokenSchemas(sync).create('publish'), mixed, 'body'));
    assert.deepEqual(pooled, before);
    assert.deepEqual(batches, [['cam[0-9]+', 'a)|(.*', '\\Q', '(a)\\1', heavy(1, 1)]]);
  });

  it('updates and webhook filters: the same messages at their own field paths', async () => {
    const update = {
      addTokenStreams: [{ streamName: 'x(?=a)', isRegex: true }, { streamName: 'ok.*', isRegex: true }],
      removeTokenStreams: ['plain', { streamName: PROBE, isRegex: true }],
    };
    assert.deepEqual(await errorsOf(parseOr400Async(tokenSchemas(checks).update('subscribe'), update, 'body')), {
      status: 400,
      message: 'Validation errors',
      details: {
        errors: {
          'addTokenStreams[0].streamName': [`${RE2}invalid perl operator: (?=`],
          'removeTokenStreams[1].streamName': [OVER_COST(10441)],
        },
      },
    });
    const webhook = { url: 'https://example.com/h', isFeedHooks: true, filter: 'cam(' };
    assert.deepEqual(await errorsOf(parseOr400Async(webhookSchemas(checks).create, webhook, 'body')), {
      status: 400,
      message: 'Validation errors',
      details: { errors: { filter: [`${RE2}missing ): cam(`] } },
    });
    const ok = await parseOr400Async(webhookSchemas(checks).update, { filter: 'cam[0-9]+' }, 'body');
    assert.deepEqual(ok, { filter: 'cam[0-9]+' });
  });

  it('a full queue refuses the next write with 503 and retryAfterSeconds; the queued ones are answered', async () => {
    const small = new PatternChecks({ workers: 1, queue: 2 });
    try {
      const batch = (k: number) => Array.from({ length: 100 }, (_, i) => heavy(k, i));
      const first = small.compileProblems(batch(1));
      const second = small.compileProblems(batch(2));
      assert.deepEqual(await errorsOf(small.compileProblems(batch(3))), {
        status: 503,
        message: 'Too many stream patterns are being validated; retry',
        details: { retryAfterSeconds: 1 },
      });
      assert.deepEqual(await first, Array(100).fill(null));
      assert.deepEqual(await second, Array(100).fill(null));
      assert.deepEqual(await small.compileProblems(batch(3)), Array(100).fill(null), 'room again once the queue drained');
    } finally {
      await small.close();
    }
  });

  it('a worker killed holding a write\'s compile: that write gets 503, the pool replaces the worker and checks the next write', async () => {
    const pool = new PatternChecks({ workers: 1, queue: 4 });
    try {
      assert.deepEqual(await pool.compileProblems(['a+']), [null]);
      const [worker] = pool.threads;
      // The worker is idle: the pool hands it the batch as the call is made, and it dies holding it.
      const long = pool.compileProblems(Array.from({ length: 400 }, (_, i) => heavy(9, i))).then(
        () => 'answered',
        (e: ApiError) => ({ status: e.status, message: e.message, details: e.details }),
      );
      await worker.terminate();
      assert.deepEqual(await long, { status: 503, message: 'Stream pattern validation failed to run; retry', details: { retryAfterSeconds: 1 } });
      assert.deepEqual(await pool.compileProblems(['cam(']), [`${RE2}missing ): cam(`]);
      assert.equal(pool.threads.length, 1);
      assert.notEqual(pool.threads[0], worker);
    } finally {
      await pool.close();
    }
  });

  it('close stops the workers; a check afterwards is a 503, never a hang', async () => {
    const pool = new PatternChecks({ workers: 2, queue: 4 });
    assert.deepEqual(await pool.compileProblems(['a+', 'b(']), [null, `${RE2}missing ): b(`]);
    assert.equal(pool.threads.length, 2);
    await pool.close();
    assert.equal(pool.threads.length, 0);
    assert.equal((await errorsOf(pool.compileProblems(['a+']))).status, 503);
  });
});

describe('over HTTP: a write refused for a full queue', () => {
  const factory = sqliteFactory();
  after(() => factory.teardown());

  it('answers 503 with Retry-After: 1 and stores nothing; the writes admitted are stored', async () => {
    await factory.setup();
    const t = await testApp(await factory.make(), { limits: { patternQueue: 1 } });
    try {
      const acct = await t.account();
      const auth = { authorization: `Bearer ${acct.secret}` };
      const body = (k: number) => ({ label: `w${k}`, streams: Array.from({ length: 100 }, (_, i) => ({ streamName: heavy(k, i), isRegex: true })) });
      const answers = await Promise.all([1, 2, 3, 4].map((k) => request(t.app).post('/api/publish_token').set(auth).send(body(k))));
      const refused = answers.filter((r) => r.status === 503);
      const created = answers.filter((r) => r.status === 200);
      assert.equal(refused.length + created.length, 4, JSON.stringify(answers.map((r) => r.status)));
      assert.ok(refused.length >= 1 && created.length >= 1, JSON.stringify(answers.map((r) => r.status)));
      for (const r of refused) {
        assert.equal(r.headers['retry-after'], '1');
        assert.deepEqual(r.body, { status: 'fail', data: { message: 'Too many stream patterns are being validated; retry', retryAfterSeconds: 1 } });
      }
      const listed = await request(t.app).get('/api/publish_token/list?itemsOnPage=100').set(auth);
      assert.deepEqual(
        (listed.body.data as Array<{ label: string }>).map((x) => x.label).sort(),
        created.map((r) => r.body.data.label as string).sort(),
      );
      // Once the queue drained, the refused write goes through.
      const again = await request(t.app).post('/api/publish_token').set(auth).send({ ...body(9), label: 'retried' });
      assert.equal(again.status, 200);
    } finally {
      await t.services.close();
    }
  });
});
