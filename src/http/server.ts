// The HTTP server of the express app, with each request and response object created with the
// app's own prototypes (express's req/res methods) from the start.
//
// express gives every request its methods with Object.setPrototypeOf(req, app.request) and the
// same for res. Changing an object's prototype after it was built makes V8 build new hidden
// classes, and those keep much of the young generation alive through each scavenge: longer
// collection pauses, which were most of Streamgate's tail latency (the measurements are in
// docs/decision-path.md#what-the-decision-path-does-to-be-fast, "Requests born with express's
// prototypes"). Here node's server constructs subclasses whose prototypes are the app's request and
// response prototypes; express's own setPrototypeOf then finds the prototype already in place and
// changes nothing, so every request still behaves exactly as express defines it.
// (Subclasses, not a function returning Reflect.construct(..., newTarget): V8 makes that form far
// dearer than a plain `new`.)
//
// With server.tls set, node's https server takes the same IncomingMessage/ServerResponse options
// (it runs http's request handling over TLS sockets), so the optimisation holds for HTTPS too.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Express } from 'express';
import type { TlsMaterial } from './tls.js';
import { copyWith } from '../domain/objects.js';

/** `proto` takes the place of the app's prototype `appProto`: the same methods and own properties. */
function adopt(proto: object, appProto: object): void {
  Object.setPrototypeOf(proto, Object.getPrototypeOf(appProto)); // express's req or res, then node's
  // `app`, and anything a user added (the class keeps its own constructor)
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(appProto))) if (key !== 'constructor') Object.defineProperty(proto, key, d);
}

export function createHttpServer(app: Express): Server;
export function createHttpServer(app: Express, tls: TlsMaterial | null): Server | HttpsServer;
export function createHttpServer(app: Express, tls: TlsMaterial | null = null): Server | HttpsServer {
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse {}
  adopt(AppRequest.prototype, app.request);
  adopt(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype as unknown as typeof app.request;
  app.response = AppResponse.prototype as unknown as typeof app.response;
  const classes = { IncomingMessage: AppRequest, ServerResponse: AppResponse };
  // The decision endpoints are answered before any express machinery when the app has a decision
  // table (src/app.ts sets app.locals.decisionDispatch); every other request goes to the app unchanged.
  const fast = (app.locals as { decisionDispatch?: (req: IncomingMessage, res: ServerResponse) => boolean }).decisionDispatch;
  const listener = fast
    ? (req: IncomingMessage, res: ServerResponse) => {
        if (!fast(req, res)) app(req, res);
      }
    : app;
  return tls ? createHttpsServer(copyWith(classes, { cert: tls.cert, key: tls.key }), listener) : createServer(classes, listener);
}
