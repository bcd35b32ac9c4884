// The policy's own vocabulary beside the decision's (src/contracts/decision.ts, re-exported here):
// the country lists a country rule reads.
export { REASONS, decision, type AccessRequest, type Action, type Decision, type Reason } from '../contracts/decision.js';

/** A pair of country lists and whose they are, as the country rule reads them (at most one non-empty). */
export interface CountryLists {
  allowed: readonly string[];
  denied: readonly string[];
  /** Whose lists: 'subscribe token 7', 'publish token 12', 'account default'. */
  source: string;
}

/**
 * The country lists a viewer is held to unless its own token sets some (docs/api.md#country):
 * the publishing token's while the stream is live, else those of every publish token (active or not) whose
 * streams match the name (each must pass), else the account's defaults.
 */
export interface ViewerCountries {
  /** Who set them, as the check endpoint names it: 'publish token 12', 'publish tokens 12, 15', 'account default'. */
  source: string;
  lists: readonly CountryLists[];
}
