// Publish and subscribe tokens: the paged, sortable list, one token's details with its actions
// (copy, edit, disable/enable, refresh, delete, check) and live sessions, and the create/edit form.
import { useState } from 'preact/hooks';
import { api, query, type TokenKind, type TokenRecord } from './api';
import { ConfirmDialog, CopyButton, inputType, ErrorNotice, Notice, Select, formatTime, useAsync } from './components';
import { TokenForm } from './token-form';
import { LiveSessions } from './sessions';
import { SharingPanel } from './sharing';
import { navigate } from './router';

type Sort = 'Name' | 'AddedOn';
type Pending = { action: 'refresh' | 'delete'; token: TokenRecord } | null;

const status = (t: TokenRecord): string =>
  !t.isActive ? 'Disabled' : t.expiresOn && Date.parse(t.expiresOn) <= Date.now() ? 'Expired' : 'Active';

const streamText = (t: TokenRecord) => t.streams.map((s) => (s.isRegex ? `/${s.streamName}/` : s.streamName)).join(', ');

export function TokensPage({ kind }: { kind: TokenKind }) {
  const [sortBy, setSortBy] = useState<Sort>('AddedOn');
  const [descending, setDescending] = useState(true);
  const [itemsOnPage, setItemsOnPage] = useState(25);
  const [page, setPage] = useState(1);
  const [mode, setMode] = useState<'list' | 'new' | 'edit'>('list');
  const [selected, setSelected] = useState<TokenRecord | null>(null);
  const [message, setMessage] = useState('');
  const [actionError, setActionError] = useState<unknown>(null);
  const [pending, setPending] = useState<Pending>(null);

  const list = useAsync(
    () => api.get<TokenRecord[]>(`/api/${kind}_token/list?${query({ sortBy, page, itemsOnPage, isDescending: descending })}`),
    [kind, sortBy, descending, itemsOnPage, page],
  );
  const title = kind === 'publish' ? 'Publish tokens' : 'Subscribe tokens';

  const done = (text: string, t: TokenRecord | null) => {
    setMessage(text);
    setActionError(null);
    setSelected(t);
    setMode('list');
    list.reload();
  };
  const run = async (f: () => Promise<void>) => {
    setMessage('');
    setActionError(null);
    try {
      await f();
    } catch (e) {
      setActionError(e);
    }
  };
  const setActive = (t: TokenRecord, active: boolean) =>
    run(async () => {
      if (kind === 'publish' && !active) {
        const r = await api.patch<{ successfulTokens: number[]; failedTokens: Array<{ errorMessage: string }> }>(`/api/publish_token/disable`, {
          tokenIds: [t.id],
        });
        if (r.failedTokens.length) throw new Error(r.failedTokens[0].errorMessage);
        done(`Token ${t.id} disabled.`, await api.get<TokenRecord>(`/api/publish_token/${t.id}`));
      } else {
        done(`Token ${t.id} ${active ? 'enabled' : 'disabled'}.`, await api.put<TokenRecord>(`/api/${kind}_token/${t.id}`, { isActive: active }));
      }
    });
  const confirm = () => {
    const p = pending;
    setPending(null);
    if (!p) return;
    void run(async () => {
      if (p.action === 'refresh') {
        done(`Token ${p.token.id} has a new value; the old one no longer works.`, await api.put<TokenRecord>(`/api/${kind}_token/${p.token.id}`, { refreshToken: true }));
      } else {
        await api.del<boolean>(`/api/${kind}_token/${p.token.id}`);
        done(`Token ${p.token.id} deleted.`, null);
      }
    });
  };

  const rows = list.data ?? [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => {
          setMode('new');
          setMessage('');
          setSelected(null);
        }}>
          New {kind} token
        </button>
        <Select
          id={`${kind}-sort`}
          label="Sort by"
          value={sortBy}
          options={[
            ['AddedOn', 'Added on'],
            ['Name', 'Label'],
          ]}
          onChange={(v) => {
            setSortBy(v);
            setPage(1);
          }}
        />
        <Select
          id={`${kind}-order`}
          label="Order"
          value={descending ? 'desc' : 'asc'}
          options={[
            ['asc', 'Ascending'],
            ['desc', 'Descending'],
          ]}
          onChange={(v) => {
            setDescending(v === 'desc');
            setPage(1);
          }}
        />
        <Select
          id={`${kind}-page-size`}
          label="Per page"
          value={String(itemsOnPage) as '10' | '25' | '50' | '100'}
          options={[
            ['10', '10'],
            ['25', '25'],
            ['50', '50'],
            ['100', '100'],
          ]}
          onChange={(v) => {
            setItemsOnPage(Number(v));
            setPage(1);
          }}
        />
        <button type="button" onClick={list.reload}>
          Reload
        </button>
      </div>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={actionError} />
      {mode === 'new' && <TokenForm kind={kind} onSaved={(t) => done(`Token ${t.id} created.`, t)} onCancel={() => setMode('list')} />}
      {mode === 'edit' && selected && (
        <TokenForm kind={kind} token={selected} key={selected.id} onSaved={(t) => done(`Token ${t.id} saved.`, t)} onCancel={() => setMode('list')} />
      )}

      <ErrorNotice error={list.error} />
      <table aria-label={title} aria-busy={list.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Label</th>
            <th scope="col">Streams</th>
            <th scope="col">Status</th>
            <th scope="col">Added on</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr key={t.id} class={selected?.id === t.id ? 'selected' : undefined}>
              <td>{t.id}</td>
              <td>{t.label}</td>
              <td class="mono">{streamText(t)}</td>
              <td>{status(t)}</td>
              <td>{formatTime(t.addedOn)}</td>
              <td>{t.expiresOn ? formatTime(t.expiresOn) : 'Never'}</td>
              <td>
                <button type="button" aria-label={`Open token ${t.id}`} onClick={() => {
                  setSelected(t);
                  setMode('list');
                  setMessage('');
                }}>
                  Open
                </button>
              </td>
            </tr>
          ))}
          {!list.loading && rows.length === 0 && (
            <tr>
              <td colSpan={7}>{page === 1 ? `No ${kind} tokens yet.` : 'No more tokens on this page.'}</td>
            </tr>
          )}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={page === 1} onClick={() => setPage((n) => n - 1)}>
          Previous page
        </button>
        <span aria-live="polite">Page {page}</span>
        <button type="button" disabled={rows.length < itemsOnPage} onClick={() => setPage((n) => n + 1)}>
          Next page
        </button>
      </nav>

      {selected && mode === 'list' && (
        <TokenDetails
          kind={kind}
          t={selected}
          onEdit={() => setMode('edit')}
          onActive={(a) => void setActive(selected, a)}
          onRefresh={() => setPending({ action: 'refresh', token: selected })}
          onDelete={() => setPending({ action: 'delete', token: selected })}
          onClose={() => setSelected(null)}
        />
      )}
      <ConfirmDialog
        open={pending !== null}
        title={pending?.action === 'delete' ? `Delete token ${pending.token.id}?` : `Refresh token ${pending?.token.id}?`}
        confirmLabel={pending?.action === 'delete' ? 'Delete token' : 'Refresh token'}
        danger
        onConfirm={confirm}
        onCancel={() => setPending(null)}
      >
        {pending?.action === 'delete' ? (
          <p>“{pending.token.label}” stops working at once and cannot be restored.</p>
        ) : (
          <p>The token gets a new value; the current value stops working at once and its bound addresses are forgotten.</p>
        )}
      </ConfirmDialog>
    </section>
  );
}

function TokenDetails(p: {
  kind: TokenKind;
  t: TokenRecord;
  onEdit: () => void;
  onActive: (active: boolean) => void;
  onRefresh: () => void;
  onDelete: () => void;
  onClose: () => void;
}) {
  const { t, kind } = p;
  const [show, setShow] = useState(false);
  const list = (xs: string[], empty: string) => (xs.length ? xs.join(', ') : empty);
  return (
    <section class="panel details" aria-labelledby="token-details-title">
      <h2 id="token-details-title">
        Token {t.id}: {t.label}
      </h2>
      <div class="token-value">
        <label for="token-value">Token</label>
        <input id="token-value" class="mono" readOnly type={inputType(show ? 'text' : 'password')} value={t.token} />
        <button type="button" onClick={() => setShow((s) => !s)} aria-pressed={show}>
          {show ? 'Hide' : 'Show'}
        </button>
        <CopyButton text={t.token} what={`the value of token ${t.id}`} label="Copy token" />
      </div>
      <dl>
        <dt>Status</dt>
        <dd>{status(t)}</dd>
        <dt>Streams</dt>
        <dd class="mono">{streamText(t)}</dd>
        <dt>Allowed origins</dt>
        <dd>{list(t.allowedOrigins, 'any')}</dd>
        <dt>Allowed IP addresses</dt>
        <dd>{list(t.allowedIpAddresses, 'any')}</dd>
        <dt>Bind on usage</dt>
        <dd>{t.bindIpsOnUsage ? `first ${t.bindIpsOnUsage} address(es)` : 'off'}</dd>
        {t.bindIpsOnUsage ? (
          <>
            <dt>Bound addresses</dt>
            <dd>{list(t.boundIpAddresses ?? [], 'none yet')}</dd>
          </>
        ) : null}
        <dt>Live sessions at once</dt>
        <dd>{t.maxConcurrentSessions ? `at most ${t.maxConcurrentSessions}` : 'unlimited'}</dd>
        <dt>Uses</dt>
        <dd>{t.maxUses ? `${t.maxUses} session(s) in all` : 'unlimited'}</dd>
        <dt>Countries</dt>
        <dd>
          {t.allowedCountries.length ? `only ${t.allowedCountries.join(', ')}` : t.deniedCountries.length ? `not ${t.deniedCountries.join(', ')}` : 'any'}
        </dd>
        {kind === 'publish' ? (
          <>
            <dt>Viewers need a subscribe token</dt>
            <dd>{t.subscribeRequiresAuth ? 'yes' : 'no'}</dd>
            <dt>Record</dt>
            <dd>{t.record ? 'yes' : 'no'}</dd>
            <dt>Thumbnails</dt>
            <dd>{t.enableThumbnails ? 'yes' : 'no'}</dd>
          </>
        ) : (
          <>
            <dt>Tracking id</dt>
            <dd>{t.tracking?.trackingId ?? 'none'}</dd>
          </>
        )}
        <dt>Added on</dt>
        <dd>{formatTime(t.addedOn)}</dd>
        <dt>Updated on</dt>
        <dd>{formatTime(t.updatedOn)}</dd>
        <dt>Expires</dt>
        <dd>{t.expiresOn ? formatTime(t.expiresOn) : 'never'}</dd>
      </dl>
      <div class="actions">
        <button type="button" onClick={p.onEdit}>
          Edit
        </button>
        {t.isActive ? (
          <button type="button" onClick={() => p.onActive(false)}>
            Disable
          </button>
        ) : (
          <button type="button" onClick={() => p.onActive(true)}>
            Enable
          </button>
        )}
        <button type="button" onClick={p.onRefresh}>
          Refresh token
        </button>
        <button type="button" onClick={() => navigate('check', { kind, id: String(t.id), stream: t.streams.find((s) => !s.isRegex)?.streamName ?? '' })}>
          Check access
        </button>
        {kind === 'subscribe' && (
          <button type="button" onClick={() => navigate('jwt', { id: String(t.id) })}>
            Sign a JWT
          </button>
        )}
        <button type="button" class="danger" onClick={p.onDelete}>
          Delete
        </button>
        <button type="button" onClick={p.onClose}>
          Close
        </button>
      </div>
      <LiveSessions tokenId={t.id} key={t.id} />
      <SharingPanel kind={kind} tokenId={t.id} key={`sharing-${t.id}`} />
    </section>
  );
}
