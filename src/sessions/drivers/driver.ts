// What a media-server driver does: cut one running session through the server's own API
// (docs/callers.md#cutting-sessions). One function per caller; the Cutter (cutter.ts) picks the
// configured server, retries with backoff and counts the outcome.
import type { MediaServerConfig } from '../../config/schema.js';

/** The session to cut, as the caller named it when it was admitted. */
export interface CutTarget {
  caller: string;
  /** The registry's key for the connection (qualified by server where the caller's ids repeat). */
  callerSessionId: string;
  /** The parts the caller's own API takes (src/callers/*: MediaMTX id/path/protocol, SRS server_id/client_id, ...). */
  native: Readonly<Record<string, string>>;
  direction: 'publish' | 'subscribe';
  streamName: string;
  /** The address the admitting hook request came from (picks the server when several are configured). */
  serverAddress?: string;
}

/**
 * cut: the server dropped it; gone: the server no longer has it (404: already ended);
 * unsupported: this server cannot cut it (an OvenMediaEngine viewer) and it ends at its caller's
 * next re-ask or its admission lifetime.
 */
export type CutOutcome = 'cut' | 'gone' | 'unsupported';

/** A failure worth another attempt (server down, timeout, 5xx) or not (401/403: credentials). */
export class DriverError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'DriverError';
  }
}

/** One HTTP exchange with a media server, bounded by sessions.driverTimeoutMs. */
export interface DriverHttp {
  request(url: string, init: { method: 'GET' | 'POST' | 'DELETE'; headers?: Record<string, string> }): Promise<{ status: number; body: string }>;
}

export type Driver<S extends MediaServerConfig = MediaServerConfig> = (target: CutTarget, server: S, http: DriverHttp) => Promise<CutOutcome>;
