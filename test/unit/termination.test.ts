// Which refusals of a re-ask stand for a token change that can end a running session.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { terminationTrigger } from '../../src/sessions/termination.js';
import { loadConfig } from '../../src/config/load.js';
import { REASONS, type Reason } from '../../src/policy/types.js';

it('maps token_disabled, token_expired and token_invalid (deleted or refreshed) to their triggers, nothing else', async () => {
  const exists = (v: boolean) => async () => v;
  assert.equal(await terminationTrigger('token_disabled', exists(true)), 'disable');
  assert.equal(await terminationTrigger('token_expired', exists(true)), 'expire');
  assert.equal(await terminationTrigger('token_invalid', exists(false)), 'delete');
  assert.equal(await terminationTrigger('token_invalid', exists(true)), 'refresh');
  for (const reason of Object.keys(REASONS) as Reason[]) {
    if (['token_disabled', 'token_expired', 'token_invalid'].includes(reason)) continue;
    assert.equal(await terminationTrigger(reason, exists(true)), undefined, reason);
  }
});

it('enforcement.terminateOn defaults to [delete], takes a comma-separated list from the environment, and refuses unknown triggers', () => {
  assert.deepEqual(loadConfig({ env: {} }).enforcement.terminateOn, ['delete']);
  assert.deepEqual(loadConfig({ env: { STREAMGATE_ENFORCEMENT_TERMINATEON: 'delete,disable,expire' } }).enforcement.terminateOn, ['delete', 'disable', 'expire']);
  assert.throws(() => loadConfig({ env: { STREAMGATE_ENFORCEMENT_TERMINATEON: 'delete,suspend' } }), /enforcement\.terminateOn/);
  assert.deepEqual(loadConfig({ env: { STREAMGATE_ENFORCEMENT_TERMINATEON: 'secretDeleted' } }).enforcement.terminateOn, ['secretDeleted']);
});
