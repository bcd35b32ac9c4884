// Viewer rules kept after their token (docs/api.md#secured-streams): deleting a publish token that
// sets rules for the viewers of its streams (subscribeRequiresAuth, country lists) must not open
// those streams, whose segments and recordings stay on disk after the publisher ends. Each of its
// stream rules stays on the account's list of secured streams with the viewer rules it carried,
// which the account reads and shrinks (GET/DELETE /api/secured_streams). Pure: both stores apply it.
import { securesViewing, type TokenRecord } from './tokens.js';
import { hasCountryLists } from './viewer-rules.js';

/** One stream rule (exact name or RE2 pattern) of a deleted publish token, with the viewer rules it carried. */
export interface SecuredStream {
  streamName: string;
  isRegex: boolean;
  /** The deleted publish token it came from. */
  tokenId: number;
  /** When it was kept (ISO 8601). */
  addedOn: string;
  /** Viewing needs a subscribe token (the token had subscribeRequiresAuth). */
  subscribeRequiresAuth: boolean;
  /** The token's viewer country lists (at most one non-empty). */
  allowedCountries: string[];
  deniedCountries: string[];
}

/**
 * What deleting `t` adds to its account's secured streams: one entry per stream rule of a publish
 * token that set viewer rules, else nothing. Entries of the same name from different tokens are
 * all kept; a token leaves each of its rules once.
 */
export function securedAfterDelete(t: TokenRecord, addedOn: string): SecuredStream[] {
  if (t.kind !== 'publish' || !(securesViewing(t) || hasCountryLists(t))) return [];
  const seen = new Set<string>();
  const out: SecuredStream[] = [];
  for (const s of t.streams) {
    const key = `${s.isRegex ? 'r' : 'e'}:${s.streamName}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      streamName: s.streamName,
      isRegex: s.isRegex,
      tokenId: t.id,
      addedOn,
      subscribeRequiresAuth: securesViewing(t),
      allowedCountries: [...t.allowedCountries],
      deniedCountries: [...t.deniedCountries],
    });
  }
  return out;
}

/** The viewer rules of an entry, as the stores keep them beside its name, kind, token and time. */
export type KeptRules = Pick<SecuredStream, 'subscribeRequiresAuth' | 'allowedCountries' | 'deniedCountries'>;

export const keptRules = (e: SecuredStream): KeptRules => ({
  subscribeRequiresAuth: e.subscribeRequiresAuth,
  allowedCountries: e.allowedCountries,
  deniedCountries: e.deniedCountries,
});

/** Canonical order of a list: by name, exact before regex, then by token id (what both stores answer). */
export const bySecuredName = (a: SecuredStream, b: SecuredStream): number =>
  a.streamName < b.streamName ? -1 : a.streamName > b.streamName ? 1 : Number(a.isRegex) - Number(b.isRegex) || a.tokenId - b.tokenId;

/**
 * The kept entries of one deleted token with country lists, at an account version, as a publish
 * token record: how a decision holds that token's former streams' viewers to its lists
 * (docs/api.md#country).
 */
export function keptCountryToken(accountId: string, entries: SecuredStream[], accountVersion: number): TokenRecord | undefined {
  const first = entries[0];
  if (first === undefined || (first.allowedCountries.length === 0 && first.deniedCountries.length === 0)) return undefined;
  return {
    id: first.tokenId,
    kind: 'publish',
    accountId,
    label: '',
    token: '',
    addedOn: first.addedOn,
    updatedOn: first.addedOn,
    isActive: false,
    streams: entries.map((e) => ({ streamName: e.streamName, isRegex: e.isRegex })),
    allowedOrigins: [],
    allowedIpAddresses: [],
    allowedCountries: first.allowedCountries,
    deniedCountries: first.deniedCountries,
    // Never a stored revision (those are positive), and a new one at each account version: the
    // compiled rules cached by token id and revision are never an earlier list's.
    rev: -(accountVersion + 1),
  };
}
