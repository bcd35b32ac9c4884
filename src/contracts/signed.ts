// What a caller hands the decision of a request that may carry a signed URL, signed cookies or a
// Common Access Token (docs/api.md#signed-url-issuers): the parts of the request a verifier reads.

export interface SignedFacts {
  method: string;
  /** The path as the client sent it (percent-encoded), without the query. */
  path: string;
  /** The raw query, without `?`. */
  query: string;
  /** The Cookie header ('' without one). */
  cookie: string;
  /** The CTA-Common-Access-Token header. */
  cat?: string;
  /** The viewer's address and (from a trusted header) country, as the decision has them. */
  clientIp?: string;
  country?: string;
}

/** A request's signed credential as the decision takes it: the request packed, and the credential alone. */
export interface SignedPresentation {
  value: string;
  presented: string;
}
