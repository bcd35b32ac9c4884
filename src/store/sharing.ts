// Token-sharing signals (docs/api.md#token-sharing): per credential of an account (a token, an
// issuer credential's subject), the last use of each client address within a sliding window, kept
// in the store so every instance adds to and reads the same window.
import type { SharingUse } from '../domain/sharing.js';

export type { SharingUse } from '../domain/sharing.js';

/** Addresses kept per credential, the most recently seen: enough to flag any policy, bounded memory. */
export const SHARING_MAX_ADDRESSES = 256;

export interface SharingStore {
  /**
   * Records uses of one credential (per address its latest use: an earlier one never replaces a
   * later one) and answers every use the credential has within `windowMs` before the store's now,
   * newest first, at most SHARING_MAX_ADDRESSES (the oldest dropped). Uses older than the window
   * are removed. One atomic step.
   */
  recordSharing(accountId: string, credential: string, uses: readonly SharingUse[], windowMs: number): Promise<SharingUse[]>;
  /** The credential's uses within `windowMs` before now, newest first; read only. */
  sharingUses(accountId: string, credential: string, windowMs: number): Promise<SharingUse[]>;
}
