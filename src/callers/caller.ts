// The one interface every caller (media server, proxy, generic client of /hooks/*) implements:
// its routes, the translation of a request into an access request, its answer to a decision.
import type { SignedFacts, SignedPresentation } from '../contracts/signed.js';
import type { Request } from 'express';
import type { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { Logger } from 'pino';
import type { Admission, DecisionResult } from '../contracts/admission.js';
import type { LifecycleSignal } from '../lifecycle/events.js';
import type { Session } from '../contracts/session.js';
import type { TokenRecord } from '../domain/tokens.js';
import type { UsageReport } from '../contracts/usage.js';
import type { TrustedProxies } from '../domain/addresses.js';
import type { CredentialCheck, CredentialRequest } from '../contracts/viewer-credential.js';

/** HTTP viewer sessions, as a caller uses them (src/sessions/viewer-sessions.ts). */
export interface ViewerCredentials {
  cookieName: string;
  /** '' when credentials are read from cookies only. */
  queryParam: string;
  /** Checks a presented credential in memory. */
  check(value: string, req: CredentialRequest): CredentialCheck | Promise<CredentialCheck>;
  /** Counts a request the credential answered (streamgate_decisions_total, kind credential). */
  answered(caller: string, action: string, reason: string): void;
  /** The Set-Cookie header value carrying a credential. */
  setCookie(credential: string): string;
}

export type { Admission, SessionIdentity } from '../contracts/admission.js';

/** What a caller can do beyond asking for a decision. */
export interface CallerCapabilities {
  /** Its requests name a connection that the session registry keeps (byte counts, ends, usage). */
  sessionIdentity: boolean;
  /** It asks again for a connection already admitted (nginx-rtmp on_update): no new session starts. */
  reasks: boolean;
  /** Streamgate can cut one of its sessions through its server's API (src/sessions/drivers, sessions.servers). */
  terminate: boolean;
}

/** An answer, described: written by one function (src/http/caller-routes.ts) with the same bytes as res.json / res.send. */
export interface Reply {
  status: number;
  /** A JSON body, or a plain-text one. */
  json?: unknown;
  text?: string;
  /** Set before the body, in this order. */
  headers?: Array<[string, string]>;
}

/** What a route makes of one request: an admission to decide, or an answer given at once (after queueing its signals). */
export type Outcome = { admit: Admission } | { reply: Reply; signals?: LifecycleSignal[] };

/** How a route's body arrives: parsed JSON or form, raw bytes (signed bodies), an image, or nothing. */
export type BodyEncoding = 'none' | 'json' | 'form' | 'json-or-form' | 'raw' | 'image';

/** What a route documents in /api/openapi.json (under the Hooks tag, with the hook secret). */
export interface RouteDoc {
  /** Default: the route's method (get for ALL). */
  method?: 'get' | 'post';
  /** Default: the route's path; `:name` for a path parameter. */
  path?: string;
  params?: z.ZodType;
  summary: string;
  answer: string;
  body?: z.ZodType;
  /** The body's media type when it is not JSON. */
  bodyType?: string;
  /** The success status when not 200. */
  status?: number;
}

export interface CallerRoute {
  /** ALL: every method (proxies forward the original one). */
  method: 'GET' | 'POST' | 'ALL';
  path: string;
  /** Also every path below `path` (`${path}/...`: Envoy's path_prefix). */
  below?: boolean;
  body: BodyEncoding;
  read(req: Request, ctx: CallerContext): Outcome | Promise<Outcome>;
  docs: RouteDoc[];
}

/**
 * A caller. `name` is its label everywhere: the `adapter` label of the decision metrics and log
 * line, the `caller` of its lifecycle signals and sessions, and of usage reports.
 */
export interface Caller {
  name: string;
  capabilities: CallerCapabilities;
  routes: readonly CallerRoute[];
  /** Its answer to a decision on an admission one of its routes read: allow, deny or store error, in its own format. */
  answer?(d: DecisionResult, admission: Admission): Reply;
}

/**
 * The services a caller may use, and only these: it never reads the store itself (the session and
 * token reads it needs are methods here, made in src/admission/context.ts).
 */
export interface CallerContext {
  config: Config;
  logger: Logger;
  trusted: TrustedProxies;
  /**
   * Decides an admission (counted and logged under the caller's name) and, on allow, starts its
   * session (src/sessions/control.ts): registered in the decision's store step when the token has
   * limits, else queued. A re-ask (admission.reask) refreshes the session instead, and a refusal
   * ends it only when the session was cut or its token change is in enforcement.terminateOn.
   * `serverAddress`: where the request came from (which media server holds the connection).
   */
  admit(caller: string, admission: Admission, serverAddress?: string): DecisionResult | Promise<DecisionResult>;
  /** HTTP viewer sessions (sessions.http.enabled), else undefined. */
  viewers?: ViewerCredentials;
  /**
   * The credential in a cookie one of the account's credential issuers names (its `cookieName`;
   * docs/api.md#credential-issuers), from a Cookie header: the account is the request's, else the
   * one token-less requests belong to. Undefined when no such cookie is there (or the store cannot say).
   */
  issuerCookie(cookieHeader: string, accountId: string | undefined): string | undefined | Promise<string | undefined>;
  /**
   * The request's signed URL, cookies or CAT packed for the decision (`value`: AccessRequest.signed)
   * and the credential alone (`presented`: what a viewer session is tied to), when one of the
   * account's active signed-URL issuers (docs/api.md#signed-url-issuers) finds its format in it;
   * undefined otherwise (or when the store cannot say). The account as issuerCookie's.
   */
  signedCredential(facts: SignedFacts, accountId: string | undefined): SignedPresentation | undefined | Promise<SignedPresentation | undefined>;
  /** Queues a lifecycle signal; never waits. */
  signal(s: LifecycleSignal): void;
  /** A session the registry holds for this caller, or null (also when the store cannot say). */
  sessionOf(caller: string, sessionId: string): Promise<Session | null>;
  /** The publish token with this value, or null (also when the store cannot say). */
  publishTokenOf(value: string): Promise<TokenRecord | null>;
  /** Counts a usage report: false for a repeated reportId; ApiError when it names nothing known. */
  ingestUsage(r: UsageReport): Promise<boolean>;
  /** Asks the MediaMTX poller for a reading now (when one runs). */
  pollUsage(): void;
}
