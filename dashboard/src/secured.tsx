// Secured streams kept after their token (/api/secured_streams): the stream rules of deleted publish
// tokens that still secure viewing or hold viewers to country lists, each removable after a
// confirmation (removing opens what it kept; docs/api.md#secured-streams).
import { useState } from 'preact/hooks';
import { api } from './api';
import { ConfirmDialog, ErrorNotice, Notice, formatTime, useAsync } from './components';

interface SecuredStream {
  streamName: string;
  isRegex: boolean;
  tokenId: number;
  addedOn: string;
  subscribeRequiresAuth: boolean;
  allowedCountries: string[];
  deniedCountries: string[];
}

/** The most entries one page of the list route gives. */
const SHOWN = 100;

const rules = (s: SecuredStream): string =>
  [
    s.subscribeRequiresAuth ? 'subscribe token required' : '',
    s.allowedCountries.length > 0 ? `only ${s.allowedCountries.join(', ')}` : '',
    s.deniedCountries.length > 0 ? `not ${s.deniedCountries.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');

export function SecuredPage() {
  const list = useAsync(() => api.get<SecuredStream[]>(`/api/secured_streams?itemsOnPage=${SHOWN}`), []);
  const [removing, setRemoving] = useState<string | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const rows = list.data ?? [];

  const remove = async () => {
    const name = removing;
    setRemoving(null);
    if (name === null) return;
    setMessage('');
    setError(null);
    try {
      const removed = await api.del<SecuredStream[]>(`/api/secured_streams/${encodeURIComponent(name)}`);
      setMessage(`${removed.length} kept rule${removed.length === 1 ? '' : 's'} for ${name} removed: the streams it matched are open unless another rule secures them.`);
    } catch (x) {
      setError(x);
    }
    list.reload();
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Secured streams
      </h1>
      <p class="lead">
        Stream rules of deleted publish tokens that keep securing viewing or holding viewers to country lists. Disabling or deleting a
        publish token never opens its streams; removing a rule here does.
      </p>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={error} />
      <ErrorNotice error={list.error} />
      <table aria-label="Secured streams kept after their token" aria-busy={list.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Stream</th>
            <th scope="col">Rules</th>
            <th scope="col">From token</th>
            <th scope="col">Kept since</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={`${s.isRegex ? 'r' : 'e'}:${s.streamName}:${s.tokenId}`}>
              <td class="mono">{s.isRegex ? `/${s.streamName}/` : s.streamName}</td>
              <td>{rules(s)}</td>
              <td>{s.tokenId}</td>
              <td>{formatTime(s.addedOn)}</td>
              <td>
                <button type="button" class="danger" aria-label={`Remove the kept rules of ${s.streamName}`} onClick={() => setRemoving(s.streamName)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
          {!list.loading && rows.length === 0 && (
            <tr>
              <td colSpan={5}>No stream rule is kept after its token.</td>
            </tr>
          )}
        </tbody>
      </table>
      <ConfirmDialog
        open={removing !== null}
        title={`Open ${removing ?? ''}?`}
        confirmLabel="Remove kept rules"
        danger
        onConfirm={() => void remove()}
        onCancel={() => setRemoving(null)}
      >
        <p>
          Every kept rule named {removing} is removed, exact and pattern alike. Token-less viewers can then watch the streams it matched,
          segments and recordings on disk included, unless a publish token or another kept rule still secures them.
        </p>
      </ConfirmDialog>
    </section>
  );
}
