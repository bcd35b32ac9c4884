// A webhook receiver over real HTTPS on 127.0.0.1 with a throw-away self-signed certificate
// (trusted by Streamgate through webhooks.caFile). Records every request with its raw body.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface Receiver {
  url: string;
  caFile: string;
  received: Received[];
  /** How the next requests are answered (default 204). */
  respond: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

export function selfSignedCert(): { dir: string; cert: string; key: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-tls-'));
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return { dir, cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
}

export async function startReceiver(): Promise<Receiver> {
  const tls = selfSignedCert();
  const received: Received[] = [];
  const rec: Receiver = {
    url: '',
    caFile: tls.cert,
    received,
    respond: (_req, res) => {
      res.statusCode = 204;
      res.end();
    },
    close: async () => {},
  };
  const server: Server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      rec.respond(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rec.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rec.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return rec;
}
