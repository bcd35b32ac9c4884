// Prometheus metrics: one Registry per app (tests build many apps). Label values come only from
// small fixed sets (actions, adapters, reasons, route patterns): never tokens, accounts or streams.
import { Counter, Gauge, type Metric, Registry, collectDefaultMetrics } from 'prom-client';

type LabelValue = string | number;

/**
 * One entry per set of label values, found through one Map per label keyed by that label's value:
 * a lookup builds no joined string and, once the set has been seen, allocates nothing (prom-client
 * hashes a label object on every call, even through a child; docs/performance.md). Label values
 * come from small fixed sets, so the maps stay small. `all` lists the entries in first-seen order,
 * the order prom-client itself prints series in.
 */
class LabelSets<T> {
  private readonly root = new Map<LabelValue, unknown>();
  readonly all: T[] = [];

  constructor(
    private readonly size: number,
    private readonly make: (values: string[]) => T,
  ) {
    if (size < 1 || size > 5) throw new Error('LabelSets: 1 to 5 labels');
  }

  at(v0: LabelValue, v1: LabelValue = '', v2: LabelValue = '', v3: LabelValue = '', v4: LabelValue = ''): T {
    // one map per label but the last, whose value keys the entry (no array built per call)
    const n = this.size;
    let node = this.root;
    if (n > 1) node = step(node, v0);
    if (n > 2) node = step(node, v1);
    if (n > 3) node = step(node, v2);
    if (n > 4) node = step(node, v3);
    const last = n === 1 ? v0 : n === 2 ? v1 : n === 3 ? v2 : n === 4 ? v3 : v4;
    let e = node.get(last) as T | undefined;
    if (e === undefined) {
      e = this.make([v0, v1, v2, v3, v4].slice(0, n).map(String));
      node.set(last, e);
      this.all.push(e);
    }
    return e;
  }
}

function step(node: Map<LabelValue, unknown>, v: LabelValue): Map<LabelValue, unknown> {
  let next = node.get(v) as Map<LabelValue, unknown> | undefined;
  if (next === undefined) {
    next = new Map();
    node.set(v, next);
  }
  return next;
}

/**
 * A counter's increments kept as plain numbers and handed to prom-client when it is read (its
 * `collect`, run at every scrape): prom-client hashes the label values on every inc, even through
 * a child, and the decision path counts two or three things per request
 * (docs/decision-path.md#what-the-decision-path-does-to-be-fast). What a scrape shows is exact as of that scrape.
 */
class Tally {
  private readonly sets: LabelSets<{ values: string[]; n: number }>;

  constructor(
    labels: number,
    private readonly counter: () => Counter<string>,
  ) {
    this.sets = new LabelSets(labels, (values) => ({ values, n: 0 }));
  }

  inc(v0: LabelValue, v1?: LabelValue, v2?: LabelValue, v3?: LabelValue, v4?: LabelValue): void {
    this.sets.at(v0, v1, v2, v3, v4).n++;
  }

  flush(): void {
    for (const e of this.sets.all) {
      if (e.n === 0) continue;
      this.counter().labels(...e.values).inc(e.n);
      e.n = 0;
    }
  }
}

/** One label set's share of a BatchedHistogram: per-bucket counts (not cumulative), sum and count. */
class HistogramSeries {
  /** One slot per bound and one past the last bound (values above every bound). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** Whether the series is printed: set by its first observation since the last reset. */
  listed = false;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
    private readonly owner: BatchedHistogram,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const b = this.bounds;
    let i = 0;
    // Most observations land in the first few buckets, so a linear scan beats a binary search.
    while (i < b.length && value > b[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
    if (!this.listed) this.owner.list(this);
  }
}

/**
 * A histogram kept as plain per-bucket counts and handed to prom-client's registry only when it is
 * read: prom-client's Histogram.observe hashes its label object on every call, even through a
 * child, and every request observes one or two (docs/decision-path.md#what-the-decision-path-does-to-be-fast,
 * "Histograms batched like the counters"). `get()` returns exactly what
 * prom-client's Histogram returns for the same observations (series in first-observed order,
 * cumulative `le` buckets, `+Inf`, `_sum`, `_count`), so /metrics prints the same text.
 */
export class BatchedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets: readonly number[];
  private readonly sets: LabelSets<HistogramSeries>;
  /** The series printed, in the order of their first observation since the last reset. */
  private listed: HistogramSeries[] = [];

  constructor(config: { name: string; help: string; labelNames: readonly string[]; buckets: readonly number[]; registers: Registry[] }) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = [...config.labelNames];
    this.buckets = [...config.buckets];
    if (this.buckets.some((b, i) => i > 0 && b <= this.buckets[i - 1])) throw new Error(`${config.name}: buckets must ascend`);
    this.sets = new LabelSets(this.labelNames.length, (values) => {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => {
        labels[n] = values[i];
      });
      return new HistogramSeries(labels, this.buckets, this);
    });
    // prom-client's registry reads a metric through get() and reset() alone.
    for (const r of config.registers) r.registerMetric(this as unknown as Metric);
  }

  /** The series for one set of label values (in labelNames order); hold it, or look it up per call. */
  at(v0: LabelValue, v1?: LabelValue): HistogramSeries {
    return this.sets.at(v0, v1);
  }

  /** @internal called by a series at its first observation since the last reset. */
  list(s: HistogramSeries): void {
    s.listed = true;
    this.listed.push(s);
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: HistogramValue[] }> {
    const values: HistogramValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.listed) {
      let acc = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        acc += s.counts[i];
        values.push({ labels: { le: this.buckets[i], ...s.labels }, value: acc, metricName: bucket, exemplar: null });
      }
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    for (const s of this.listed) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
      s.listed = false;
    }
    this.listed = [];
  }
}

type HistogramValue = {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
};

export class Metrics {
  private readonly decisionTally = new Tally(5, () => this.decisions);
  private readonly cacheTally = new Tally(1, () => this.cacheLookups);
  private readonly httpTally = new Tally(3, () => this.httpRequests);
  readonly registry = new Registry();
  readonly decisions = new Counter({
    name: 'streamgate_decisions_total',
    help: 'Access decisions by action, adapter, result, reason and kind (full: decided with the token; credential: a viewer session credential checked in memory)',
    labelNames: ['action', 'adapter', 'result', 'reason', 'kind'] as const,
    registers: [this.registry],
    collect: () => this.decisionTally.flush(),
  });
  readonly decisionSeconds = new BatchedHistogram({
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
    help: 'Sessions Streamgate ended, by trigger (delete, disable, refresh, expire, secretDeleted, stop, replace, sharing) and result (ended, already_ended)',
    labelNames: ['trigger', 'result'] as const,
    registers: [this.registry],
  });
  readonly sharingFlags = new Counter({
    name: 'streamgate_sharing_flags_total',
    help: 'Credentials flagged as shared (docs/api.md#token-sharing), once per credential and window, by the action taken (notify, limit, disable)',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  readonly sharingUses = new Counter({
    name: 'streamgate_sharing_uses_total',
    help: 'Uses offered to token-sharing detection, by outcome: recorded (written to the window), dropped (the queue was full), failed (the store did not take them)',
    labelNames: ['outcome'] as const,
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
  /** Read at each scrape: the decision history's tallies by outcome (docs/api.md#decision-history). */
  private historyFrom: () => Record<string, number> = () => ({});
  private readonly historySeen = new Map<string, number>();
  readonly historyEntries = new Counter({
    name: 'streamgate_history_entries_total',
    help: 'Decisions offered to the decision history, by outcome: kept (written), unchecked (written though the store did not say whether its account exists), rate (over the per-account rate), queue (the write queue was full), failed (the history store did not take the batch), no_account (an account that does not exist)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [outcome, total] of Object.entries(this.historyFrom())) {
        const seen = this.historySeen.get(outcome) ?? 0;
        if (total > seen) this.historyEntries.inc({ outcome }, total - seen);
        this.historySeen.set(outcome, Math.max(total, seen));
      }
    },
  });
  readonly httpRequests = new Counter({
    name: 'streamgate_http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
    collect: () => this.httpTally.flush(),
  });

  readonly httpSeconds = new BatchedHistogram({
    name: 'streamgate_http_request_duration_seconds',
    help: 'Time from a request reaching the app to its answer being written, by route pattern',
    labelNames: ['route'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  /** Counts one full decision (the token resolved and the policy asked) and its duration. */
  decided(action: string, adapter: string, result: string, reason: string, seconds: number): void {
    this.decisionTally.inc(action, adapter, result, reason, 'full');
    this.decisionSeconds.at(adapter, result).observe(seconds);
  }

  /** Counts one viewer-session credential check (no store, no policy; refreshes included). */
  credentialChecked(action: string, adapter: string, result: string, reason: string): void {
    this.decisionTally.inc(action, adapter, result, reason, 'credential');
  }

  cacheLookup(result: 'hit' | 'miss'): void {
    this.cacheTally.inc(result);
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpTally.inc(route, method, status);
    this.httpSeconds.at(route).observe(seconds);
  }

  /** The history counter reads `tallies` (running totals by outcome) at each scrape. */
  watchHistory(tallies: () => Record<string, number>): void {
    this.historyFrom = tallies;
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
