// JSON and form bodies of the decision endpoints read without body-parser on the shape every media
// server and client sends: `content-type: application/json` or `application/x-www-form-urlencoded`
// (optionally `; charset=utf-8`, any case), no content-encoding, a content-length within the limit.
// A form is parsed with the qs options body-parser's urlencoded parser uses (its field limit and
// errors too). A JSON body is read and JSON.parse'd here, with
// body-parser's own rules: an empty body is {}, a leading BOM is dropped, only an object or an
// array is accepted at the top (strict), and a failure is the same error body-parser raises
// (entity.parse.failed: the error handler's 400 "Malformed JSON in request body").
//
// Anything else (another media type or charset, a content-encoding, a chunked body, one over the
// limit, no content-type) goes through the existing parser chain (src/http/middleware.ts) before a
// byte is read, so its answer (415, 413, 400, or a parsed body) is unchanged.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import qs from 'qs';

/** application/json, optionally with charset=utf-8, in any case: what JSON.parse of the UTF-8 text reads exactly. */
const PLAIN_JSON = /^application\/json(?:[ \t]*;[ \t]*charset=utf-8)?$/i;
const PLAIN_FORM = /^application\/x-www-form-urlencoded(?:[ \t]*;[ \t]*charset=utf-8)?$/i;

/** The error body-parser raises for a body that is not JSON (the error handler reads `type`). */
function parseFailed(message: string): Error {
  return Object.assign(new SyntaxError(message), { type: 'entity.parse.failed', status: 400, statusCode: 400, expose: true });
}

/** body-parser's strict JSON: {} for an empty body, a leading BOM dropped, an object or array at the top. */
export function parseStrictJson(text: string): unknown {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (s.length === 0) return {};
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch (e) {
    throw parseFailed((e as Error).message);
  }
  if (typeof v !== 'object' || v === null) throw parseFailed('strict violation');
  return v;
}

/** Runs `chain` in order, as express would: an error or the end of it goes to `next`. */
function runChain(chain: RequestHandler[], i: number, req: Request, res: Response, next: NextFunction): void {
  if (i >= chain.length) {
    next();
    return;
  }
  try {
    chain[i](req, res, (err?: unknown) => (err !== undefined && err !== null ? next(err) : runChain(chain, i + 1, req, res, next)));
  } catch (e) {
    next(e);
  }
}

/** body-parser's urlencoded parser with `extended: false` (depth 0): the same qs options, limits and errors. */
export function parseForm(text: string, parameterLimit: number): Record<string, unknown> {
  if (text.length === 0) return {};
  let count = 0;
  let i = -1;
  do {
    count++;
    if (count > parameterLimit) {
      throw Object.assign(new Error('too many parameters'), { type: 'parameters.too.many', status: 413, statusCode: 413, expose: true });
    }
    i = text.indexOf('&', i + 1);
  } while (i !== -1);
  try {
    return qs.parse(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: 'utf-8', parameterLimit, strictDepth: true });
  } catch (e) {
    if (e instanceof RangeError) throw Object.assign(new Error('The input exceeded the depth'), { type: 'querystring.parse.rangeError', status: 400, statusCode: 400, expose: true });
    throw e;
  }
}

/**
 * The JSON body of a decision endpoint: read here on the common shape, else by `fallback` (the
 * existing 415 gate and express.json, with the same limit).
 */
export function fastJsonBody(limitBytes: number, fallback: RequestHandler[]): RequestHandler {
  return fastBody(PLAIN_JSON, parseStrictJson, limitBytes, fallback);
}

/**
 * The form body of a decision endpoint (nginx-rtmp's notify calls): read here on the common shape
 * (`application/x-www-form-urlencoded`, optionally `; charset=utf-8`) and parsed as body-parser's
 * urlencoded parser does with the same options; anything else meets `fallback` (the 415 gate and
 * express.urlencoded).
 */
export function fastFormBody(limitBytes: number, parameterLimit: number, fallback: RequestHandler[]): RequestHandler {
  return fastBody(PLAIN_FORM, (text) => parseForm(text, parameterLimit), limitBytes, fallback);
}

function fastBody(plain: RegExp, parse: (text: string) => unknown, limitBytes: number, fallback: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const h = req.headers;
    const type = h['content-type'];
    if (type === undefined || h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined || !plain.test(type)) {
      return runChain(fallback, 0, req, res, next);
    }
    const declared = h['content-length'];
    // No length and not chunked: no body (body-parser leaves req.body as it is).
    if (declared === undefined) return next();
    const length = Number(declared);
    if (!(length <= limitBytes) || (req as { _body?: boolean })._body === true || req.readableEnded) {
      return runChain(fallback, 0, req, res, next);
    }
    if (length === 0) {
      req.body = {};
      req.resume();
      return next();
    }
    const chunks: Buffer[] = [];
    let done = false;
    // The listeners stay: the request ends here, and removing four listeners cost more than the
    // rest of this reader (docs/performance.md); `done` keeps a late event from calling next twice.
    const finish = (err: unknown) => {
      if (done) return;
      done = true;
      next(err);
    };
    const onData = (c: Buffer) => chunks.push(c);
    const onEnd = () => {
      const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      try {
        req.body = parse(buf.toString('utf8'));
      } catch (e) {
        return finish(e);
      }
      finish(undefined);
    };
    const onAborted = () => finish(Object.assign(new Error('request aborted'), { type: 'request.aborted', status: 400, statusCode: 400, expose: true }));
    const onError = (e: unknown) => finish(Object.assign(e as Error, { status: 400, statusCode: 400, expose: true }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  };
}
