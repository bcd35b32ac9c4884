// The bounded log sink: lines pass through to a sink that keeps up; a stalled sink holds at most
// maxBytes and the rest are dropped and counted; a vanished sink drops without throwing; once the
// backlog is written one line reports the loss; the final flush never waits past its bound.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { LogSink, createLogger, flushLogs, logSinkOf } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';

/** A sink that holds every write until release() is called, as a pipe nobody reads. */
function stalledSink(highWaterMark = 64) {
  const written: string[] = [];
  const held: Array<() => void> = [];
  let open = false;
  const out = new Writable({
    highWaterMark,
    decodeStrings: false,
    write(chunk: string, _enc, cb) {
      const done = () => {
        written.push(String(chunk));
        cb();
      };
      if (open) done();
      else held.push(done);
    },
  });
  return {
    out,
    written,
    release() {
      open = true;
      for (const f of held.splice(0)) f();
    },
  };
}

const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(83) })}\n`; // 100 bytes for i < 10

const tick = () => new Promise((r) => setImmediate(r));

describe('log sink', () => {
  it('passes every line to a sink that keeps up, in order, dropping none', async () => {
    const got: string[] = [];
    const out = new Writable({ write(c, _e, cb) { got.push(String(c)); cb(); } });
    const sink = new LogSink(out, 1000);
    for (let i = 0; i < 500; i++) sink.write(line(i));
    await tick();
    assert.equal(got.length, 500);
    assert.deepEqual(got.slice(0, 3), [line(0), line(1), line(2)]);
    assert.equal(got[499], line(499));
    assert.equal(sink.dropped, 0);
  });

  it('holds at most maxBytes for a stalled sink, drops and counts the rest, then reports the loss once written', async () => {
    const s = stalledSink();
    const sink = new LogSink(s.out, 1000);
    for (let i = 0; i < 100; i++) sink.write(line(i));
    // Lines 0..9 are 100 bytes each: the tenth fills the 1000 bytes, every later one is refused.
    assert.equal(sink.bufferedBytes, 1000);
    assert.equal(sink.dropped, 90);
    assert.deepEqual(s.written, []);
    s.release();
    await tick();
    assert.equal(s.written.length, 11);
    assert.deepEqual(s.written.slice(0, 10), Array.from({ length: 10 }, (_, i) => line(i)));
    const report = JSON.parse(s.written[10]) as Record<string, unknown>;
    assert.equal(report.msg, '90 log lines dropped while the log sink was stalled');
    assert.equal(report.droppedLines, 90);
    assert.equal(report.level, 40);
    assert.equal(report.service, 'streamgate');
    assert.equal(sink.dropped, 90, 'the report line itself is not a loss');
    // Writing has resumed: later lines pass and no second report comes.
    sink.write(line(100));
    await tick();
    assert.deepEqual(s.written.slice(11), [line(100)]);
    assert.equal(sink.dropped, 90);
  });

  it('drops and counts lines once the sink is gone, without throwing', async () => {
    const out = new Writable({ write(_c, _e, cb) { cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })); } });
    const sink = new LogSink(out, 1000);
    sink.write(line(0)); // fails in the stream: lost
    await tick();
    for (let i = 1; i < 50; i++) sink.write(line(i));
    await tick();
    assert.equal(sink.dropped, 50);
    assert.equal(sink.bufferedBytes, 0);
    await sink.whenWritten(60_000); // resolves at once: nothing can be written any more
  });

  it('whenWritten resolves when the backlog is written, and by its bound when the sink stays stalled', async () => {
    const s = stalledSink();
    const sink = new LogSink(s.out, 1000);
    sink.write(line(0));
    let flushed = false;
    const f = sink.whenWritten(60_000).then(() => (flushed = true));
    await tick();
    assert.equal(flushed, false);
    s.release();
    await f;
    assert.deepEqual(s.written, [line(0)]);

    const stuck = stalledSink();
    const sink2 = new LogSink(stuck.out, 1000);
    sink2.write(line(0));
    await sink2.whenWritten(5);
    assert.deepEqual(stuck.written, [], 'the bounded flush returned with the line still unwritten');
  });

  it('a logger over a stalled destination never blocks, and its losses reach streamgate_log_lines_dropped_total', async () => {
    const s = stalledSink();
    const logger = createLogger('info', s.out, { maxBytes: 4096 });
    for (let i = 0; i < 1000; i++) logger.info({ i }, 'decision');
    const sink = logSinkOf(logger.child({ adapter: 'x' }));
    assert.ok(sink, 'children share the sink');
    assert.ok(sink.bufferedBytes <= 4096 + 200, `buffered ${sink.bufferedBytes}`);
    const accepted = 1000 - sink.dropped;
    assert.ok(sink.dropped > 900, `dropped ${sink.dropped}`);
    const metrics = new Metrics({ defaultMetrics: false, logLinesDropped: () => logSinkOf(logger)?.dropped ?? 0 });
    const text = await metrics.registry.metrics();
    assert.match(text, new RegExp(`^streamgate_log_lines_dropped_total ${sink.dropped}$`, 'm'));
    // The counter only ever rises, read again at the next scrape.
    logger.info('one more');
    assert.match(await metrics.registry.metrics(), new RegExp(`^streamgate_log_lines_dropped_total ${sink.dropped}$`, 'm'));
    s.release();
    await flushLogs(logger, 60_000);
    assert.equal(s.written.length, accepted + 1);
    assert.equal(JSON.parse(s.written[accepted]).droppedLines, sink.dropped);
  });
});
