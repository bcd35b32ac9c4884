// Prometheus metrics: one Registry per app (tests build many apps). Label values come only from
// small fixed sets (actions, adapters, reasons, route patterns): never tokens, accounts or streams.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The child of a labelled metric for one set of label values, made once: prom-client otherwise
 * hashes a label object on every call (a few µs per decision in a CPU profile; docs/performance.md). Label
 * values come from small fixed sets, so the map stays small.
 */
function children<C>(make: (values: string[]) => C): (...values: string[]) => C {
  const cache = new Map<string, C>();
  return (...values) => {
    const key = values.join('\u0000');
    let c = cache.get(key);
    if (c === undefined) {
      c = make(values);
      cache.set(key, c);
    }
    return c;
  };
}

/**
 * A counter's increments kept as plain numbers and handed to prom-client when it is read (its
 * `collect`, run at every scrape): prom-client hashes the label values on every inc, even through
 * a child (~0.6 µs), and the decision path counts two or three things per request
 * (docs/performance.md). What a scrape shows is exact as of that scrape.
 */
class Tally {
  private readonly pending = new Map<string, { values: string[]; n: number }>();

  constructor(private readonly counter: () => Counter<string>) {}

  inc(...values: string[]): void {
    const key = values.join('\u0000');
    const e = this.pending.get(key);
    if (e !== undefined) e.n++;
    else this.pending.set(key, { values, n: 1 });
  }

  flush(): void {
    for (const e of this.pending.values()) {
      if (e.n === 0) continue;
      this.counter().labels(...e.values).inc(e.n);
      e.n = 0;
    }
  }
}

export class Metrics {
  private readonly decisionTally = new Tally(() => this.decisions);
  private readonly cacheTally = new Tally(() => this.cacheLookups);
  private readonly httpTally = new Tally(() => this.httpRequests);
  readonly registry = new Registry();
  readonly decisions = new Counter({
    name: 'streamgate_decisions_total',
    help: 'Access decisions by action, adapter, result, reason and kind (full: decided with the token; credential: a viewer session credential checked in memory)',
    labelNames: ['action', 'adapter', 'result', 'reason', 'kind'] as const,
    registers: [this.registry],
    collect: () => this.decisionTally.flush(),
  });
  readonly decisionSeconds = new Histogram({
    name: 'streamgate_decision_duration_seconds',
    help: 'Time to decide, from access request to decision',
    labelNames: ['adapter', 'result'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: 'streamgate_store_errors_total',
    help: 'Store calls on the decision path that failed or timed out',
    registers: [this.registry],
  });
  readonly cacheLookups = new Counter({
    name: 'streamgate_token_cache_total',
    help: 'Token cache lookups on the decision path',
    labelNames: ['result'] as const,
    registers: [this.registry],
    collect: () => this.cacheTally.flush(),
  });
  readonly lifecycleDropped = new Counter({
    name: 'streamgate_lifecycle_dropped_total',
    help: 'Lifecycle signals dropped (queue full or failed to apply)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'streamgate_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result (success, failure, timeout, refused, dropped)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly webhookQueue = new Gauge({
    name: 'streamgate_webhook_queue_depth',
    help: 'Webhook deliveries waiting for a free slot',
    registers: [this.registry],
  });
  /** Read at each scrape: the logger's count of lines lost to a stalled or vanished sink. */
  private readonly logLinesDroppedFrom: () => number;
  private logLinesDroppedSeen = 0;
  readonly logLinesDropped = new Counter({
    name: 'streamgate_log_lines_dropped_total',
    help: 'Log lines dropped because the log sink (stdout) was stalled or gone',
    registers: [this.registry],
    collect: () => {
      const total = this.logLinesDroppedFrom();
      if (total > this.logLinesDroppedSeen) this.logLinesDropped.inc(total - this.logLinesDroppedSeen);
      this.logLinesDroppedSeen = Math.max(total, this.logLinesDroppedSeen);
    },
  });
  /** Where the active-sessions gauge reads its counts at each scrape (the session registry). */
  private sessionCountsFrom: () => Promise<Array<{ caller: string; action: string; count: number }>> = async () => [];
  readonly sessionsActive = new Gauge({
    name: 'streamgate_sessions_active',
    help: 'Live sessions in the session registry (every instance), by caller and action',
    labelNames: ['caller', 'action'] as const,
    registers: [this.registry],
    collect: async () => {
      this.sessionsActive.reset();
      try {
        for (const c of await this.sessionCountsFrom()) this.sessionsActive.set({ caller: c.caller, action: c.action }, c.count);
      } catch {
        // the store does not answer: the gauge is left empty for this scrape
      }
    },
  });
  readonly sessionTerminations = new Counter({
    name: 'streamgate_session_terminations_total',
    help: 'Sessions Streamgate ended, by trigger (delete, disable, refresh, expire, secretDeleted, stop, replace) and result (ended, already_ended)',
    labelNames: ['trigger', 'result'] as const,
    registers: [this.registry],
  });
  readonly sessionCuts = new Counter({
    name: 'streamgate_session_cuts_total',
    help: "Calls to a media server's API to drop a session, by caller and outcome (cut, gone, unsupported, failed, no_server)",
    labelNames: ['caller', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly credentialRefusals = new Counter({
    name: 'streamgate_viewer_credential_refusals_total',
    help: 'Viewer-session credentials that did not hold, by reason (credential_invalid, credential_expired, credential_address, session_ended, session_terminated, token_*); the request was then decided in full',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'streamgate_http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
    collect: () => this.httpTally.flush(),
  });

  readonly httpSeconds = new Histogram({
    name: 'streamgate_http_request_duration_seconds',
    help: 'Time from a request reaching the app to its answer being written, by route pattern',
    labelNames: ['route'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  private readonly decisionSecondsChild = children((v) => this.decisionSeconds.labels(...v));
  private readonly httpSecondsChild = children((v) => this.httpSeconds.labels(...v));

  /** Counts one full decision (the token resolved and the policy asked) and its duration. */
  decided(action: string, adapter: string, result: string, reason: string, seconds: number): void {
    this.decisionTally.inc(action, adapter, result, reason, 'full');
    this.decisionSecondsChild(adapter, result).observe(seconds);
  }

  /** Counts one viewer-session credential check (no store, no policy; refreshes included). */
  credentialChecked(action: string, adapter: string, result: string, reason: string): void {
    this.decisionTally.inc(action, adapter, result, reason, 'credential');
  }

  cacheLookup(result: 'hit' | 'miss'): void {
    this.cacheTally.inc(result);
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpTally.inc(route, method, String(status));
    this.httpSecondsChild(route).observe(seconds);
  }

  /** The active-sessions gauge reads `counts` at each scrape. */
  watchSessions(counts: () => Promise<Array<{ caller: string; action: string; count: number }>>): void {
    this.sessionCountsFrom = counts;
  }

  constructor(opts: { defaultMetrics?: boolean; logLinesDropped?: () => number } = {}) {
    this.logLinesDroppedFrom = opts.logLinesDropped ?? (() => 0);
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }
}
