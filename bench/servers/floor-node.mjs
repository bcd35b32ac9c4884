// The floor: a bare node:http server that reads and parses the request body like Streamgate's
// endpoints do (JSON or form) and answers 200 with a small JSON body.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const type = req.headers['content-type'] ?? '';
    let parsed = null;
    if (raw.length > 0) parsed = type.includes('json') ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw));
    const body = JSON.stringify({ allowed: parsed !== undefined });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port })));
