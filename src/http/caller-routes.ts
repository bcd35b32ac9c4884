// The callers' routes as entries of the route table (src/http/surfaces.ts), served by the decision
// table behind the hook secret: one handler shape for all of them (read the request, decide an
// admission through the Enforcer, start the session on allow, write the caller's answer).
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/schema.js';
import type { DocRoute, Endpoint } from './surfaces.js';
import { bodyParsers, FORM_PARAMETER_LIMIT } from './middleware.js';
import { fastFormBody, fastJsonBody } from './fast-body.js';
import { sendJson, sendText } from './answer.js';
import { peerAddress } from './client.js';
import type { BodyEncoding, Caller, CallerContext, CallerRoute, Outcome, Reply } from '../callers/caller.js';

/** Writes a described answer: its headers in order, then the body (the bytes of res.json / res.send). */
export function writeReply(res: ServerResponse, r: Reply): void {
  if (r.headers) for (const [k, v] of r.headers) res.setHeader(k, v);
  if (r.text !== undefined) sendText(res, r.status, r.text);
  else sendJson(res, r.status, r.json);
}

function parsers(body: BodyEncoding, config: Config): RequestHandler[] {
  const limit = config.server.bodyLimitBytes;
  switch (body) {
    case 'none':
      return [];
    case 'json':
      // The common shape (application/json, no encoding, within the limit) is read without
      // body-parser; anything else meets the same parser chain as before (src/http/fast-body.ts).
      return [fastJsonBody(limit, bodyParsers(body, limit))];
    case 'form':
      // likewise for form bodies (nginx-rtmp's notify calls)
      return [fastFormBody(limit, FORM_PARAMETER_LIMIT, bodyParsers(body, limit))];
    case 'json-or-form':
      return bodyParsers(body, limit);
    case 'raw':
      return [express.raw({ type: () => true, limit })];
    case 'image':
      return [express.raw({ type: () => true, limit: config.hooks.thumbnailMaxBytes })];
  }
}

function handler(caller: Caller, route: CallerRoute, ctx: CallerContext): RequestHandler {
  // Synchronous whenever the decision is (a cached token on the embedded store): no async frame.
  const settle = (res: Response, out: Outcome): void | Promise<void> => {
    if ('reply' in out) {
      if (out.signals) for (const s of out.signals) ctx.signal(s);
      writeReply(res, out.reply);
      return;
    }
    const answer = caller.answer;
    if (!answer) throw new TypeError(`caller ${caller.name} admits on ${route.path} but has no answer()`);
    const d = ctx.admit(caller.name, out.admit, peerAddress(res.req as Request));
    if (d instanceof Promise) return d.then((v) => writeReply(res, answer(v, out.admit)));
    writeReply(res, answer(d, out.admit));
  };
  return (req: Request, res: Response) => {
    const out = route.read(req, ctx);
    return out instanceof Promise ? out.then((o) => settle(res, o)) : settle(res, out);
  };
}

/** What /api/openapi.json says of a caller route (tag Hooks, hook secret). */
function routeDocs(route: CallerRoute): DocRoute[] {
  return route.docs.map((d) => ({
    method: d.method ?? (route.method === 'POST' ? 'post' : 'get'),
    path: d.path ?? route.path,
    params: d.params,
    summary: d.summary,
    tag: 'Hooks',
    auth: 'hookSecret',
    body: d.body,
    bodyType: d.bodyType,
    status: d.status,
    answer: d.answer,
  }));
}

/** Every route of every caller, each with its body parsers, declared behind the hook secret. */
export function callerEndpoints(callers: readonly Caller[], ctx: CallerContext): Endpoint[] {
  const out: Endpoint[] = [];
  for (const caller of callers) {
    for (const route of caller.routes) {
      const openapi = routeDocs(route);
      // a route without docs of its own (nginx-rtmp's GET form) is summed up by its caller's first
      const summary = openapi[0]?.summary ?? caller.routes.find((r) => r.path === route.path && r.docs.length > 0)?.docs[0].summary ?? caller.name;
      out.push({
        surface: 'hooks',
        method: route.method === 'ALL' ? 'all' : route.method === 'POST' ? 'post' : 'get',
        path: route.path,
        below: route.below ? true : undefined,
        auth: 'hookSecret',
        served: 'decision',
        summary,
        openapi,
        caller: caller.name,
        handlers: [...parsers(route.body, ctx.config), handler(caller, route, ctx)],
      });
    }
  }
  return out;
}
