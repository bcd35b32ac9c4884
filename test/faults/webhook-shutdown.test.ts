// SIGTERM with a full webhook queue against a receiver that never answers, on the real process:
// it exits 0 within the grace, with one summary line instead of a line (and a deliveries log
// entry) per queued delivery, and never uses the HTTP client after closing it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const GRACE_MS = 2000;
/** Process teardown after the deadline: aborted attempts logged, store closed, exit. */
const MARGIN_MS = 1000;
const WEBHOOKS = 20; // webhooks.maxPerAccount
const SENDS = 60;
const ACCOUNT_CONCURRENCY = 4; // webhooks.accountConcurrency
const ACCOUNT_QUEUE = 1000; // webhooks.accountQueueSize

interface Line {
  msg?: string;
  [k: string]: unknown;
}

const parse = (logs: string[]): Line[] =>
  logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((l) => {
    try {
      return JSON.parse(l) as Line;
    } catch {
      return { msg: l };
    }
  });

describe('fault: SIGTERM with a full webhook queue', () => {
  let rx: Receiver;
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-wh-stop-'));
  let env: Record<string, string>;

  before(async () => {
    rx = await startReceiver();
    rx.respond = () => {}; // never answers
    env = {
      STREAMGATE_DATA_DIR: dir,
      STREAMGATE_WEBHOOKS_ALLOWPRIVATETARGETS: 'true',
      STREAMGATE_WEBHOOKS_CAFILE: rx.caFile,
      STREAMGATE_WEBHOOKS_TESTSENDSPERMINUTE: '1000', // the test sends stand in for a busy account's events
      STREAMGATE_SERVER_SHUTDOWNGRACEMS: String(GRACE_MS),
    };
  });
  after(() => rx.close());

  it(`exits 0 within the grace (${GRACE_MS} ms) with one summary line, no "client is closed", no log entry per queued delivery`, async () => {
    const s: RunningServer = await startServer(env);
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const call = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(s.base + p, { method, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      return { status: r.status, body: (await r.json()) as { data: { id: number } & Record<string, unknown> } };
    };
    const ids: number[] = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const w = await call('POST', '/api/webhooks', { url: `${rx.url}/hook/${i}`, isFeedHooks: true });
      assert.equal(w.status, 200, JSON.stringify(w.body));
      ids.push(w.body.data.id);
    }
    for (let i = 0; i < SENDS; i++) assert.equal((await call('POST', '/api/webhooks/test/Feeds', { streamName: 'cam1' })).status, 200);
    const dropsAtEnqueue = WEBHOOKS * SENDS - ACCOUNT_CONCURRENCY - ACCOUNT_QUEUE;
    const metric = (text: string, re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
    for (let i = 0; ; i++) {
      const m = await (await fetch(`${s.base}/metrics`)).text();
      const depth = metric(m, /^streamgate_webhook_queue_depth (\d+)$/m);
      const dropped = metric(m, /^streamgate_webhook_deliveries_total\{result="dropped"\} (\d+)$/m);
      if (depth === ACCOUNT_QUEUE && dropped === dropsAtEnqueue && rx.received.length === ACCOUNT_CONCURRENCY) break;
      assert.ok(i < 500, `queue never filled: depth ${depth}, dropped ${dropped}, in flight ${rx.received.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    const t0 = Date.now();
    s.proc.kill('SIGTERM');
    const code = await s.exited;
    const took = Date.now() - t0;
    console.log(`exit ${code} after ${took} ms with ${ACCOUNT_QUEUE} queued and ${ACCOUNT_CONCURRENCY} in flight (grace ${GRACE_MS} ms)`);
    assert.equal(code, 0);
    assert.ok(took < GRACE_MS + MARGIN_MS, `exit took ${took} ms; bound ${GRACE_MS + MARGIN_MS} ms`);

    const lines = parse(s.logs);
    assert.deepEqual(lines.filter((l) => /client is closed/i.test(JSON.stringify(l))), []);
    const webhookLines = lines.filter((l) => /webhook/i.test(String(l.msg)));
    assert.deepEqual(
      webhookLines.map((l) => [l.msg, l.aborted ?? l.droppedSinceLastWarning, l.dropped ?? l.reason]),
      [
        ['webhook delivery dropped', 1, 'dropped: account delivery queue full'],
        ['webhooks: shutdown deadline reached; in-flight deliveries aborted, queued ones dropped', ACCOUNT_CONCURRENCY, ACCOUNT_QUEUE],
      ],
    );
    assert.equal(lines.at(-1)?.msg, 'stopped');

    // The deliveries logs, read after a restart: the drops at enqueue and the attempts cut short,
    // nothing for the deliveries that were never attempted.
    const again = await startServer(env);
    try {
      const entries: Array<{ error?: string; statusCode?: number }> = [];
      for (const id of ids) {
        const r = await fetch(`${again.base}/api/webhooks/${id}/deliveries`, { headers: { authorization: `Bearer ${secret}` } });
        entries.push(...((await r.json()) as { data: Array<{ error?: string }> }).data);
      }
      const byError = new Map<string, number>();
      for (const e of entries) byError.set(String(e.error), (byError.get(String(e.error)) ?? 0) + 1);
      assert.deepEqual(Object.fromEntries(byError), {
        'dropped: account delivery queue full': dropsAtEnqueue,
        'aborted: shutting down': ACCOUNT_CONCURRENCY,
      });
    } finally {
      again.proc.kill('SIGTERM');
      assert.equal(await again.exited, 0);
    }
  });
});
