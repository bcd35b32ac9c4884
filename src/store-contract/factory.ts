// What a backend hands the suite, and how the suite runs its parts on it.
import { describe, before, after } from 'node:test';
import type { Store } from '../store/store.js';

/**
 * A backend under test. `S` is what its stores implement: the whole `Store` for `storeContract`, or
 * the part one aggregate's suite needs (e.g. `MarkStore & StoreLifecycle` for `markStoreContract`).
 */
export interface StoreFactory<S = Store> {
  /** The backend's name, in the suite's title. */
  name: string;
  /** Called once before the suite (start servers, make a directory). */
  setup(): Promise<void>;
  /** A fresh, empty store. `now` is the store's clock (the wall clock when absent). */
  make(opts?: { now?: () => number }): Promise<S>;
  /** Called once after the suite (close the stores made, stop servers). */
  teardown(): Promise<void>;
}

/** A fresh, empty store of the factory, with `now` as its clock. */
export type Fresh<S> = (now?: () => number) => Promise<S>;

/** One `store contract: <name>` suite: the factory set up once, the parts given fresh stores of it. */
export function contract<S>(factory: StoreFactory<S>, parts: (fresh: Fresh<S>) => void): void {
  describe(`store contract: ${factory.name}`, () => {
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    parts((now) => factory.make({ now }));
  });
}
