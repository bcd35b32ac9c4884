// Who makes a management change, as its audit entry records it (docs/api.md#audit-log). Handed to
// the management services as an explicit last argument of every write: the HTTP layer builds it per
// request (src/http/route.ts), the CLI passes CLI_ACTOR (docs/architecture.md#the-audit-chain says
// why an argument and not a request-scoped context).

export interface Actor {
  /** `api-secret:<first 8 hex of the secret's SHA-256>`, `admin`, `cli` or `system`. */
  actor: string;
  /** The client address of the request (src/http/client.ts clientAddress); null outside a request. */
  address: string | null;
  /** The request's id (X-Request-Id); null outside a request. */
  requestId: string | null;
}

/** The `streamgate` command, writing the store directly. */
export const CLI_ACTOR: Actor = { actor: 'cli', address: null, requestId: null };

/** The server itself (the account it creates on its first start). */
export const SYSTEM_ACTOR: Actor = { actor: 'system', address: null, requestId: null };
