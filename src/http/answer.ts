// How the decision endpoints write their answers: the body serialized once and written together
// with the headers in one piece. express's res.json/res.send parse the content type for a
// charset, turn the body into a Buffer and write headers and body separately (writev); on the
// decision path that was a measurable share of the CPU time per request
// (docs/decision-path.md#what-the-decision-path-does-to-be-fast). The bytes and headers are the same as res.json / res.type().send().
import type { ServerResponse } from 'node:http';

// The answers of one turn of the event loop are written together, once the turn has read every
// request that was ready (setImmediate runs right after that I/O phase). Each answer is still its
// own write on its own connection; what changes is when they happen. Written one by one, each
// write lands while the client is asleep and pays the kernel's wake-up of the other side (on a VM
// an inter-processor interrupt): the largest single cost per decision in a CPU profile under load.
// Written in a burst, only the first does (the gain, measured on a bare node:http server, is in
// docs/decision-path.md#what-the-decision-path-does-to-be-fast).
// An answer waits for at most the rest of its turn. In a turn that answers many slow requests (a
// write per admission), the queue is written whenever a new answer finds the oldest one waiting
// MAX_WAIT_MS or more, so batching adds little to the slowest answers.
const due: Array<{ res: ServerResponse; text: string }> = [];
/** When the oldest queued answer was queued (performance.now()). */
let oldest = 0;
const MAX_WAIT_MS = 0.25;

function writeDue(): void {
  // answers queued while these are written (none: end() calls back later) start the next batch
  const batch = due.splice(0, due.length);
  for (const a of batch) {
    try {
      a.res.end(a.text);
    } catch {
      a.res.destroy(); // this connection only: the rest of the batch still goes out
    }
  }
}

function send(res: ServerResponse, status: number, type: string, text: string): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(text));
  if (due.length === 0) {
    setImmediate(writeDue);
    oldest = performance.now();
  }
  due.push({ res, text });
  if (performance.now() - oldest >= MAX_WAIT_MS) writeDue();
}

/** A JSON answer (what res.status(status).json(body) writes). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** A plain-text answer (what res.status(status).type('text/plain').send(text) writes). */
export function sendText(res: ServerResponse, status: number, text: string): void {
  send(res, status, 'text/plain; charset=utf-8', text);
}
