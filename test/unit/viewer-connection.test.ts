// The viewerConnection timing (test/unit/viewer-connection.suite.ts) on the embedded store: one instance.
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { viewerConnectionSuite } from './viewer-connection.suite.js';

const open: Store[] = [];
viewerConnectionSuite(
  {
    name: 'sqlite',
    setup: async () => {},
    open: async (count, now) => {
      if (count !== 1) throw new Error('the embedded store serves one instance');
      const s = new SqliteStore({ file: ':memory:', now });
      open.push(s);
      return [s];
    },
    teardown: async () => {
      await Promise.all(open.map((s) => s.close()));
    },
  },
  { instances: 1 },
);
