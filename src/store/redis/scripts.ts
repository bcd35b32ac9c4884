// The Lua scripts the Redis store defines on its client (docs/architecture.md#redis-scripts).

export interface ScriptSpec {
  file: string;
  keys: number;
  varying?: true;
}

/**
 * The Lua scripts (docs/architecture.md#redis-scripts) by command name: the file, and the number of
 * KEYS each call passes (its header lists them). A script with `varying` takes that many and more,
 * as its ARGV say: each call passes the number of keys first.
 */
export const SCRIPTS = {
  tokenCreate: { file: 'token-create.lua', keys: 7 },
  tokenUpdate: { file: 'token-update.lua', keys: 7 },
  tokenDelete: { file: 'token-delete.lua', keys: 9 },
  securedRemove: { file: 'secured-remove.lua', keys: 4 },
  issuerCreate: { file: 'issuer-create.lua', keys: 5 },
  issuerUpdate: { file: 'issuer-update.lua', keys: 4 },
  issuerDelete: { file: 'issuer-delete.lua', keys: 5 },
  issuerClaim: { file: 'issuer-claim.lua', keys: 1 },
  issuerConfirm: { file: 'issuer-confirm.lua', keys: 1 },
  issuerRelease: { file: 'issuer-release.lua', keys: 1 },
  bindAddress: { file: 'bind-address.lua', keys: 2 },
  recordCas: { file: 'record-cas.lua', keys: 3 },
  secretSet: { file: 'secret-set.lua', keys: 3 },
  accountCreate: { file: 'account-create.lua', keys: 4 },
  accountUpdate: { file: 'account-update.lua', keys: 4 },
  accountNameClaim: { file: 'account-name-claim.lua', keys: 1 },
  accountNameConfirm: { file: 'account-name-confirm.lua', keys: 1 },
  accountNameRelease: { file: 'account-name-release.lua', keys: 1 },
  accountNameHold: { file: 'account-name-hold.lua', keys: 1 },
  recordingStart: { file: 'recording-start.lua', keys: 3 },
  recordingComplete: { file: 'recording-complete.lua', keys: 3 },
  recordingDelete: { file: 'recording-delete.lua', keys: 5 },
  deliveryAdd: { file: 'delivery-add.lua', keys: 2 },
  liveStart: { file: 'live-start.lua', keys: 3 },
  liveEnd: { file: 'live-end.lua', keys: 3 },
  livePrune: { file: 'live-prune.lua', keys: 1 },
  usageAdd: { file: 'usage-add.lua', keys: 6 },
  usageTotal: { file: 'usage-total.lua', keys: 1 },
  /** On one Redis server (not a Cluster) it also writes the connection's pointer and the gauge's entries. */
  sessionAdmit: { file: 'session-admit.lua', keys: 8, varying: true },
  sessionTouch: { file: 'session-touch.lua', keys: 6 },
  sessionTouchMany: { file: 'session-touch-many.lua', keys: 1, varying: true },
  sessionEnd: { file: 'session-end.lua', keys: 6 },
  markSwap: { file: 'mark-swap.lua', keys: 1 },
  markTake: { file: 'mark-take.lua', keys: 1 },
  webhookCreate: { file: 'webhook-create.lua', keys: 4 },
  webhookDelete: { file: 'webhook-delete.lua', keys: 5 },
  auditAppend: { file: 'audit-append.lua', keys: 2 },
  auditPrune: { file: 'audit-prune.lua', keys: 2 },
  sharingRecord: { file: 'sharing-record.lua', keys: 2 },
  tokenIdTake: { file: 'token-id-take.lua', keys: 1 },
} satisfies Record<string, ScriptSpec>;
export type ScriptName = keyof typeof SCRIPTS;
