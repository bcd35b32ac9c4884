// Statistics over runs: medians, and the p99 of Streamgate's own request histogram between two scrapes.

/** The item with the median value of `by` (the middle one of an odd count). */
export function medianBy<T>(items: T[], by: (x: T) => number): T {
  return [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)];
}

/** The median of numbers (NaN for none). */
export function median(xs: number[]): number {
  return xs.length === 0 ? Number.NaN : medianBy(xs, (x) => x);
}

/** Cumulative bucket counts of streamgate_http_request_duration_seconds for one route. */
export async function serverBuckets(base: string, route: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<number, number>();
  const re = /^streamgate_http_request_duration_seconds_bucket\{le="([^"]+)",route="([^"]+)"\} (\d+)/gm;
  for (const m of text.matchAll(re)) if (m[2] === route) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[3]));
  if (out.size === 0) {
    const re2 = /^streamgate_http_request_duration_seconds_bucket\{route="([^"]+)",le="([^"]+)"\} (\d+)/gm;
    for (const m of text.matchAll(re2)) if (m[1] === route) out.set(m[2] === '+Inf' ? Infinity : Number(m[2]), Number(m[3]));
  }
  return out;
}

/**
 * The upper bound (ms) of the bucket holding the 99th percentile of the requests between two
 * scrapes, whatever the buckets are (the histogram's own: from 0.1 ms, 0.25, 0.5, 0.75, 1, 1.5,
 * 2, 3 ms up). Infinity when it lies beyond the last bound.
 */
export function p99Between(before: Map<number, number>, after: Map<number, number>): number | undefined {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return undefined;
  for (const le of les) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= 0.99 * total) return le === Infinity ? Infinity : Math.round(le * 1e6) / 1000; // 0.00075 s is 0.75 ms, not 0.7500000000000001
  return undefined;
}

/**
 * The p-th percentile by nearest rank: the smallest value with at least p% of the values at or
 * under it (the p99 of 30 values is their largest). NaN for none.
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1];
}
