// One HTTP/1.1 request written byte for byte over a socket, so no client library normalises the
// request target (resolves dot segments, re-encodes) before the server sees it.
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: string;
  /** The body as bytes (no chunked decoding: every server here answers with a length or closes). */
  body: Buffer;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export function rawRequest(port: number, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    s.on('data', (c) => chunks.push(c));
    s.on('error', reject);
    s.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split < 0 ? all.length : split).toString('latin1');
      const body = split < 0 ? Buffer.alloc(0) : all.subarray(split + 4);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]), headers: head, body, json });
    });
    const lines = [`${method} ${target} HTTP/1.1`, 'Host: streamgate.test', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    // write, not end: nginx takes a half-closed connection for a client that went away (499) and
    // answers nothing; "Connection: close" makes the server close once it has answered.
    s.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
  });
}
