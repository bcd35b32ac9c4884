// The process logger (pino, one JSON line per event). Secrets never reach it: the request log
// records paths without query strings, and nothing logs headers or bodies.
import { pino, type Logger } from 'pino';

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

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const opts = {
    level,
    serializers: { err: errSerializer },
    base: { service: 'streamgate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['*.authorization', '*.apiSecret', '*.token', '*.secret'], censor: '[redacted]' },
  };
  return destination ? pino(opts, destination as never) : pino(opts);
}

export type { Logger };
