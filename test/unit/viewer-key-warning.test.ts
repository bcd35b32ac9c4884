// Viewer credentials are signed with a key kept in the store (or sessions.http.secret), so every
// instance on one store shares it: no configuration leaves an instance with a key of its own, and
// nothing is warned of, on Redis without any secret as on the embedded store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { configWarnings } from '../../src/observability/warnings.js';
import type { AccountService } from '../../src/management/accounts.js';

const accounts = { hasSeveral: async () => false } as unknown as AccountService;

describe('viewer credential key warning', () => {
  it('is never given: the key is shared through the store', async () => {
    const on = (overrides: Record<string, unknown>) => configWarnings(loadConfig({ env: {}, overrides }), accounts);
    // with the audit key Redis needs (without one, the audit warning is test/unit/audit-key.test.ts's)
    assert.deepEqual(await on({ redis: { url: 'redis://127.0.0.1:1' }, audit: { key: 'viewer-key-test-audit-key-0123456789' } }), []);
    assert.deepEqual(await on({}), []);
  });
});
