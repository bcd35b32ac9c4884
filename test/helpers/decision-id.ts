// Refusals carry the id of their decision (docs/api.md#decision-history): a version 7 UUID, new on
// every request. Tests that compare a refusal exactly check the id's form and set it aside.
import assert from 'node:assert/strict';

export const DECISION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** `body` without its decisionId (top level, or in the director's `data`), after checking the id is a version 7 UUID. */
export function idChecked<T>(body: T): T {
  if (body === null || typeof body !== 'object') return body;
  const b = body as Record<string, unknown>;
  if ('decisionId' in b) {
    assert.match(String(b.decisionId), DECISION_ID);
    const { decisionId: _, ...rest } = b;
    return rest as T;
  }
  const data = b.data as Record<string, unknown> | undefined;
  if (data !== null && typeof data === 'object' && 'decisionId' in data) {
    assert.match(String(data.decisionId), DECISION_ID);
    const { decisionId: _, ...rest } = data;
    return { ...b, data: rest } as T;
  }
  return body;
}
