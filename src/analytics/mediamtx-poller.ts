// MediaMTX has no byte-count hook, so usage for its sessions is derived by diffing the Control API
// counters between polls; an unreachable API pauses accounting instead of failing the service.
export interface UsageDelta {
  sessionId: string;
  bytesOut: number;
  bytesIn: number;
  at: number;
}

export interface PollerOptions {
  apiUrl: string; // e.g. http://127.0.0.1:9997 (no trailing slash needed)
  intervalMs: number;
  itemsPerPage?: number; // default 100
  requestTimeoutMs?: number; // default 5000
  /** The first successful poll only records readings (set when the process may have restarted). */
  baselineFirstPoll?: boolean;
  now?: () => number;
  logger: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

// Every list whose items are what a client was admitted as (the id MediaMTX sent on the auth call).
// `rtspconns` is left out: its counters overlap those of the RTSP sessions carried on it.
const ENDPOINTS = [
  '/v3/rtmpconns/list',
  '/v3/rtmpsconns/list',
  '/v3/rtspsessions/list',
  '/v3/rtspssessions/list',
  '/v3/srtconns/list',
  '/v3/webrtcsessions/list',
  '/v3/hlssessions/list',
] as const;

// A misbehaving API answering an absurd pageCount must not turn one poll into an endless loop.
const MAX_PAGES = 10_000;

interface Reading {
  out: number;
  in: number;
}

interface Page {
  pageCount: number;
  itemCount: unknown;
  items: unknown[];
}

class ApiError extends Error {
  override name = 'MediamtxApiError';
}

/** First of the candidates that is a usable counter; MediaMTX < 1.17 only has the old names. */
function counter(...values: unknown[]): number {
  for (const v of values) {
    if (v === undefined || v === null) continue;
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
  }
  return 0;
}

/** fetch() wraps socket errors as "fetch failed"; the cause (ECONNREFUSED, ...) is what helps. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) return `${err.message}: ${cause.message}`;
  return err.message;
}

export class MediamtxPoller {
  private readonly base: string;
  /** The URL as it may appear in logs: any credentials are stripped out of it. */
  private readonly logUrl: string;
  private readonly headers: Record<string, string> = { accept: 'application/json' };
  private readonly itemsPerPage: number;
  private readonly requestTimeoutMs: number;
  private readonly now: () => number;

  private readonly readings = new Map<string, Reading>();
  private baselined = false;
  /** Lists this server does not have (older version, or the protocol is disabled). */
  private readonly missing = new Set<string>();
  private down = false;

  /** Tail of the poll chain: polls run strictly one after another, whoever asks for them. */
  private tail: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** Bumped by start() and stop() so a poll finishing after stop() cannot re-arm an old loop. */
  private generation = 0;
  private running = false;

  constructor(
    private readonly opts: PollerOptions,
    private readonly sink: (deltas: UsageDelta[]) => Promise<void>,
  ) {
    if (!(opts.intervalMs > 0)) throw new RangeError('intervalMs must be > 0');
    this.itemsPerPage = opts.itemsPerPage ?? 100;
    if (!Number.isInteger(this.itemsPerPage) || this.itemsPerPage < 1) {
      throw new RangeError('itemsPerPage must be a positive integer');
    }
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 5000;
    this.now = opts.now ?? Date.now;

    // fetch() refuses URLs with user:pass@, yet that is the natural way to configure an API behind
    // MediaMTX auth; move them to a Basic header so they never show up in a logged URL either.
    const url = new URL(opts.apiUrl);
    if (url.username || url.password) {
      const user = decodeURIComponent(url.username);
      const pass = decodeURIComponent(url.password);
      this.headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    url.search = '';
    url.hash = '';
    this.base = url.toString().replace(/\/+$/, '');
    this.logUrl = this.base;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const gen = ++this.generation;
    this.tick(gen);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.tail;
  }

  pollOnce(): Promise<void> {
    const run = this.tail.then(() =>
      this.poll().catch((err: unknown) => this.safeLog('warn', { err }, 'mediamtx usage poll failed')),
    );
    this.tail = run;
    return run;
  }

  private tick(gen: number): void {
    this.timer = undefined;
    const startedAt = performance.now();
    void this.pollOnce().then(() => {
      if (gen !== this.generation) return;
      // Keep the cadence of intervalMs from poll start to poll start; a slow poll is followed at
      // once by the next one rather than overlapping it.
      const wait = Math.max(0, this.opts.intervalMs - (performance.now() - startedAt));
      this.timer = setTimeout(() => this.tick(gen), wait);
      this.timer.unref();
    });
  }

  /** One poll; never rejects (a start()ed loop has nobody to report to). */
  private async poll(): Promise<void> {
    let current: Map<string, Reading>;
    let stable: boolean;
    try {
      ({ current, stable } = await this.collect());
    } catch (err) {
      // Readings are left as they were: once the API is back, the next diff covers the outage.
      if (!this.down) {
        this.down = true;
        this.safeLog('warn', { apiUrl: this.logUrl, err }, 'mediamtx API unreachable; usage polling paused');
      }
      return;
    }
    if (this.down) {
      this.down = false;
      this.safeLog('info', { apiUrl: this.logUrl }, 'mediamtx API back; usage polling resumed');
    }

    const at = this.now();
    const deltas: UsageDelta[] = [];
    // After a restart the connections already open were counted by the previous process up to its
    // last poll: their first reading here is a baseline, not news (no double count on restart).
    const baseline = this.opts.baselineFirstPoll === true && !this.baselined;
    this.baselined = true;
    for (const [id, cur] of current) {
      const last = this.readings.get(id);
      // No previous reading: everything since the connection started (it was admitted at auth
      // time). A counter below the last one means the id was re-created: count it from zero.
      const out = last && cur.out >= last.out ? cur.out - last.out : cur.out;
      const inb = last && cur.in >= last.in ? cur.in - last.in : cur.in;
      this.readings.set(id, cur);
      if (!baseline && (out !== 0 || inb !== 0)) deltas.push({ sessionId: id, bytesOut: out, bytesIn: inb, at });
    }
    // A list that changed while its pages were read can hide a live item (items shift down a page
    // when an earlier one closes); forgetting it would count its bytes twice when it shows up again.
    if (stable) {
      for (const id of this.readings.keys()) if (!current.has(id)) this.readings.delete(id);
    }

    if (deltas.length === 0) return;
    try {
      await this.sink(deltas);
    } catch (err) {
      // At-most-once: the readings above have already advanced, so these bytes are not offered
      // again. Retrying would need the sink to be idempotent, and double-billing is the worse error.
      this.safeLog('warn', { err, deltas: deltas.length }, 'usage sink failed; mediamtx usage deltas dropped');
    }
  }

  private async collect(): Promise<{ current: Map<string, Reading>; stable: boolean }> {
    const current = new Map<string, Reading>();
    let stable = true;
    for (const endpoint of ENDPOINTS) {
      if (this.missing.has(endpoint)) continue;
      let pageCount = 1;
      let itemCount: unknown;
      for (let page = 0; page < pageCount; page++) {
        const body = await this.getPage(endpoint, page);
        if (body === null) {
          this.missing.add(endpoint);
          break;
        }
        if (page === 0) {
          pageCount = body.pageCount;
          itemCount = body.itemCount;
        } else if (body.itemCount !== itemCount) {
          stable = false;
        }
        for (const item of body.items) {
          if (typeof item !== 'object' || item === null) continue;
          const it = item as Record<string, unknown>;
          if (typeof it.id !== 'string' || it.id === '') continue;
          const reading: Reading = {
            out: counter(it.outboundBytes, it.bytesSent),
            in: counter(it.inboundBytes, it.bytesReceived),
          };
          const seen = current.get(it.id);
          // Counters only grow, so of two sightings in one poll the larger is the later one.
          current.set(
            it.id,
            seen ? { out: Math.max(seen.out, reading.out), in: Math.max(seen.in, reading.in) } : reading,
          );
        }
      }
    }
    return { current, stable };
  }

  /** One page of a list, or null when the server has no such list. */
  private async getPage(endpoint: string, page: number): Promise<Page | null> {
    const path = `${endpoint}?page=${page}&itemsPerPage=${this.itemsPerPage}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.base + path, {
        headers: this.headers,
        redirect: 'error',
        signal: AbortSignal.timeout(this.requestTimeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw new ApiError(`GET ${path}: ${describe(err)}`);
    }
    if (res.status === 404 && page === 0) return null;
    if (res.status < 200 || res.status > 299) throw new ApiError(`GET ${path}: HTTP ${res.status}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Not the parser's message: V8 quotes the start of the text, and these bodies carry tokens.
      throw new ApiError(`GET ${path}: response is not JSON`);
    }
    const b = body as Partial<Page> | null;
    if (
      typeof b !== 'object' ||
      b === null ||
      !Array.isArray(b.items) ||
      typeof b.pageCount !== 'number' ||
      !Number.isInteger(b.pageCount) ||
      b.pageCount < 0 ||
      b.pageCount > MAX_PAGES
    ) {
      throw new ApiError(`GET ${path}: response is not a MediaMTX list`);
    }
    return { pageCount: b.pageCount, itemCount: b.itemCount, items: b.items };
  }

  /** A throwing logger must not turn into an unhandled rejection from the timer loop. */
  private safeLog(level: 'warn' | 'info', obj: object, msg: string): void {
    try {
      this.opts.logger[level](obj, msg);
    } catch {
      // nothing sensible left to do
    }
  }
}
