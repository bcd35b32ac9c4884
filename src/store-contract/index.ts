// The package entry `streamgate/store-contract`: the suite every store backend passes, one part per
// aggregate of src/store/store.ts (docs/architecture.md#the-contract-suite). A backend's test file
// calls `storeContract(factory)`, or the part of each aggregate it implements, under `node --test`.
// A rejection is matched by the error's name (AccountExists, AccountNameTaken, IssuerConflict,
// IssuerChanged, StoreConflict, StoreUnavailable), so a backend throws the classes of
// `streamgate/store` or errors of its own with those names.
import type { Store } from '../store/store.js';
import { type AccountsUnderTest, accountTests } from './accounts.js';
import { type AuditUnderTest, auditTests } from './audit.js';
import { type BindsUnderTest, bindTests } from './binds.js';
import { contract, type StoreFactory } from './factory.js';
import { type IssuersUnderTest, issuerTests } from './issuers.js';
import { type LiveStreamsUnderTest, liveStreamTests } from './live-streams.js';
import { type MarksUnderTest, markTests } from './marks.js';
import { type MetaUnderTest, metaTests } from './meta.js';
import { type RecordingsUnderTest, recordingTests } from './recordings.js';
import { type SessionsUnderTest, sessionTests } from './sessions.js';
import { type SharingUnderTest, sharingTests } from './sharing.js';
import { type TokensUnderTest, tokenTests } from './tokens.js';
import { type UsageUnderTest, usageTests } from './usage.js';
import { type WebhooksUnderTest, webhookTests } from './webhooks.js';

export type { StoreFactory } from './factory.js';
export type { StoreErrorName } from './fixtures.js';
export type {
  AccountsUnderTest,
  AuditUnderTest,
  BindsUnderTest,
  IssuersUnderTest,
  LiveStreamsUnderTest,
  MarksUnderTest,
  MetaUnderTest,
  RecordingsUnderTest,
  SessionsUnderTest,
  SharingUnderTest,
  TokensUnderTest,
  UsageUnderTest,
  WebhooksUnderTest,
};

/** The whole suite: every aggregate's part, on one factory set up once. */
export function storeContract(factory: StoreFactory<Store>): void {
  contract(factory, (fresh) => {
    accountTests(fresh);
    tokenTests(fresh);
    issuerTests(fresh);
    metaTests(fresh);
    bindTests(fresh);
    webhookTests(fresh);
    recordingTests(fresh);
    usageTests(fresh);
    sessionTests(fresh);
    liveStreamTests(fresh);
    markTests(fresh);
    auditTests(fresh);
    sharingTests(fresh);
  });
}

/** AccountStore (with the TokenStore writes that move an account's version). */
export function accountStoreContract(factory: StoreFactory<AccountsUnderTest>): void {
  contract(factory, accountTests);
}

/** TokenStore and its enforcement lookups (with the AccountStore and BindStore calls around them). */
export function tokenStoreContract(factory: StoreFactory<TokensUnderTest>): void {
  contract(factory, tokenTests);
}

/** IssuerStore (with the AccountStore whose version its writes move). */
export function issuerStoreContract(factory: StoreFactory<IssuersUnderTest>): void {
  contract(factory, issuerTests);
}

/** BindStore (with the TokenStore whose tokens it binds). */
export function bindStoreContract(factory: StoreFactory<BindsUnderTest>): void {
  contract(factory, bindTests);
}

/** WebhookStore, deliveries included. */
export function webhookStoreContract(factory: StoreFactory<WebhooksUnderTest>): void {
  contract(factory, webhookTests);
}

/** RecordingStore. */
export function recordingStoreContract(factory: StoreFactory<RecordingsUnderTest>): void {
  contract(factory, recordingTests);
}

/** UsageStore. */
export function usageStoreContract(factory: StoreFactory<UsageUnderTest>): void {
  contract(factory, usageTests);
}

/** MetaStore. */
export function metaStoreContract(factory: StoreFactory<MetaUnderTest>): void {
  contract(factory, metaTests);
}

/** LiveStreamStore (with the AccountStore and TokenStore whose version a stream's change moves). */
export function liveStreamStoreContract(factory: StoreFactory<LiveStreamsUnderTest>): void {
  contract(factory, liveStreamTests);
}

/** SessionStore (with the TokenStore whose revision an admission checks). */
export function sessionStoreContract(factory: StoreFactory<SessionsUnderTest>): void {
  contract(factory, sessionTests);
}

/** MarkStore. */
export function markStoreContract(factory: StoreFactory<MarksUnderTest>): void {
  contract(factory, markTests);
}

/** SharingStore. */
export function sharingStoreContract(factory: StoreFactory<SharingUnderTest>): void {
  contract(factory, sharingTests);
}

/** AuditStore, with the sealed writes of every other aggregate (a whole Store). */
export function auditStoreContract(factory: StoreFactory<AuditUnderTest>): void {
  contract(factory, auditTests);
}
