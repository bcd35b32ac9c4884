// What every media-server stand-in shares: a node:http server on 127.0.0.1, the log of calls it
// received, and the fault knobs (hang: never answer; failNext: answer the next n calls with a status).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCall {
  method: string;
  /** The path as sent, percent-encoding kept, without the query. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | undefined>;
  /** performance.now() when the request arrived (backoff checks). */
  at: number;
}

export interface Answer {
  status: number;
  body?: string | object;
  headers?: Record<string, string>;
}

export interface StandIn {
  base: string;
  calls: ReceivedCall[];
  /** While true, requests are accepted and never answered. */
  hang: boolean;
  /** The next `n` requests are answered with `status` (and a short JSON error) instead. */
  failNext(n: number, status: number): void;
  close(): Promise<void>;
}

/**
 * `before`, when given, runs first and may answer instead of the route (e.g. MediaMTX asking its
 * HTTP authentication hook about an API call).
 */
export async function serveStandIn(
  route: (call: ReceivedCall, req: IncomingMessage) => Answer,
  before?: (call: ReceivedCall, req: IncomingMessage) => Promise<Answer | undefined>,
): Promise<StandIn> {
  let failing = { n: 0, status: 500 };
  const standIn: StandIn = {
    base: '',
    calls: [],
    hang: false,
    failNext(n, status) {
      failing = { n, status };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const call: ReceivedCall = {
      method: req.method ?? '',
      path: (req.url ?? '/').split('?')[0],
      query: Object.fromEntries(url.searchParams),
      headers: { authorization: req.headers.authorization },
      at: performance.now(),
    };
    standIn.calls.push(call);
    req.resume();
    if (standIn.hang) return; // the socket stays open, no byte is sent
    const respond = (answer: Answer): void => {
      const body = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    const type = typeof answer.body === 'object' ? 'application/json' : 'text/plain';
    res.writeHead(answer.status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...answer.headers });
      res.end(body);
    };
    if (failing.n > 0) {
      failing.n--;
      respond({ status: failing.status, body: { error: 'stand-in failure' } });
    } else if (before) {
      void before(call, req).then((a) => respond(a ?? route(call, req)));
    } else {
      respond(route(call, req));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  standIn.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}

/** The decoded Basic credentials of an Authorization header, or undefined. */
export function basicOf(header: string | undefined): string | undefined {
  const m = /^Basic (.+)$/.exec(header ?? '');
  return m ? Buffer.from(m[1], 'base64').toString('utf8') : undefined;
}
