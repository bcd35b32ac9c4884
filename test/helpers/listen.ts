// Serves an express app on a real port of 127.0.0.1 (keep-alive sockets, real TCP peers), for tests
// that drive load with fetch or need the socket address rather than supertest's in-process calls.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createHttpServer } from '../../src/http/server.js';

export interface Listening {
  base: string;
  server: Server;
  close(): Promise<void>;
}

export async function listen(app: Express, host = '127.0.0.1'): Promise<Listening> {
  const server = await new Promise<Server>((resolve) => {
    // The production server (src/http/server.ts): requests born with the app's prototypes.
    const s = createHttpServer(app).listen(0, host, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One JSON call; the body is parsed when it is JSON, else kept as text. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { secret?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const r = await fetch(base + path, {
    method,
    headers: {
      ...(opts.secret ? { authorization: `Bearer ${opts.secret}` } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, body, ms: performance.now() - started };
}
