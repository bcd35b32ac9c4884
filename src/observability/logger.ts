// The process logger (pino, one JSON line per event) and the bounded sink it writes to. Secrets never
// reach it: the request log records paths without query strings, and nothing logs headers or bodies.
import { pino, type Logger } from 'pino';

/** Bytes of log lines held in memory while the sink (stdout) is slower than the logging. */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/** How long the final flush at shutdown may wait for a slow sink before the process exits anyway. */
export const LOG_FINAL_FLUSH_MS = 500;

type Out = NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean };

/**
 * Where log lines go: the stream's own write buffer, capped at `maxBytes` (Node writes stdout
 * asynchronously when it is a pipe or socket, the case that can back up; files and terminals are
 * written synchronously). When the reader stalls or goes away, new lines are
 * dropped and counted instead of blocking the event loop or growing memory; once the backlog is
 * written, one line reports how many were lost. Nothing here ever writes synchronously in a loop,
 * so a stalled reader cannot hang the process at exit.
 */
export class LogSink {
  /** Lines lost since the process started: refused while the buffer was full, or the sink gone. */
  dropped = 0;
  /** Lines lost since the last report line. */
  private unreported = 0;
  private gone = false;
  /** whenWritten() calls waiting for the backlog to be written. */
  private waiting: Array<() => void> = [];

  constructor(
    private readonly out: Out,
    readonly maxBytes = LOG_BUFFER_BYTES,
  ) {
    // A reader that went away (EPIPE, ECONNRESET) must not crash the process: logging stops.
    out.on('error', this.onGone);
    out.on('close', this.onGone);
  }

  /** Bytes accepted but not yet handed to the operating system. */
  get bufferedBytes(): number {
    return this.out.writableLength ?? 0;
  }

  write(line: string): void {
    if (this.gone || this.out.destroyed === true || this.bufferedBytes >= this.maxBytes) {
      this.lose(1);
      return;
    }
    this.out.write(line, this.onWritten);
  }

  /**
   * Resolves once every accepted line is written, the sink is gone, or `timeoutMs` passed, whichever
   * comes first: the final flush at shutdown never waits on a stalled reader for longer than that.
   */
  whenWritten(timeoutMs: number): Promise<void> {
    if (this.gone || this.bufferedBytes === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting = this.waiting.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiting.push(done);
    });
  }

  private lose(lines: number): void {
    this.dropped += lines;
    this.unreported += lines;
  }

  private settle(): void {
    for (const w of [...this.waiting]) w();
  }

  /** One shared callback (no allocation per line): a line the stream failed to write is lost. */
  private readonly onWritten = (err?: Error | null): void => {
    if (err) {
      this.lose(1);
      return;
    }
    if (this.bufferedBytes > 0) return;
    // The whole backlog is written: the sink keeps up again.
    if (this.unreported > 0) this.reportLost();
    else this.settle();
  };

  private readonly onGone = (): void => {
    this.gone = true;
    this.settle();
  };

  /**
   * One line saying how many lines were lost, written here rather than through a logger so that no
   * logger's level hides it; the shape of a pino warn line.
   */
  private reportLost(): void {
    const lines = this.unreported;
    this.unreported = 0;
    const msg = `${lines} log lines dropped while the log sink was stalled`;
    this.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), service: 'streamgate', droppedLines: lines, msg })}\n`);
  }
}

/** stdout is one file descriptor: every logger writing to it shares one sink and one buffer. */
let stdoutSink: LogSink | undefined;
function defaultSink(): LogSink {
  stdoutSink ??= new LogSink(process.stdout);
  return stdoutSink;
}

/**
 * Errors are logged with message, type and stack only: ioredis attaches the failed command and
 * its arguments (token records included) to its errors, and the default serializer would copy them.
 */
export function errSerializer(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { message: String(e) };
  const out: Record<string, unknown> = { type: e.name, message: e.message, stack: e.stack };
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  return out;
}

/**
 * A logger writing to stdout, or to `destination`, through a bounded LogSink (`maxBytes` of
 * backlog, LOG_BUFFER_BYTES unless given).
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, opts: { maxBytes?: number } = {}): Logger {
  const sink = destination ? new LogSink(destination, opts.maxBytes) : defaultSink();
  return pino(
    {
      level,
      serializers: { err: errSerializer },
      base: { service: 'streamgate' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: ['*.authorization', '*.apiSecret', '*.token', '*.secret'], censor: '[redacted]' },
    },
    sink,
  );
}

/** The sink a logger (or any of its children) writes to, when createLogger made it. */
export function logSinkOf(logger: Logger): LogSink | undefined {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return stream instanceof LogSink ? stream : undefined;
}

/** The bounded final flush at shutdown: waits at most `timeoutMs` for the sink, never blocks. */
export function flushLogs(logger: Logger, timeoutMs = LOG_FINAL_FLUSH_MS): Promise<void> {
  return logSinkOf(logger)?.whenWritten(timeoutMs) ?? Promise.resolve();
}

export type { Logger };
