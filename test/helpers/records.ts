// A token record for policy tests: an active subscribe token of ACCT01 for `cam1`, no other rules;
// `over` replaces any field.
import type { TokenRecord } from '../../src/domain/tokens.js';

export function tokenRecord(over: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id: 7,
    kind: 'subscribe',
    accountId: 'ACCT01',
    label: 't',
    token: 'a'.repeat(64),
    addedOn: '2026-01-01T00:00:00.000Z',
    updatedOn: '2026-01-01T00:00:00.000Z',
    isActive: true,
    streams: [{ streamName: 'cam1', isRegex: false }],
    allowedOrigins: [],
    allowedIpAddresses: [],
    allowedCountries: [],
    deniedCountries: [],
    rev: 1,
    ...over,
  };
}
