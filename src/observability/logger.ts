// The process logger (pino, one JSON line per event). Secrets never reach it: the request log
// records paths without query strings, and nothing logs headers or bodies.
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'streamgate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['*.authorization', '*.apiSecret', '*.token', '*.secret'], censor: '[redacted]' },
  });
}

export type { Logger };
