// Which publish tokens set rules for the viewers of their streams. The stores index these tokens
// (one read gives a decision everything it needs of them), so the predicates live here, pure.
import { securesViewing, type TokenRecord } from './tokens.js';

type CountryFields = Pick<TokenRecord, 'allowedCountries' | 'deniedCountries'>;

/** The token sets country lists (at most one of the two is non-empty). */
export const hasCountryLists = (t: CountryFields): boolean => t.allowedCountries.length > 0 || t.deniedCountries.length > 0;

/**
 * A publish token with country lists: they restrict the viewers of the streams it publishes (never
 * its publishers). Active or not: disabling it never lifts the lists (docs/api.md#country).
 */
export const restrictsViewerCountries = (t: Pick<TokenRecord, 'kind'> & CountryFields): boolean => t.kind === 'publish' && hasCountryLists(t);

type ViewerRuleFields = Pick<TokenRecord, 'kind' | 'subscribeRequiresAuth'> & CountryFields;

/** Bit 1: the token secures viewing (`securesViewing`); bit 2: it restricts viewer countries. */
export const viewerRuleFlags = (t: ViewerRuleFields): number => (securesViewing(t) ? 1 : 0) | (restrictsViewerCountries(t) ? 2 : 0);

/** The token sets any rule for the viewers of its streams (the stores' viewer-rule index). */
export const setsViewerRules = (t: ViewerRuleFields): boolean => viewerRuleFlags(t) !== 0;
