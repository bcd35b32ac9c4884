// A token's live sessions (GET /api/sessions?tokenId=), paged, each one cut after a confirmation
// (DELETE /api/sessions/{id}): the media server drops it and the credential is held a while.
import { useEffect, useState } from 'preact/hooks';
import { api, query, type Paged, type SessionView } from './api';
import { ConfirmDialog, ErrorNotice, Notice, formatTime, useAsync } from './components';

const PAGE_SIZE = 25;

/** Whom the hold that follows a cut refuses (docs/api.md#running-sessions). */
const heldFrom = (s: SessionView) => (s.clientIp ? `from ${s.clientIp}` : 'from every address (the client address is unknown)');

export function LiveSessions({ tokenId }: { tokenId: number }) {
  const [page, setPage] = useState(1);
  const [pending, setPending] = useState<SessionView | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const list = useAsync(() => api.get<Paged<SessionView>>(`/api/sessions?${query({ tokenId, page, itemsOnPage: PAGE_SIZE })}`), [tokenId, page]);
  const rows = list.data?.data ?? [];
  const totalPages = list.data?.pagination.totalPages ?? 0;

  // A cut can empty the last page: show the one before it.
  useEffect(() => {
    if (!list.loading && list.data && rows.length === 0 && page > 1) setPage((n) => n - 1);
  }, [list.loading, list.data]);

  const cut = async () => {
    const s = pending;
    setPending(null);
    if (!s) return;
    setMessage('');
    setError(null);
    try {
      await api.del<SessionView>(`/api/sessions/${encodeURIComponent(s.id)}`);
      setMessage(`Session ${s.id} cut; token ${tokenId} is refused ${heldFrom(s)} for a while.`);
    } catch (x) {
      setError(x);
    }
    list.reload();
  };

  return (
    <section class="sessions" aria-labelledby="live-sessions-title">
      <h3 id="live-sessions-title">Live sessions</h3>
      <p class="hint">Publishers and viewers admitted with this token through a media server that names its connections.</p>
      <div class="toolbar">
        <button type="button" onClick={() => {
          setMessage('');
          setError(null);
          list.reload();
        }}>
          Reload sessions
        </button>
      </div>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={error} />
      <ErrorNotice error={list.error} />
      <table aria-label={`Live sessions of token ${tokenId}`} aria-busy={list.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Direction</th>
            <th scope="col">Stream</th>
            <th scope="col">Client address</th>
            <th scope="col">Protocol</th>
            <th scope="col">Caller</th>
            <th scope="col">Started</th>
            <th scope="col">Last seen</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.id}>
              <td class="mono">{s.id}</td>
              <td>{s.direction}</td>
              <td class="mono">{s.streamName}</td>
              <td class="mono">{s.clientIp ?? '—'}</td>
              <td>{s.protocol ?? '—'}</td>
              <td>{s.caller}</td>
              <td>{formatTime(s.startedAt)}</td>
              <td>{formatTime(s.lastSeenAt)}</td>
              <td>
                <button type="button" class="danger" aria-label={`Cut session ${s.id}`} onClick={() => setPending(s)}>
                  Cut
                </button>
              </td>
            </tr>
          ))}
          {!list.loading && rows.length === 0 && (
            <tr>
              <td colSpan={9}>No live session of this token.</td>
            </tr>
          )}
        </tbody>
      </table>
      {totalPages > 1 && (
        <nav class="pager" aria-label="Pages of live sessions">
          <button type="button" disabled={page === 1} onClick={() => setPage((n) => n - 1)}>
            Earlier sessions
          </button>
          <span aria-live="polite">
            Page {page} of {totalPages}
          </span>
          <button type="button" disabled={page >= totalPages} onClick={() => setPage((n) => n + 1)}>
            Later sessions
          </button>
        </nav>
      )}
      <ConfirmDialog
        open={pending !== null}
        titleId="cut-session-title"
        title={`Cut session ${pending?.id ?? ''}?`}
        confirmLabel="Cut session"
        danger
        onConfirm={() => void cut()}
        onCancel={() => setPending(null)}
      >
        {pending && (
          <>
            <p>
              The {pending.direction === 'publish' ? 'publisher' : 'viewer'} of “{pending.streamName}”{pending.clientIp ? ` at ${pending.clientIp}` : ''} (
              {pending.caller}
              {pending.protocol ? `, ${pending.protocol}` : ''}) ends now: its media server drops it through the server's API when sessions.servers
              names that server, otherwise at the connection's next re-ask.
            </p>
            <p>
              Token {tokenId} is then refused {heldFrom(pending)} for a while (enforcement.terminatedHoldSeconds, 60 seconds unless configured
              otherwise), or until the token is updated.
            </p>
          </>
        )}
      </ConfirmDialog>
    </section>
  );
}
