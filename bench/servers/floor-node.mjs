// The floor: a bare node:http server that reads and parses the request body like Streamgate's
// endpoints do (JSON or form) and answers 200 with a small JSON body.
//   --timed        also times each request into a histogram with Streamgate's bucket bounds
//                  (streamgate_http_request_duration_seconds, labelled by path) and serves it at
//                  GET /metrics: the floor a server-side p99 is read beside
//                  (docs/performance.md#when-a-p99-target-is-not-judged)
//   --redis <url>  (with --timed) before answering, one round trip to Redis carrying one script of
//                  a session admission's weight: a counter, two records with an expiry, four sorted
//                  sets pruned and added to (the floor of a decision that writes to Redis)
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const timed = process.argv.includes('--timed');
const redisUrl = process.argv.includes('--redis') ? process.argv[process.argv.indexOf('--redis') + 1] : undefined;

/** Streamgate's request histogram bounds (s), so both p99s fall in the same buckets. */
const BOUNDS = [0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** By path: per-bucket counts (not cumulative), the last beyond every bound. */
const counts = new Map();
function observe(path, seconds) {
  let c = counts.get(path);
  if (c === undefined) {
    c = new Array(BOUNDS.length + 1).fill(0);
    counts.set(path, c);
  }
  let i = 0;
  while (i < BOUNDS.length && seconds > BOUNDS[i]) i++;
  c[i]++;
}
function metricsText() {
  const lines = [];
  for (const [path, c] of counts) {
    let sum = 0;
    for (let i = 0; i < BOUNDS.length; i++) {
      sum += c[i];
      lines.push(`streamgate_http_request_duration_seconds_bucket{le="${BOUNDS[i]}",route="${path}"} ${sum}`);
    }
    lines.push(`streamgate_http_request_duration_seconds_bucket{le="+Inf",route="${path}"} ${sum + c[BOUNDS.length]}`);
  }
  return `${lines.join('\n')}\n`;
}

const ADMISSION_WEIGHT = `redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'PX', 60000)
redis.call('SET', KEYS[3], ARGV[2], 'PX', 60000)
for i = 4, 7 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[3])
  redis.call('ZADD', KEYS[i], tonumber(ARGV[3]) + 60000, ARGV[2])
end
return 1`;
let redis;
if (redisUrl) {
  const { Redis } = await import('ioredis');
  redis = new Redis(redisUrl, { keyPrefix: 'floor:' });
  redis.defineCommand('admissionWeight', { numberOfKeys: 7, lua: ADMISSION_WEIGHT });
  await redis.ping();
}

createServer((req, res) => {
  const started = timed ? performance.now() : 0;
  if (timed && req.method === 'GET' && req.url === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(metricsText());
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const type = req.headers['content-type'] ?? '';
    let parsed = null;
    if (raw.length > 0) parsed = type.includes('json') ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw));
    if (redis) await redis.admissionWeight('uses', 'record', 'pointer', 'live', 'token', 'stream', 'gauge', raw, `${req.socket.remotePort}`, Date.now());
    const body = JSON.stringify({ allowed: parsed !== undefined });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    if (timed) observe(req.url.split('?')[0], (performance.now() - started) / 1000);
  });
}).listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port, timed, redis: redisUrl !== undefined })));
