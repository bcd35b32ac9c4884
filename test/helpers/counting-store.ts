// A store that records the name of every method called on it: how tests count store round trips.
import type { Store } from '../../src/store/store.js';

export function counting(inner: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as Store;
  return { store, calls };
}
