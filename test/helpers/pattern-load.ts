// What the process tests of costly stream patterns share: the costliest pattern shape the cost cap
// accepts, a timer, and the event-loop lag the process itself reports.

/** The adversarial pattern shape (`(?i:[Ͱ-Ͽ]){n}`) with as many repetitions as the cap accepts. */
export const heavy = (k: number, i: number): string => `s${k}_${i}(?i:[Ͱ-Ͽ]){94}`;

export async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

/** The largest event-loop delay since the previous scrape (reading /metrics starts a new window). */
export async function lagMaxSeconds(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)![1]);
}
