// A TCP proxy in front of a server (Redis, for the slow-store fault tests) that holds every chunk of
// the server's replies for `delayMs` before passing it on, in order. Requests go through at once.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface DelayProxy {
  port: number;
  url: string;
  /** The delay applied to replies from now on (0: none). Chunks already held keep their delay. */
  delayMs: number;
  close(): Promise<void>;
}

export async function startDelayProxy(target: { host: string; port: number }, scheme = 'redis'): Promise<DelayProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: DelayProxy = { port: 0, url: '', delayMs: 0, close: async () => {} };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    // Replies leave in the order they came, each no earlier than its own arrival + delay.
    let lastRelease = 0;
    upstream.on('data', (chunk: Buffer) => {
      const release = Math.max(Date.now() + proxy.delayMs, lastRelease);
      lastRelease = release;
      const wait = release - Date.now();
      if (wait <= 0) client.write(chunk);
      else setTimeout(() => client.writable && client.write(chunk), wait);
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.url = `${scheme}://127.0.0.1:${proxy.port}`;
  proxy.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return proxy;
}
