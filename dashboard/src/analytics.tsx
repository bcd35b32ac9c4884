// Bytes per tracking id and stream over a UTC date range: a table and a plain SVG bar chart.
import { useState } from 'preact/hooks';
import { ApiError, api, query, type UsageTotals } from './api';
import { ErrorNotice, Field, errorsFor, formatBytes, formatNumber, toList } from './components';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Row {
  trackingId: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

export function AnalyticsPage() {
  const [ids, setIds] = useState('');
  const [start, setStart] = useState(day(Date.now() - 30 * 86400000));
  // stopDate is exclusive: tomorrow includes today.
  const [stop, setStop] = useState(day(Date.now() + 86400000));
  const [rows, setRows] = useState<Row[] | null>(null);
  const [asked, setAsked] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const errors = error instanceof ApiError ? error.errors : {};

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const list = toList(ids);
      const data = await api.get<UsageTotals>(`/api/analytics/tracking/total?${query({ trackingIds: list, startDate: start, stopDate: stop })}`);
      setAsked(list);
      setRows(
        Object.entries(data).flatMap(([trackingId, streams]) =>
          streams.map((s) => ({ trackingId, streamName: s.streamName, bytesOut: s.standardStream.bytesOut, bytesIn: s.standardStream.bytesIn })),
        ),
      );
    } catch (x) {
      setRows(null);
      setError(x);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Analytics
      </h1>
      <p class="lead">Bytes delivered per tracking id and stream. Days are UTC; the stop date is not included.</p>
      <form class="panel" onSubmit={submit} noValidate aria-label="Analytics query">
        <div class="grid">
          <Field
            id="analytics-ids"
            label="Tracking ids"
            value={ids}
            onInput={setIds}
            hint="1 to 10, separated by commas."
            errors={errorsFor(errors, 'trackingIds', 'query')}
          />
          <Field id="analytics-start" label="Start date" type="date" value={start} onInput={setStart} errors={errorsFor(errors, 'startDate')} />
          <Field id="analytics-stop" label="Stop date (exclusive)" type="date" value={stop} onInput={setStop} errors={errorsFor(errors, 'stopDate')} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Show usage
          </button>
        </div>
      </form>
      <ErrorNotice error={error} fields={['trackingIds', 'query', 'startDate', 'stopDate']} />
      {rows && <Usage rows={rows} asked={asked} />}
    </section>
  );
}

function Usage({ rows, asked }: { rows: Row[]; asked: string[] }) {
  const empty = asked.filter((id) => !rows.some((r) => r.trackingId === id));
  const total = rows.reduce((n, r) => n + r.bytesOut, 0);
  return (
    <section class="panel" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      {rows.length === 0 ? (
        <p id="usage-empty">No usage for these tracking ids in this range.</p>
      ) : (
        <>
          <BarChart rows={rows} />
          <table aria-label="Bytes per tracking id and stream">
            <thead>
              <tr>
                <th scope="col">Tracking id</th>
                <th scope="col">Stream</th>
                <th scope="col" class="num">
                  Bytes out
                </th>
                <th scope="col" class="num">
                  Bytes in
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.trackingId}/${r.streamName}`}>
                  <td>{r.trackingId}</td>
                  <td>{r.streamName}</td>
                  <td class="num" title={formatBytes(r.bytesOut)}>
                    {formatNumber(r.bytesOut)}
                  </td>
                  <td class="num" title={formatBytes(r.bytesIn)}>
                    {formatNumber(r.bytesIn)}
                  </td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row" colSpan={2}>
                  Total
                </th>
                <td class="num">{formatNumber(total)}</td>
                <td class="num">{formatNumber(rows.reduce((n, r) => n + r.bytesIn, 0))}</td>
              </tr>
            </tfoot>
          </table>
        </>
      )}
      {empty.length > 0 && rows.length > 0 && <p class="muted">No usage for: {empty.join(', ')}.</p>}
    </section>
  );
}

/** Horizontal bars of bytes out per (tracking id, stream); the table above carries the exact figures. */
function BarChart({ rows }: { rows: Row[] }) {
  const sorted = [...rows].sort((a, b) => b.bytesOut - a.bytesOut);
  const max = Math.max(1, ...sorted.map((r) => r.bytesOut));
  const barH = 22;
  const gap = 8;
  const labelW = 200;
  const chartW = 420;
  const valueW = 90;
  const height = sorted.length * (barH + gap) + gap;
  return (
    <figure class="chart">
      <figcaption id="chart-caption">Bytes out per stream</figcaption>
      <svg
        role="img"
        aria-labelledby="chart-caption"
        viewBox={`0 0 ${labelW + chartW + valueW} ${height}`}
        width="100%"
        preserveAspectRatio="xMinYMin meet"
      >
        <title>Bytes out per stream</title>
        {sorted.map((r, i) => {
          const y = gap + i * (barH + gap);
          const w = Math.max(1, Math.round((r.bytesOut / max) * chartW));
          return (
            <g key={`${r.trackingId}/${r.streamName}`} class="bar">
              <title>{`${r.trackingId} / ${r.streamName}: ${formatNumber(r.bytesOut)} bytes`}</title>
              <text x={labelW - 8} y={y + barH / 2} text-anchor="end" dominant-baseline="middle">
                {`${r.trackingId} / ${r.streamName}`}
              </text>
              <rect x={labelW} y={y} width={w} height={barH} rx={3} />
              <text x={labelW + w + 6} y={y + barH / 2} dominant-baseline="middle" class="value">
                {formatBytes(r.bytesOut)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
