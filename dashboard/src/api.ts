// The dashboard's only door to Streamgate: JSON calls to /api with the session's API secret,
// unwrapping the success envelope and turning a failure into an ApiError with its field errors.
// The issuer record's parts are the server's own types (type-only: nothing of the server is bundled).
import type { IssuerAlgorithm, IssuerClaimMap, RevokedIds } from '../../src/domain/issuers.js';

/** Field path → problems, as the API's 400 names them (`streams[0].streamName`, `allowedOrigins[1]`). */
export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: FieldErrors = {},
  ) {
    super(message);
  }
}

const SECRET_KEY = 'streamgate.apiSecret';

/** The API secret lives in sessionStorage only: gone when the tab closes, never in a cookie. */
export const session = {
  get: (): string | null => sessionStorage.getItem(SECRET_KEY),
  set: (secret: string): void => sessionStorage.setItem(SECRET_KEY, secret),
  clear: (): void => sessionStorage.removeItem(SECRET_KEY),
};

let unauthorized: () => void = () => {};
/** Called when a signed-in call answers 401 (the secret was refreshed or deleted elsewhere). */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export async function request<T>(method: Method, path: string, body?: unknown, secret = session.get() ?? ''): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'Streamgate could not be reached (network error).');
  }
  /** The envelope as it came, whatever its shape: read only through optional chaining. */
  type Envelope = { status?: string; data?: { message?: string; errors?: FieldErrors } & Record<string, unknown>; message?: string } | null;
  let json: Envelope = null;
  try {
    json = (await res.json()) as Envelope;
  } catch {
    json = null;
  }
  if (res.ok) return (json && json.status === 'success' ? json.data : json) as T;
  const message: string = json?.data?.message ?? json?.message ?? `HTTP ${res.status}`;
  if (res.status === 401 && secret === session.get()) unauthorized();
  throw new ApiError(res.status, message, json?.data?.errors ?? {});
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body: unknown) => request<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

export const query = (params: Record<string, string | number | boolean | string[] | undefined>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
  }
  return q.toString();
};

// ---- records, as the contract describes them ----

export type TokenKind = 'publish' | 'subscribe';

export interface StreamEntry {
  streamName: string;
  isRegex: boolean;
}

export interface TokenRecord {
  id: number;
  label: string;
  token: string;
  addedOn: string;
  expiresOn?: string;
  isActive: boolean;
  streams: StreamEntry[];
  allowedOrigins: string[];
  allowedIpAddresses: string[];
  bindIpsOnUsage?: number;
  boundIpAddresses?: string[];
  /** Streamgate: live sessions at once (absent: unlimited). */
  maxConcurrentSessions?: number;
  /** Streamgate: sessions ever admitted (absent: unlimited; 1: a one-time token). */
  maxUses?: number;
  allowedCountries: string[];
  deniedCountries: string[];
  updatedOn: string;
  subscribeRequiresAuth?: boolean;
  record?: boolean;
  enableThumbnails?: boolean;
  tracking?: { trackingId: string };
}

export interface RuleOutcome {
  rule: string;
  reason: string;
  /** pending: decided only when a media server admits the session (session limits), never in a dry run. */
  result: 'pass' | 'fail' | 'skipped' | 'pending';
  detail?: string;
  /** The country rule: whose lists applied ('subscribe token 7', 'publish token 12', 'publish tokens 12, 15', 'account default'). */
  source?: string;
}

export interface CheckResult {
  allowed: boolean;
  status: number;
  reason: string;
  message: string;
  rules: RuleOutcome[];
}

/** A kept decision (GET /api/decisions, docs/api.md#decision-history): what was asked, the answer, and every rule as the check endpoint explains it. */
export interface KeptDecision extends CheckResult {
  decisionId: string;
  time: string;
  caller: string;
  action: 'publish' | 'subscribe';
  streamName: string;
  protocol: string;
  rule: string | null;
  detail: string | null;
  tokenId: number | null;
  issuerId: number | null;
  credential: string;
  clientIp: string | null;
  country: string | null;
  origin: string | null;
  sessionId: string | null;
}

export interface DecisionPage {
  decisions: KeptDecision[];
  next: string | null;
}

/** GET /api/sharing/{kind}_token/{id} (docs/api.md#token-sharing). */
export interface SharingWindow {
  tokenId: number;
  policy: { enabled: boolean; windowSeconds: number; action: 'notify' | 'limit' | 'disable' };
  uses: Array<{ ip: string; network: string; asn?: number; country?: string; at: string }>;
  addresses: number;
  networks: string[];
  asns: number[];
  countries: string[];
  travel?: { fromCountry?: string; toCountry?: string; km: number; kmh: number };
  flags: string[];
}

export interface Webhook {
  id: number;
  url: string;
  secret: string;
  isFeedHooks: boolean;
  isRecordingHooks: boolean;
  isThumbnailHooks: boolean;
  filter?: string;
}

/** The signature algorithms an issuer may list (the server's ISSUER_ALGORITHMS, every one of them: checked below). */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'] as const satisfies readonly IssuerAlgorithm[];
const everyAlgorithm: [Exclude<IssuerAlgorithm, (typeof ISSUER_ALGORITHMS)[number]>] extends [never] ? true : never = true;
void everyAlgorithm;

/** A credential issuer as /api/issuers answers it (docs/api.md#managing-issuers): never its secret. */
export interface Issuer {
  id: number;
  label: string;
  /** jwt, or a signed-URL format (docs/api.md#signed-url-issuers). */
  type: 'jwt' | 'akamai-edgeauth' | 'cloudfront' | 'cat' | 'wowza-securetoken' | 'nimble-wmsauth';
  isActive: boolean;
  policyTokenId: number;
  /** null: the account no longer has the policy token; every JWT of the issuer is refused. */
  policyTokenKind: TokenKind | null;
  issuer: string | null;
  keyIds: string[];
  audience: string[];
  algorithms: IssuerAlgorithm[];
  jwks: { keys: Array<Record<string, unknown>> } | null;
  jwksUrl: string | null;
  hasSecret: boolean;
  clockSkewSeconds: number;
  maxLifetimeSeconds: number | null;
  claims: IssuerClaimMap;
  cookieName: string | null;
  revoked: RevokedIds;
  /** A signed-URL issuer's settings; null for jwt. */
  settings: Record<string, unknown> | null;
  hasSigningKey: boolean;
  addedOn: string;
  updatedOn: string;
  rev: number;
}

/** A signed-URL issuer's check (docs/api.md#checking-a-signed-credential): the rules, and the credential field by field. */
export interface SignedCheckResult extends CheckResult {
  credential: {
    issuerId: number;
    format: string;
    verified: boolean;
    problem?: string;
    fields: Array<{ name: string; value: string; check?: string; ok?: boolean }>;
    signed?: string;
  };
}

/** A running session as GET /api/sessions answers it (docs/api.md#running-sessions). */
export interface SessionView {
  id: string;
  caller: string;
  callerSessionId: string;
  accountId: string;
  tokenId: number | null;
  streamId: string;
  streamName: string;
  direction: 'publish' | 'subscribe';
  clientIp: string | null;
  protocol: string | null;
  trackingId: string | null;
  startedAt: string;
  lastSeenAt: string;
  endedReason: string | null;
  endedAt: string | null;
}

/** The paged lists of the sessions and monitoring routes. */
export interface Paged<T> {
  pagination: { totalItems: number; totalPages: number; itemsOnPage: number };
  data: T[];
}

/** One live stream of GET /api/monitoring/streams (the fields the dashboard shows). */
export interface LiveStream {
  streamId: string;
  streamName: string;
  startTime: string;
  viewerCount: number;
  feeds: Array<{ feedId: string; tokenId: number; type: string }>;
}

// The deliveries log entry is the server's own type (a type-only import: nothing of the server is bundled).
export type { Delivery } from '../../src/store/store.js';

/** tracking/total in the hosted shape: Streamgate's bytes are all standard-stream bytes (restream and geoCascade are zero). */
export type UsageTotals = Record<string, Array<{ streamName: string; standardStream: { bytesOut: number; bytesIn: number } }>>;
