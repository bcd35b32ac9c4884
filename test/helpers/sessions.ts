// A registry session record for tests: a MediaMTX subscriber of cam1 unless `over` says otherwise.
// The store contract builds its sessions with it too, so it lives with the suite.
export { sessionRecord } from '../../src/store-contract/fixtures.js';

/** A registry id as Streamgate makes it (docs/api.md#running-sessions): 16 base64url characters. */
export const SESSION_ID = /^[A-Za-z0-9_-]{16}$/;
