// Builds a Cutter for the driver tests with small timeouts, a log captured as parsed lines and the
// outcomes it reports, so a test can check what was called, counted and logged.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { MediaServerConfig } from '../../src/config/schema.js';
import type { CutTarget } from '../../src/sessions/drivers/driver.js';
import { Cutter, type CutterOptions } from '../../src/sessions/drivers/cutter.js';

export interface Harness {
  cutter: Cutter;
  outcomes: Array<[string, string]>;
  /** Every log line, parsed. */
  lines: Array<Record<string, unknown>>;
  /** Every log line as written (for "no secret in the log" checks). */
  raw: string[];
}

export function harness(servers: MediaServerConfig[], opts: Partial<CutterOptions> = {}, onOutcome?: () => void): Harness {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      raw.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const outcomes: Array<[string, string]> = [];
  const cutter = new Cutter(servers, { timeoutMs: 500, retries: 0, backoffMs: 10, ...opts }, { logger, onOutcome: onOutcome ?? ((caller, outcome) => outcomes.push([caller, outcome])) });
  return {
    cutter,
    outcomes,
    raw,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

export const basic = (pair: string): string => `Basic ${Buffer.from(pair).toString('base64')}`;

export function target(caller: string, native: Record<string, string>, more: Partial<CutTarget> = {}): CutTarget {
  return { caller, callerSessionId: native.id ?? native.client_id ?? native.clientid ?? 'x', native, direction: 'publish', streamName: 'cam1', ...more };
}

/** The calls a stand-in received, without their arrival times. */
export const calls = (standIn: { calls: Array<{ method: string; path: string; headers: Record<string, string | undefined>; at: number }> }) =>
  standIn.calls.map(({ method, path, headers }) => ({ method, path, authorization: headers.authorization }));
