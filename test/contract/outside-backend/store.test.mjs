// The outside package's test file: the parts of the store contract its backend implements, from the
// package by name. BACKEND=late-expiry runs them on the faulty variant.
import { markStoreContract, metaStoreContract } from 'streamgate/store-contract';
import { LateExpiryStore, MemoryStore } from './memory-store.mjs';

const Backend = process.env.BACKEND === 'late-expiry' ? LateExpiryStore : MemoryStore;

const factory = {
  name: 'memory',
  async setup() {},
  async make({ now } = {}) {
    return new Backend(now);
  },
  async teardown() {},
};

markStoreContract(factory);
metaStoreContract(factory);
