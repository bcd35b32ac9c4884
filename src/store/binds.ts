// Bind on usage: the addresses a token with bindIpsOnUsage has been used from.
import type { TokenRecord } from '../domain/tokens.js';

export type BindResult = 'bound' | 'already' | 'full' | 'stale';

export interface BindStore {
  /** The addresses bound to a token so far, in binding order. */
  boundAddresses(accountId: string, tokenId: number): Promise<string[]>;
  /**
   * Atomically, against the stored token: if its `rev` is no longer `token.rev` → 'stale' (the
   * caller decided on an old copy: re-read and decide again); else if `address` is bound →
   * 'already'; else if fewer than `token.bindIpsOnUsage` are bound → bind it, 'bound'; else
   * 'full'. Concurrent calls from any instance never bind more than the limit.
   */
  bindAddress(token: TokenRecord, address: string): Promise<BindResult>;
}
