// A registry session record for tests: a MediaMTX subscriber of cam1 unless `over` says otherwise.
// The store contract builds its sessions with it too, so it lives with the suite.
export { sessionRecord } from '../../src/store-contract/fixtures.js';
