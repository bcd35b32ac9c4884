// Which token changes end a running media-server session (enforcement.terminateOn; docs/api.md#running-sessions).
// A caller that re-asks for a connection it already admitted (nginx-rtmp on_update) gets a full
// decision; a refusal ends the session only when the change behind it is listed. The default,
// [delete], is the hosted platform's: deleting a publish token ends its streams, while disabling a
// token or its expiry does not disrupt a running feed.
import type { Reason } from '../contracts/decision.js';
import type { TERMINATION_TRIGGERS } from '../config/schema.js';

export type TerminationTrigger = (typeof TERMINATION_TRIGGERS)[number];

/**
 * The token change a re-ask refusal stands for, or undefined when the refusal is not a token change
 * that ends sessions (a rule edited since the admission, the store not answering, ...).
 * `tokenStillExists`: for an unknown token value, whether the session's token id is still stored
 * (then its value was refreshed away) — asked only for that reason.
 */
export async function terminationTrigger(reason: Reason, tokenStillExists: () => Promise<boolean>): Promise<TerminationTrigger | undefined> {
  switch (reason) {
    case 'token_disabled':
      return 'disable';
    case 'token_expired':
      return 'expire';
    case 'token_invalid':
      return (await tokenStillExists()) ? 'refresh' : 'delete';
    default:
      return undefined;
  }
}
