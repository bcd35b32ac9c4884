// Bind on usage, the last step of a decision: the evaluation once the enforcer knows what binding
// the client's address did (the pending rule settled, the decision final). Pure.
import { decision, type Decision } from './types.js';
import { BIND_RULE, type Evaluation } from './evaluate.js';
import type { BindStep } from '../domain/store-rules.js';
import { copyWith } from '../domain/objects.js';

/**
 * The evaluation once its pending bind step has an outcome: the 'bind on usage' rule passes
 * ('bound', 'already') or fails ('full': the decision becomes ip_not_allowed), with `detail`.
 * A new evaluation with nothing left to bind; `ev` is not changed.
 */
export function applyBind(ev: Evaluation, outcome: BindStep, detail: string): Evaluation {
  const i = ev.bind === undefined ? -1 : ev.rules.findIndex((r) => r.rule === BIND_RULE && r.result === 'pending');
  if (i < 0) throw new TypeError('applyBind: the evaluation has no pending bind');
  const rules = ev.rules.slice();
  const full = outcome === 'full';
  rules[i] = copyWith(rules[i], { result: full ? 'fail' : 'pass', detail });
  return { decision: full ? decision('ip_not_allowed', fieldsOf(ev.decision)) : ev.decision, rules };
}

function fieldsOf(d: Decision): Omit<Decision, 'allowed' | 'status' | 'reason' | 'message'> {
  const { allowed: _a, status: _s, reason: _r, message: _m, ...rest } = d;
  return rest;
}
