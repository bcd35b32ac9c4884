// A store that records the name of every method called on it: how tests count store round trips.
// `accountVersionKnown` answers from memory and is never counted. With `reading`, the store hides
// it, so decisions read every version as a store without one does (Redis Cluster, or
// redis.versionLagMs: 0): the most a decision costs.
import type { Store } from '../../src/store/store.js';

export function counting(inner: Store, opts: { reading?: boolean } = {}): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (prop === 'accountVersionKnown') return opts.reading ? undefined : v.bind(target);
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as Store;
  return { store, calls };
}
