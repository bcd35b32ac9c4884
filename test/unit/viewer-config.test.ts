// The viewer-session settings that guard what a credential may open or how long it may live are
// checked at start: a bad one stops the start with a message naming it (docs/callers.md#http-viewer-sessions).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';

const http = (o: Record<string, unknown>) => loadConfig({ env: {}, overrides: { sessions: { http: o } } }).sessions.http;

describe('sessions.http settings', () => {
  it('renditionPattern: an RE2 pattern, the default naming resolutions and quality names', () => {
    assert.equal(http({}).renditionPattern, '^(\\d{3,4}p|src|low|mid|high)$');
    assert.throws(() => http({ renditionPattern: '(' }), /sessions\.http\.renditionPattern: not an RE2 pattern/);
    assert.throws(() => http({ renditionPattern: '^(a)\\1$' }), /sessions\.http\.renditionPattern: not an RE2 pattern/, 'a backreference: not RE2');
    assert.equal(http({ renditionPattern: '^hd$' }).renditionPattern, '^hd$');
  });

  it('maxCredentialSeconds: 0 (credentialSeconds plus clock slack) or at least credentialSeconds', () => {
    assert.equal(http({}).maxCredentialSeconds, 0);
    assert.throws(() => http({ credentialSeconds: 120, maxCredentialSeconds: 60 }), /sessions\.http\.maxCredentialSeconds: must be 0 or at least sessions\.http\.credentialSeconds \(120\)/);
    assert.equal(http({ credentialSeconds: 120, maxCredentialSeconds: 120 }).maxCredentialSeconds, 120);
  });
});
