// Live streams: the publish tokens publishing now (/api/publish_token/active/all), with their records,
// and the streams the session registry knows live (/api/monitoring/streams), each stopped after a
// confirmation (POST /api/stream/stop).
import { useState } from 'preact/hooks';
import { api, type LiveStream, type Paged, type TokenRecord } from './api';
import { ConfirmDialog, ErrorNotice, Notice, formatTime, useAsync } from './components';
import { navigate } from './router';

interface Live {
  id: number;
  token?: TokenRecord;
}

/** The most streams the monitoring route gives in one page. */
const STREAMS_SHOWN = 100;

async function loadLive(): Promise<Live[]> {
  const { tokenIds } = await api.get<{ tokenIds: number[] }>('/api/publish_token/active/all');
  // A token deleted while its stream still runs has no record any more: shown by id only.
  return Promise.all(tokenIds.map(async (id) => ({ id, token: await api.get<TokenRecord>(`/api/publish_token/${id}`).catch(() => undefined) })));
}

export function LivePage() {
  const live = useAsync(loadLive, []);
  const streams = useAsync(() => api.get<Paged<LiveStream>>(`/api/monitoring/streams?sortBy=StreamId&isDescending=false&itemsOnPage=${STREAMS_SHOWN}`), []);
  const [stopping, setStopping] = useState<LiveStream | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const rows = live.data ?? [];
  const streamRows = streams.data?.data ?? [];
  const totalStreams = streams.data?.pagination.totalItems ?? 0;

  const reload = () => {
    live.reload();
    streams.reload();
  };
  const stop = async () => {
    const s = stopping;
    setStopping(null);
    if (!s) return;
    setMessage('');
    setError(null);
    try {
      const r = await api.post<{ stoppingLevel: string | null }>('/api/stream/stop', { streamId: s.streamId });
      setMessage(r.stoppingLevel === 'Stream' ? `Stream ${s.streamName} stopped.` : `Stream ${s.streamName} had no live publisher left to stop.`);
    } catch (x) {
      setError(x);
    }
    reload();
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Live streams
      </h1>
      <p class="lead">Publish tokens publishing at least one stream now, as the media servers reported it.</p>
      <div class="toolbar">
        <button type="button" onClick={() => {
          setMessage('');
          setError(null);
          reload();
        }}>
          Reload
        </button>
      </div>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={error} />
      <ErrorNotice error={live.error} />
      <table aria-label="Publish tokens publishing now" aria-busy={live.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Token id</th>
            <th scope="col">Label</th>
            <th scope="col">Streams allowed</th>
            <th scope="col">Added on</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ id, token }) => (
            <tr key={id}>
              <td>{id}</td>
              <td>{token?.label ?? '(deleted token)'}</td>
              <td class="mono">{token ? token.streams.map((s) => (s.isRegex ? `/${s.streamName}/` : s.streamName)).join(', ') : ''}</td>
              <td>{formatTime(token?.addedOn)}</td>
              <td>
                {token && (
                  <button type="button" aria-label={`Check access of token ${id}`} onClick={() => navigate('check', { kind: 'publish', id: String(id) })}>
                    Check access
                  </button>
                )}
              </td>
            </tr>
          ))}
          {!live.loading && rows.length === 0 && (
            <tr>
              <td colSpan={5}>No publish token is publishing now.</td>
            </tr>
          )}
        </tbody>
      </table>

      <h2 id="live-streams-title">Streams with a live session</h2>
      <p class="hint">Streams published through a media server that names its connections; stopping one disconnects its publishers.</p>
      <ErrorNotice error={streams.error} />
      <table aria-labelledby="live-streams-title" aria-busy={streams.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Stream</th>
            <th scope="col">Publishers</th>
            <th scope="col">Viewers</th>
            <th scope="col">Started</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {streamRows.map((s) => (
            <tr key={s.streamId}>
              <td class="mono">{s.streamName}</td>
              <td>{s.feeds.length}</td>
              <td>{s.viewerCount}</td>
              <td>{formatTime(s.startTime)}</td>
              <td>
                <button type="button" class="danger" aria-label={`Stop stream ${s.streamName}`} onClick={() => setStopping(s)}>
                  Stop
                </button>
              </td>
            </tr>
          ))}
          {!streams.loading && streamRows.length === 0 && (
            <tr>
              <td colSpan={5}>No stream has a live session now.</td>
            </tr>
          )}
        </tbody>
      </table>
      {totalStreams > streamRows.length && (
        <p class="muted">
          The first {streamRows.length} of {totalStreams} streams, by name.
        </p>
      )}
      <ConfirmDialog
        open={stopping !== null}
        title={`Stop stream ${stopping?.streamName ?? ''}?`}
        confirmLabel="Stop stream"
        danger
        onConfirm={() => void stop()}
        onCancel={() => setStopping(null)}
      >
        <p>
          Its publishers are disconnected (through the media server's API when sessions.servers names the server, otherwise at the
          connection's next re-ask), and their tokens are refused from those addresses for a while (enforcement.terminatedHoldSeconds, 60
          seconds unless configured otherwise), or until the token is updated. Viewers lose the stream.
        </p>
      </ConfirmDialog>
    </section>
  );
}
