// One mocked clock for code that times itself with more than setTimeout and Date: node:test's
// mock timers, with performance.now following the mocked Date and AbortSignal.timeout aborting on
// the mocked setTimeout (docs/architecture.md#tests: the clocks mock timers do not cover).
import type { TestContext } from 'node:test';

export interface MockClock {
  /** The AbortSignal.timeout durations asked for, in order. */
  signalTimeouts: number[];
  tick(ms: number): void;
}

export function mockClock(t: TestContext): MockClock {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  t.mock.method(performance, 'now', () => Date.now());
  const signalTimeouts: number[] = [];
  t.mock.method(AbortSignal, 'timeout', (ms: number) => {
    signalTimeouts.push(ms);
    const c = new AbortController();
    setTimeout(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
    return c.signal;
  });
  return { signalTimeouts, tick: (ms) => t.mock.timers.tick(ms) };
}
