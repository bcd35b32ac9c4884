// Which ioredis failures mean "Redis did not answer" (down, failing over, loading, timing out) and
// so are retryable, as opposed to a bad command or script (a programmer's error, a 500).

/** ioredis's own errors of that kind (it raises plain Errors for them, named only by their text). */
const CLIENT_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);
/**
 * Server replies that say it cannot serve now (READONLY replica after a failover, LOADING, ...),
 * also when raised inside a script; socket failures; ioredis's timeout and closed-connection errors.
 */
const UNAVAILABLE =
  /\b(READONLY|LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|NOREPLICAS|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH)\b|Command timed out|Connection is closed|Stream isn't writeable|None of the sentinels are available|Failed to refresh slots cache/;

export function isRedisUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (CLIENT_NAMES.has(e.name)) return true;
  const code = (e as { code?: unknown }).code;
  return UNAVAILABLE.test(typeof code === 'string' ? `${code} ${e.message}` : e.message);
}
