// Webhooks: list, create, edit, renew the signing secret (after a confirmation: it cannot be
// undone), send a sample event, and each webhook's deliveries log.
import { useState } from 'preact/hooks';
import { ApiError, api, type Delivery, type Webhook } from './api';
import { Checkbox, ConfirmDialog, CopyButton, inputType, ErrorNotice, Field, Notice, Select, errorsFor, formatTime, useAsync } from './components';

const kinds = (w: Webhook) =>
  [w.isFeedHooks && 'Feeds', w.isRecordingHooks && 'Recordings', w.isThumbnailHooks && 'Thumbnails'].filter(Boolean).join(', ') || 'none';

const FIELDS = ['url', 'isFeedHooks', 'isRecordingHooks', 'isThumbnailHooks', 'filter'];

function WebhookForm(p: { hook?: Webhook; onSaved: (w: Webhook) => void; onCancel: () => void }) {
  const h = p.hook;
  const [url, setUrl] = useState(h?.url ?? '');
  const [feeds, setFeeds] = useState(h?.isFeedHooks ?? true);
  const [recordings, setRecordings] = useState(h?.isRecordingHooks ?? false);
  const [thumbnails, setThumbnails] = useState(h?.isThumbnailHooks ?? false);
  const [filter, setFilter] = useState(h?.filter ?? '');
  const [error, setError] = useState<unknown>(null);
  const errors = error instanceof ApiError ? error.errors : {};
  const id = (n: string) => `webhook-${h ? 'edit' : 'new'}-${n}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const f = filter.trim();
    const body: Record<string, unknown> = { url: url.trim(), isFeedHooks: feeds, isRecordingHooks: recordings, isThumbnailHooks: thumbnails };
    if (f !== '') body.filter = f;
    else if (h?.filter !== undefined) body.filter = null;
    try {
      p.onSaved(h ? await api.put<Webhook>(`/api/webhooks/${h.id}`, body) : await api.post<Webhook>('/api/webhooks', body));
    } catch (x) {
      setError(x);
    }
  };
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby={id('title')}>
      <h2 id={id('title')}>{h ? `Edit webhook ${h.id}` : 'New webhook'}</h2>
      <ErrorNotice error={error} fields={FIELDS} />
      <Field
        id={id('url')}
        label="URL"
        value={url}
        onInput={setUrl}
        placeholder="https://hooks.example.com/streamgate"
        hint="https:// and a public address."
        errors={errorsFor(errors, 'url')}
        required
      />
      <fieldset>
        <legend>Events</legend>
        <Checkbox id={id('feeds')} label="Feeds (stream started / ended)" checked={feeds} onChange={setFeeds} errors={errorsFor(errors, 'isFeedHooks')} />
        <Checkbox id={id('recordings')} label="Recordings" checked={recordings} onChange={setRecordings} errors={errorsFor(errors, 'isRecordingHooks')} />
        <Checkbox id={id('thumbnails')} label="Thumbnails" checked={thumbnails} onChange={setThumbnails} errors={errorsFor(errors, 'isThumbnailHooks')} />
      </fieldset>
      <Field
        id={id('filter')}
        label="Stream name filter"
        value={filter}
        onInput={setFilter}
        hint="A pattern (RE2, whole name) the stream name must match. Empty: every stream."
        errors={errorsFor(errors, 'filter')}
      />
      <div class="actions">
        <button type="submit" class="primary">
          {h ? 'Save webhook' : 'Create webhook'}
        </button>
        <button type="button" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function WebhooksPage() {
  const list = useAsync(() => api.get<Webhook[]>('/api/webhooks/list?itemCount=100'), []);
  const [mode, setMode] = useState<'list' | 'new' | 'edit'>('list');
  const [selected, setSelected] = useState<Webhook | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<'renew' | 'delete' | null>(null);

  const saved = (text: string, w: Webhook | null) => {
    setMessage(text);
    setError(null);
    setSelected(w);
    setMode('list');
    list.reload();
  };
  const act = async () => {
    const what = confirm;
    setConfirm(null);
    if (!selected || !what) return;
    setMessage('');
    try {
      if (what === 'renew') {
        saved(`Webhook ${selected.id} has a new signing secret; the old one signs nothing more.`, await api.put<Webhook>(`/api/webhooks/${selected.id}`, { refreshSecret: true }));
      } else {
        await api.del<boolean>(`/api/webhooks/${selected.id}`);
        saved(`Webhook ${selected.id} deleted.`, null);
      }
    } catch (x) {
      setError(x);
    }
  };
  const rows = list.data ?? [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Webhooks
      </h1>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => {
          setMode('new');
          setSelected(null);
          setMessage('');
        }}>
          New webhook
        </button>
        <button type="button" onClick={list.reload}>
          Reload
        </button>
      </div>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={error} />
      {mode === 'new' && <WebhookForm onSaved={(w) => saved(`Webhook ${w.id} created.`, w)} onCancel={() => setMode('list')} />}
      {mode === 'edit' && selected && <WebhookForm hook={selected} key={selected.id} onSaved={(w) => saved(`Webhook ${w.id} saved.`, w)} onCancel={() => setMode('list')} />}
      <ErrorNotice error={list.error} />
      <table aria-label="Webhooks" aria-busy={list.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">Filter</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((w) => (
            <tr key={w.id} class={selected?.id === w.id ? 'selected' : undefined}>
              <td>{w.id}</td>
              <td class="mono">{w.url}</td>
              <td>{kinds(w)}</td>
              <td class="mono">{w.filter ?? 'every stream'}</td>
              <td>
                <button type="button" aria-label={`Open webhook ${w.id}`} onClick={() => {
                  setSelected(w);
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
              <td colSpan={5}>No webhooks yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      {selected && mode === 'list' && (
        <WebhookDetails
          key={`${selected.id}-${selected.secret}`}
          w={selected}
          onEdit={() => setMode('edit')}
          onRenew={() => setConfirm('renew')}
          onDelete={() => setConfirm('delete')}
          onClose={() => setSelected(null)}
        />
      )}
      <ConfirmDialog
        open={confirm !== null}
        title={confirm === 'renew' ? `Renew the signing secret of webhook ${selected?.id}?` : `Delete webhook ${selected?.id}?`}
        confirmLabel={confirm === 'renew' ? 'Renew secret' : 'Delete webhook'}
        danger
        onConfirm={() => void act()}
        onCancel={() => setConfirm(null)}
      >
        {confirm === 'renew' ? (
          <p>
            This cannot be undone: the current secret stops signing deliveries at once, and receivers must be given the new one before they can
            verify again.
          </p>
        ) : (
          <p>No more events are sent to {selected?.url}. This cannot be undone.</p>
        )}
      </ConfirmDialog>
    </section>
  );
}

function WebhookDetails(p: { w: Webhook; onEdit: () => void; onRenew: () => void; onDelete: () => void; onClose: () => void }) {
  const { w } = p;
  const [show, setShow] = useState(false);
  const [testKind, setTestKind] = useState<'Feeds' | 'Recordings' | 'Thumbnail'>('Feeds');
  const [testStream, setTestStream] = useState('');
  const [testError, setTestError] = useState<unknown>(null);
  const [testDone, setTestDone] = useState('');
  const deliveries = useAsync(() => api.get<Delivery[]>(`/api/webhooks/${w.id}/deliveries`), [w.id]);

  const sendTest = async (e: Event) => {
    e.preventDefault();
    setTestError(null);
    setTestDone('');
    try {
      await api.post<boolean>(`/api/webhooks/test/${testKind}`, { streamName: testStream.trim() });
      setTestDone(`Sample ${testKind} event for “${testStream.trim()}” sent to the matching webhooks. Reload the deliveries to see the answer.`);
    } catch (x) {
      setTestError(x);
    }
  };
  return (
    <section class="panel details" aria-labelledby="webhook-details-title">
      <h2 id="webhook-details-title">Webhook {w.id}</h2>
      <p class="mono">{w.url}</p>
      <div class="token-value">
        <label for="webhook-secret">Signing secret</label>
        <input id="webhook-secret" class="mono" readOnly type={inputType(show ? 'text' : 'password')} value={w.secret} />
        <button type="button" onClick={() => setShow((s) => !s)} aria-pressed={show}>
          {show ? 'Hide' : 'Show'}
        </button>
        <CopyButton text={w.secret} what={`the signing secret of webhook ${w.id}`} label="Copy secret" />
      </div>
      <div class="actions">
        <button type="button" onClick={p.onEdit}>
          Edit
        </button>
        <button type="button" onClick={p.onRenew}>
          Renew secret
        </button>
        <button type="button" class="danger" onClick={p.onDelete}>
          Delete
        </button>
        <button type="button" onClick={p.onClose}>
          Close
        </button>
      </div>

      <form class="inline-form" onSubmit={sendTest} noValidate aria-labelledby="webhook-test-title">
        <h3 id="webhook-test-title">Send a test event</h3>
        <Select
          id="webhook-test-kind"
          label="Event kind"
          value={testKind}
          options={[
            ['Feeds', 'Feeds'],
            ['Recordings', 'Recordings'],
            ['Thumbnail', 'Thumbnail'],
          ]}
          onChange={setTestKind}
        />
        <Field
          id="webhook-test-stream"
          label="Stream name"
          value={testStream}
          onInput={setTestStream}
          errors={testError instanceof ApiError ? errorsFor(testError.errors, 'streamName') : []}
        />
        <button type="submit">Send test</button>
      </form>
      {testDone && <Notice kind="ok">{testDone}</Notice>}
      <ErrorNotice error={testError} fields={['streamName']} />

      <h3 id="deliveries-title">Deliveries</h3>
      <button type="button" onClick={deliveries.reload}>
        Reload deliveries
      </button>
      <ErrorNotice error={deliveries.error} />
      <table aria-labelledby="deliveries-title" aria-busy={deliveries.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {(deliveries.data ?? []).map((d) => (
            <tr key={`${d.deliveryId}-${d.attempt}`} class={d.statusCode !== undefined && d.statusCode < 300 ? 'ok' : 'failed'}>
              <td>{formatTime(d.at)}</td>
              <td>{d.event}</td>
              <td>{d.attempt}</td>
              <td>{d.statusCode !== undefined ? `HTTP ${d.statusCode}` : d.error ?? 'no answer'}</td>
              <td>{Math.round(d.durationMs)} ms</td>
            </tr>
          ))}
          {!deliveries.loading && (deliveries.data ?? []).length === 0 && (
            <tr>
              <td colSpan={5}>No deliveries yet.</td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
