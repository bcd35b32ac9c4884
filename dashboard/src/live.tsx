// Live streams: the publish tokens publishing now (/api/publish_token/active/all), with their records.
import { api, type TokenRecord } from './api';
import { ErrorNotice, formatTime, useAsync } from './components';
import { navigate } from './router';

interface Live {
  id: number;
  token?: TokenRecord;
}

async function loadLive(): Promise<Live[]> {
  const { tokenIds } = await api.get<{ tokenIds: number[] }>('/api/publish_token/active/all');
  // A token deleted while its stream still runs has no record any more: shown by id only.
  return Promise.all(tokenIds.map(async (id) => ({ id, token: await api.get<TokenRecord>(`/api/publish_token/${id}`).catch(() => undefined) })));
}

export function LivePage() {
  const live = useAsync(loadLive, []);
  const rows = live.data ?? [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Live streams
      </h1>
      <p class="lead">Publish tokens publishing at least one stream now, as the media servers reported it.</p>
      <div class="toolbar">
        <button type="button" onClick={live.reload}>
          Reload
        </button>
      </div>
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
    </section>
  );
}
