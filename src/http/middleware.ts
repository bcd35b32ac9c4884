// Cross-cutting HTTP concerns: request ids, the request log line, JSON body rules (415/413/400),
// authentication of API secrets and the admin key, 404s and the one error handler.
import express, { type NextFunction, type Request, type Response, type RequestHandler } from 'express';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AccountNameTaken, ApiError, StoreConflict, StoreUnavailable } from '../errors.js';
import { StoreUnavailable as DecisionStoreUnavailable } from '../enforce/lookup.js';
import type { AccountService } from '../management/accounts.js';
import { safeEqual } from '../domain/secrets.js';
import type { Metrics } from '../observability/metrics.js';
import { bearer } from './client.js';

// The director reads its bearer token through this module too.
export { bearer };

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What every request gets, in one layer: its id (a valid incoming X-Request-Id is kept), one log
 * line and the request metrics when it finishes (only the path is logged: query strings can carry
 * tokens), and while draining for shutdown no connection kept alive for another request.
 */
export function requestContext(logger: Logger, metrics: Metrics, draining: () => boolean): RequestHandler {
  const begin = requestStart(logger, metrics, draining);
  return (req, res, next) => {
    begin(req, res);
    next();
  };
}

/**
 * The work of requestContext, for a request the decision fast path (DecisionRoutes.dispatcher, src/http/decision-routes.ts)
 * answers without express: the same id, header, drain rule, metrics and log line.
 */
export function requestStart(logger: Logger, metrics: Metrics, draining: () => boolean): (req: Request, res: Response) => void {
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader('x-request-id', id);
    if (draining()) res.setHeader('connection', 'close');
    const start = performance.now(); // a double: no BigInt per reading
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      const ms = performance.now() - start;
      metrics.httpRequest(route, req.method, res.statusCode, ms / 1000);
      if (!logger.isLevelEnabled('info')) return;
      // The full path (req.path is relative to a mount, "/" for /dashboard/), never the query.
      const url = req.originalUrl;
      const q = url.indexOf('?');
      logger.info({ reqId: id, method: req.method, path: q < 0 ? url : url.slice(0, q), route: req.route?.path, status: res.statusCode, ms }, 'request');
    });
  };
}

const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const JSON_TYPES = ['application/json', 'application/*+json'];
/** The most fields a form body may carry (more: 413). */
export const FORM_PARAMETER_LIMIT = 200;
const FORM_TYPES = ['application/x-www-form-urlencoded'];

/**
 * The one body gate of every endpoint: a body in another encoding than the endpoint speaks is 415,
 * over the limit 413, malformed 400. Management and most hooks speak JSON; nginx-rtmp forms.
 */
export function bodyParsers(kind: 'json' | 'form' | 'json-or-form', limitBytes: number): RequestHandler[] {
  const types = kind === 'json' ? JSON_TYPES : kind === 'form' ? FORM_TYPES : [...JSON_TYPES, ...FORM_TYPES];
  const parsers: RequestHandler[] = [
    (req, _res, next) => {
      if (hasBody(req) && !req.is(types)) return next(new ApiError(415, 'Unsupported Media Type'));
      next();
    },
  ];
  if (kind !== 'form') parsers.push(express.json({ limit: limitBytes, strict: true, type: JSON_TYPES }));
  if (kind !== 'json') parsers.push(express.urlencoded({ limit: limitBytes, extended: false, parameterLimit: FORM_PARAMETER_LIMIT, type: FORM_TYPES }));
  return parsers;
}

/**
 * For endpoints that take no body but answer a large document (OpenAPI, metrics): a body sent
 * anyway is read and dropped (over the limit: 413) before the answer. A server that closes with
 * unread input resets the connection, and the client can lose an answer it had not read yet.
 */
export const discardBody = (limitBytes: number): RequestHandler => express.raw({ type: () => true, limit: limitBytes });

/** JSON bodies only (management API, director). */
export const jsonBody = (limitBytes: number): RequestHandler[] => bodyParsers('json', limitBytes);

/**
 * The management API's JSON bodies: an object or array, or the JSON text `null`, which stands for
 * no body (the hosted Python client posts it to /api/stream/stop/all). Any other bare value is a 400.
 */
export function managementJsonBody(limitBytes: number): RequestHandler[] {
  return [
    (req, _res, next) => {
      if (hasBody(req) && !req.is(JSON_TYPES)) return next(new ApiError(415, 'Unsupported Media Type'));
      next();
    },
    express.json({ limit: limitBytes, strict: false, type: JSON_TYPES }),
    (req, _res, next) => {
      if (req.body === null) req.body = undefined;
      else if (req.body !== undefined && typeof req.body !== 'object') return next(new ApiError(400, 'the body must be a JSON object (or null for none)'));
      next();
    },
  ];
}

/**
 * For the routes that take a JSON body sent with no Content-Type at all (the hosted Node client's
 * cluster and geo cascade updates): such a body is read as JSON. A body that names another type is
 * still a 415 (docs/compatibility.md, Conventions).
 */
export const untypedBodyAsJson: RequestHandler = (req, _res, next) => {
  if (req.headers['content-type'] === undefined && hasBody(req)) req.headers['content-type'] = 'application/json';
  next();
};

/** Resolves the API secret to its account (res.locals.account) or answers 401. */
export function requireApiSecret(accounts: AccountService): RequestHandler {
  return async (req, res, next) => {
    const secret = bearer(req);
    const account = secret ? await accounts.authenticate(secret) : null;
    if (!account) return next(ApiError.unauthorized());
    res.locals.account = account;
    next();
  };
}

/** Admin API: 404 when no admin key is configured; else the bearer must equal it. */
export function requireAdminKey(adminKey: string): RequestHandler {
  return (req, _res, next) => {
    // The full path wherever the guard runs (on a route, or under a mount where req.path is the rest), never the query.
    if (adminKey === '') return next(new ApiError(404, `Not found: ${req.method} ${req.baseUrl}${req.path} (the admin API is off: set STREAMGATE_ADMIN_KEY)`));
    const presented = bearer(req);
    if (!presented || !safeEqual(presented, adminKey)) return next(ApiError.unauthorized());
    next();
  };
}

export function notFound(): RequestHandler {
  return (req, _res, next) => next(new ApiError(404, `Not found: ${req.method} ${req.path}`));
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  // The router's decoding of a path parameter (`/api/publish_token/%E0%A4%A`): the client's mistake.
  if (err instanceof URIError) return new ApiError(400, `Malformed percent-encoding in the request path: ${err.message}`);
  // The store did not answer, or lost too many write races: retryable, so 503 not 500. The stores
  // turn their drivers' failures into these types; the decision path's lookups wrap them again.
  if (err instanceof StoreUnavailable) return new ApiError(503, err.publicMessage);
  if (err instanceof DecisionStoreUnavailable || err instanceof StoreConflict) return new ApiError(503, 'Store unavailable; retry');
  // An account create or rename to a name another account has (docs/api.md#account-names).
  if (err instanceof AccountNameTaken) {
    const by = err.heldBy === undefined ? '' : ` by account ${err.heldBy}`;
    return new ApiError(409, `Account name ${JSON.stringify(err.accountName)} is taken${by}`, {
      name: err.accountName,
      ...(err.heldBy === undefined ? {} : { takenBy: err.heldBy }),
    });
  }
  const e = err as BodyParserError;
  switch (e?.type) {
    case 'entity.too.large':
      return new ApiError(413, `Request body larger than ${e.limit} bytes`);
    case 'entity.parse.failed':
      return new ApiError(400, 'Malformed JSON in request body');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'Unsupported Media Type');
    case 'request.aborted':
      return new ApiError(400, 'Request aborted');
    default: {
      // Any other client error from the body parsers (bad Content-Encoding, ...) stays a 4xx.
      const status = (err as { status?: unknown })?.status;
      const expose = (err as { expose?: unknown })?.expose;
      if (typeof status === 'number' && status >= 400 && status < 500 && expose === true) {
        return new ApiError(status, (err as Error).message);
      }
      return null;
    }
  }
}

export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const api = toApiError(err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (api) {
      res.status(api.status).json({ status: 'fail', data: { message: api.message, ...api.details } });
      return;
    }
    logger.error({ reqId: res.locals.requestId, method: req.method, path: req.path, err }, 'unhandled error');
    res.status(500).json({ status: 'error', message: 'Internal error', code: 500 });
  };
}
