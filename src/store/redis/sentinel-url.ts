// The redis-sentinel:// URL, which selects Sentinel from one setting (redis.url / REDIS_URL) as a
// redis:// URL selects a standalone server. Apart from connect.ts so the configuration schema can
// check it without importing the client.

export const hostPort = (s: string) => {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
};

/**
 * redis-sentinel://[:password@]host:port,host:port/mastername[/db] → Sentinel settings, so one URL
 * can select Sentinel as REDIS_URL does for standalone.
 */
export function parseSentinelUrl(url: string): { sentinels: Array<{ host: string; port: number }>; name: string; password?: string; db?: number } {
  const m = /^redis-sentinel:\/\/(?:(?:[^:@/]*):([^@/]*)@)?([^/]+)\/([^/]+)(?:\/(\d+))?\/?$/.exec(url);
  if (!m) throw new Error('redis-sentinel URL must be redis-sentinel://[:password@]host:port,host:port/mastername[/db]');
  return {
    sentinels: m[2].split(',').map(hostPort),
    name: decodeURIComponent(m[3]),
    password: m[1] ? decodeURIComponent(m[1]) : undefined,
    db: m[4] !== undefined ? Number(m[4]) : undefined,
  };
}
