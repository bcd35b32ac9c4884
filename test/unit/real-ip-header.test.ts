// hooks.realIpHeader names a header holding exactly one address. X-Forwarded-For and Forwarded are
// lists a proxy appends to: read as one address, any entry a client adds makes the value unreadable,
// and the client is then taken to be the proxy itself (sharing its address, bind slots and country).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../../src/config/load.js';
import { clientAddress, TrustedProxies } from '../../src/http/client.js';
import type { Request } from 'express';

describe('hooks.realIpHeader', () => {
  for (const name of ['X-Forwarded-For', 'x-forwarded-for', 'Forwarded']) {
    it(`refuses ${name}, a list header, naming the setting`, () => {
      assert.throws(
        () => loadConfig({ env: { STREAMGATE_HOOKS_REALIPHEADER: name } }),
        (e: unknown) =>
          e instanceof ConfigError &&
          (e as Error).message.includes(
            'hooks.realIpHeader (from STREAMGATE_HOOKS_REALIPHEADER): X-Forwarded-For and Forwarded are lists, already read by the right-most rule; name a single-address header such as X-Real-IP, or leave it empty',
          ),
      );
    });
  }

  it('still takes a single-address header, and X-Forwarded-For without it is read right-most', () => {
    assert.equal(loadConfig({ env: { STREAMGATE_HOOKS_REALIPHEADER: 'X-Real-IP' } }).hooks.realIpHeader, 'X-Real-IP');
    // nginx's $proxy_add_x_forwarded_for after a client's own entry: the address nginx saw wins
    const req = { socket: { remoteAddress: '127.0.0.1' }, headers: {}, get: (h: string) => (h === 'x-forwarded-for' ? 'forged, 203.0.113.9' : undefined) };
    assert.equal(clientAddress(req as unknown as Request, new TrustedProxies(['127.0.0.1'])), '203.0.113.9');
  });
});
