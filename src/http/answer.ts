// How the decision endpoints write their answers: the body serialized once and written together
// with the headers in one piece. express's res.json/res.send parse the content type for a
// charset, turn the body into a Buffer and write headers and body separately (writev); on the
// decision path that was a measurable share of the CPU time per request (a CPU profile
// against the express floor; docs/performance.md). The bytes and headers are the same as res.json / res.type().send().
import type { ServerResponse } from 'node:http';

function send(res: ServerResponse, status: number, type: string, text: string): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** A JSON answer (what res.status(status).json(body) writes). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** A plain-text answer (what res.status(status).type('text/plain').send(text) writes). */
export function sendText(res: ServerResponse, status: number, text: string): void {
  send(res, status, 'text/plain; charset=utf-8', text);
}
