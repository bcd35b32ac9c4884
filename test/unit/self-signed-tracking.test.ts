// A self-signed subscribe JWT whose parent token has a trackingId must carry the same one. The
// caller gets the hosted text ("Invalid token"); the rule's detail says which ids differ.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, type Credential, type EvalContext } from '../../src/policy/evaluate.js';
import type { AccessRequest } from '../../src/policy/types.js';
import type { TokenRecord } from '../../src/domain/tokens.js';
import { tokenRecord } from '../helpers/records.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

const parent = (trackingId?: string): TokenRecord => tokenRecord(trackingId === undefined ? {} : { tracking: { trackingId } });

const jwt = (parentTracking: string | undefined, trackingId: string | undefined): Credential => ({
  type: 'jwt',
  parent: parent(parentTracking),
  claims: { tokenId: 7, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [], exp: NOW / 1000 + 60, trackingId },
});

const req: AccessRequest = { action: 'subscribe', token: 'x', streamName: 'cam1', protocol: 'webrtc' };
const ctx: EvalContext = { now: NOW, secured: false, rtmpIpFilters: 'enforce', countryOf: () => undefined };

describe('policy: a self-signed token\'s trackingId', () => {
  const refused: Array<[string, string | undefined, string]> = [
    ['the JWT carries none', undefined, "the parent token has trackingId 'grp-1' and the JWT carries none: it must carry the same streaming.tracking.trackingId"],
    ['the JWT carries another', 'grp-2', "the parent token has trackingId 'grp-1' and the JWT carries 'grp-2': it must carry the same streaming.tracking.trackingId"],
    ['the JWT carries it in another case', 'GRP-1', "the parent token has trackingId 'grp-1' and the JWT carries 'GRP-1': it must carry the same streaming.tracking.trackingId"],
  ];
  for (const [name, claimed, detail] of refused) {
    it(`${name}: Invalid token for the caller, the detail names both ids`, () => {
      const ev = evaluate(req, jwt('grp-1', claimed), ctx);
      assert.deepEqual(
        [ev.decision.allowed, ev.decision.status, ev.decision.reason, ev.decision.message],
        [false, 401, 'token_invalid', 'Unauthorized: Invalid token'],
      );
      assert.deepEqual(ev.rules[1], { rule: 'token valid', reason: 'token_invalid', result: 'fail', detail });
    });
  }

  it('a very long JWT trackingId is cut to 100 characters in the detail', () => {
    const ev = evaluate(req, jwt('grp-1', 'x'.repeat(5000)), ctx);
    assert.equal(ev.rules[1].detail, `the parent token has trackingId 'grp-1' and the JWT carries '${'x'.repeat(100)}': it must carry the same streaming.tracking.trackingId`);
  });

  it('the same id, or a parent without one, passes the rule', () => {
    for (const [p, c] of [['grp-1', 'grp-1'], [undefined, undefined], [undefined, 'viewer-9']] as const) {
      const ev = evaluate(req, jwt(p, c), ctx);
      assert.deepEqual(ev.rules[1], { rule: 'token valid', reason: 'token_invalid', result: 'pass', detail: 'self-signed' }, `${p} / ${c}`);
      assert.equal(ev.decision.reason, 'allowed');
    }
  });
});
