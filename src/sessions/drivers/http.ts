// What every driver shares: joining the configured base URL with an API path, the credentials
// header, and turning an answer the driver did not expect into a DriverError (docs/callers.md#cutting-sessions).
import { DriverError } from './driver.js';

/** The configured base (which may carry a path, e.g. nginx-rtmp's /control) followed by `path`. */
export const apiUrl = (base: string, path: string): string => base.replace(/\/+$/, '') + path;

/** One path segment, percent-encoded. */
export const seg = (s: string): string => encodeURIComponent(s);

/** `Authorization` for servers taking Basic or Bearer: the bearer wins when both are configured. */
export function basicOrBearer(server: { username?: string; password?: string; bearer?: string }): Record<string, string> {
  if (server.bearer) return { authorization: `Bearer ${server.bearer}` };
  if (server.username !== undefined || server.password !== undefined) {
    const pair = `${server.username ?? ''}:${server.password ?? ''}`;
    return { authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
  }
  return {};
}

/**
 * An answer the driver has no outcome for. 5xx, 408 and 429 may pass (another attempt); 401/403
 * mean the configured credentials are wrong and other 4xx a request the server will never accept,
 * so those are not retried.
 */
export function unexpected(status: number, what: string): DriverError {
  const retryable = status >= 500 || status === 408 || status === 429;
  const why = status === 401 || status === 403 ? 'credentials refused' : 'unexpected answer';
  return new DriverError(`${what}: ${why} (HTTP ${status})`, retryable, status);
}

/** A JSON body, or undefined when it is not JSON (the caller then treats the answer as unexpected). */
export function json(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
