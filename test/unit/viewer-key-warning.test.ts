// The start-up warning for viewer credentials signed with a key only this instance has, while the
// store is shared (Redis): named exactly when it applies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { VIEWER_KEY_WARNING, configWarnings } from '../../src/observability/warnings.js';
import type { AccountService } from '../../src/management/accounts.js';

const accounts = { hasSeveral: async () => false } as unknown as AccountService;
const SECRET = 'x'.repeat(40);

describe('viewer credential key warning', () => {
  it('warns on Redis without sessions.http.secret or hooks.secret, and only then', async () => {
    const on = (overrides: Record<string, unknown>) => configWarnings(loadConfig({ env: {}, overrides }), accounts);
    assert.deepEqual(await on({ redis: { url: 'redis://127.0.0.1:1' } }), [VIEWER_KEY_WARNING]);
    assert.deepEqual(await on({ redis: { url: 'redis://127.0.0.1:1' }, sessions: { http: { secret: SECRET } } }), []);
    assert.deepEqual(await on({ redis: { url: 'redis://127.0.0.1:1' }, hooks: { secret: SECRET } }), []);
    assert.deepEqual(await on({ redis: { url: 'redis://127.0.0.1:1' }, sessions: { http: { enabled: false } } }), []);
    assert.deepEqual(await on({}), [], 'the embedded store: one instance, its key kept in dataDir');
  });
});
