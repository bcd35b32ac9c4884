// Create and edit form of a publish or subscribe token: every field of the API, with the API's
// validation messages under the field they name (create names `allowedOrigins[0]`, an update
// `updateAllowedOrigins[0]` or `addTokenStreams[1].streamName`).
import { useState } from 'preact/hooks';
import { ApiError, api, type FieldErrors, type StreamEntry, type TokenKind, type TokenRecord } from './api';
import { Checkbox, ErrorNotice, Field, FieldError, errorsFor, toList } from './components';

interface FormState {
  label: string;
  streams: StreamEntry[];
  expires: string;
  neverExpires: boolean;
  allowedOrigins: string;
  allowedIpAddresses: string;
  bindIpsOnUsage: string;
  maxConcurrentSessions: string;
  maxUses: string;
  allowedCountries: string;
  deniedCountries: string;
  subscribeRequiresAuth: boolean;
  record: boolean;
  enableThumbnails: boolean;
  trackingId: string;
}

const fromRecord = (t?: TokenRecord): FormState => ({
  label: t?.label ?? '',
  streams: t ? t.streams.map((s) => ({ ...s })) : [{ streamName: '', isRegex: false }],
  expires: '',
  neverExpires: t ? t.expiresOn === undefined : true,
  allowedOrigins: (t?.allowedOrigins ?? []).join('\n'),
  allowedIpAddresses: (t?.allowedIpAddresses ?? []).join('\n'),
  bindIpsOnUsage: t?.bindIpsOnUsage ? String(t.bindIpsOnUsage) : '',
  maxConcurrentSessions: t?.maxConcurrentSessions ? String(t.maxConcurrentSessions) : '',
  maxUses: t?.maxUses ? String(t.maxUses) : '',
  allowedCountries: (t?.allowedCountries ?? []).join(', '),
  deniedCountries: (t?.deniedCountries ?? []).join(', '),
  subscribeRequiresAuth: t?.subscribeRequiresAuth ?? false,
  record: t?.record ?? false,
  enableThumbnails: t?.enableThumbnails ?? false,
  trackingId: t?.tracking?.trackingId ?? '',
});

/** A number field: empty stays empty (not given); anything else goes to the API as typed, so it judges. */
const num = (s: string): number | string | undefined => {
  const t = s.trim();
  if (t === '') return undefined;
  return /^-?\d+$/.test(t) ? Number(t) : t;
};

/** The session limits: the same name on create and update (docs/api.md#session-limits). */
const LIMITS = ['maxConcurrentSessions', 'maxUses'] as const;

const sameEntry = (a: StreamEntry, b: StreamEntry) => a.streamName === b.streamName && a.isRegex === b.isRegex;
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function createBody(kind: TokenKind, f: FormState): Record<string, unknown> {
  const body: Record<string, unknown> = {
    label: f.label,
    streams: f.streams.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex })),
    allowedOrigins: toList(f.allowedOrigins),
    allowedIpAddresses: toList(f.allowedIpAddresses),
    allowedCountries: toList(f.allowedCountries),
    deniedCountries: toList(f.deniedCountries),
  };
  if (!f.neverExpires && num(f.expires) !== undefined) body.expires = num(f.expires);
  if (num(f.bindIpsOnUsage) !== undefined) body.bindIpsOnUsage = num(f.bindIpsOnUsage);
  for (const k of LIMITS) if (num(f[k]) !== undefined) body[k] = num(f[k]);
  if (kind === 'publish') {
    body.subscribeRequiresAuth = f.subscribeRequiresAuth;
    body.record = f.record;
    body.enableThumbnails = f.enableThumbnails;
  } else if (f.trackingId.trim() !== '') {
    body.tracking = { trackingId: f.trackingId.trim() };
  }
  return body;
}

/** Only what changed, in the update spelling; `added` maps addTokenStreams indexes back to form rows. */
function updateBody(kind: TokenKind, t: TokenRecord, f: FormState): { body: Record<string, unknown>; added: number[] } {
  const body: Record<string, unknown> = {};
  if (f.label !== t.label) body.label = f.label;
  const removed = t.streams.filter((s) => !f.streams.some((n) => sameEntry(n, s)));
  const added: number[] = [];
  f.streams.forEach((s, i) => {
    if (!t.streams.some((o) => sameEntry(o, s))) added.push(i);
  });
  if (removed.length) body.removeTokenStreams = removed;
  if (added.length) body.addTokenStreams = added.map((i) => f.streams[i]);
  const lists: Array<[keyof FormState, keyof TokenRecord, string]> = [
    ['allowedOrigins', 'allowedOrigins', 'updateAllowedOrigins'],
    ['allowedIpAddresses', 'allowedIpAddresses', 'updateAllowedIpAddresses'],
    ['allowedCountries', 'allowedCountries', 'updateAllowedCountries'],
    ['deniedCountries', 'deniedCountries', 'updateDeniedCountries'],
  ];
  for (const [field, rec, name] of lists) {
    const v = toList(f[field] as string);
    if (!sameList(v, t[rec] as string[])) body[name] = v;
  }
  const bind = num(f.bindIpsOnUsage) ?? 0;
  if (bind !== (t.bindIpsOnUsage ?? 0)) body.updateBindIpsOnUsage = bind;
  // Emptied: 0, which removes the limit.
  for (const k of LIMITS) {
    const v = num(f[k]) ?? 0;
    if (v !== (t[k] ?? 0)) body[k] = v;
  }
  if (f.neverExpires && t.expiresOn !== undefined) body.expires = null;
  else if (!f.neverExpires && num(f.expires) !== undefined) body.expires = num(f.expires);
  if (kind === 'publish') {
    for (const k of ['subscribeRequiresAuth', 'record', 'enableThumbnails'] as const) if (f[k] !== (t[k] ?? false)) body[k] = f[k];
  } else {
    const tr = f.trackingId.trim();
    if (tr !== (t.tracking?.trackingId ?? '')) body.tracking = tr === '' ? null : { trackingId: tr };
  }
  return { body, added };
}

const FIELDS = {
  label: ['label'],
  streams: ['streams', 'addTokenStreams', 'removeTokenStreams'],
  expires: ['expires'],
  allowedOrigins: ['allowedOrigins', 'updateAllowedOrigins'],
  allowedIpAddresses: ['allowedIpAddresses', 'updateAllowedIpAddresses'],
  bindIpsOnUsage: ['bindIpsOnUsage', 'updateBindIpsOnUsage'],
  maxConcurrentSessions: ['maxConcurrentSessions'],
  maxUses: ['maxUses'],
  allowedCountries: ['allowedCountries', 'updateAllowedCountries'],
  deniedCountries: ['deniedCountries', 'updateDeniedCountries'],
  subscribeRequiresAuth: ['subscribeRequiresAuth'],
  record: ['record'],
  enableThumbnails: ['enableThumbnails'],
  trackingId: ['tracking'],
};
const CLAIMED = Object.values(FIELDS).flat();

export function TokenForm(p: { kind: TokenKind; token?: TokenRecord; onSaved: (t: TokenRecord) => void; onCancel: () => void }) {
  const { kind, token } = p;
  const [f, setF] = useState<FormState>(() => fromRecord(token));
  const [error, setError] = useState<unknown>(null);
  const [added, setAdded] = useState<number[]>([]);
  const [busy, setBusy] = useState(false);
  const errors: FieldErrors = error instanceof ApiError ? error.errors : {};
  const set = <K extends keyof FormState>(k: K) => (v: FormState[K]) => setF((s) => ({ ...s, [k]: v }));
  const id = (name: string) => `${kind}-${token ? 'edit' : 'new'}-${name}`;
  const err = (k: keyof typeof FIELDS) => errorsFor(errors, ...FIELDS[k]);

  /** Errors of one stream row: `streams[i]…` on create, `addTokenStreams[j]…` for the j-th added row on update. */
  const rowErrors = (i: number): string[] => {
    if (!token) return errorsFor(errors, `streams[${i}]`);
    const j = added.indexOf(i);
    return j < 0 ? [] : errorsFor(errors, `addTokenStreams[${j}]`);
  };
  const listErrors = (): string[] => {
    const out: string[] = [];
    for (const [k, list] of Object.entries(errors)) {
      if (/^(streams|addTokenStreams|removeTokenStreams)$/.test(k)) out.push(...list);
      else if (/^removeTokenStreams\[/.test(k)) out.push(...list);
    }
    return out;
  };

  const setStream = (i: number, patch: Partial<StreamEntry>) =>
    setF((s) => ({ ...s, streams: s.streams.map((x, j) => (j === i ? { ...x, ...patch } : x)) }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (token) {
        const u = updateBody(kind, token, f);
        setAdded(u.added);
        if (Object.keys(u.body).length === 0) {
          p.onCancel();
          return;
        }
        p.onSaved(await api.put<TokenRecord>(`/api/${kind}_token/${token.id}`, u.body));
      } else {
        p.onSaved(await api.post<TokenRecord>(`/api/${kind}_token`, createBody(kind, f)));
      }
    } catch (x) {
      setError(x);
    } finally {
      setBusy(false);
    }
  };

  const title = token ? `Edit ${kind} token ${token.id}` : `New ${kind} token`;
  return (
    <form class="panel" onSubmit={submit} aria-labelledby={id('title')} noValidate>
      <h2 id={id('title')}>{title}</h2>
      <ErrorNotice error={error} fields={CLAIMED} />
      <Field id={id('label')} label="Label" value={f.label} onInput={set('label')} errors={err('label')} required />

      <fieldset class="streams">
        <legend>Streams</legend>
        <p class="hint">An exact stream name, or a pattern (RE2, matched against the whole name) when “Regex” is ticked.</p>
        {f.streams.map((s, i) => {
          const rowErr = rowErrors(i);
          const sid = id(`stream-${i}`);
          return (
            <div class={`stream-row${rowErr.length ? ' invalid' : ''}`} key={i}>
              <label for={sid}>Stream {i + 1} name</label>
              <input
                id={sid}
                value={s.streamName}
                spellcheck={false}
                aria-invalid={rowErr.length ? 'true' : undefined}
                aria-describedby={rowErr.length ? `${sid}-error` : undefined}
                onInput={(e) => setStream(i, { streamName: e.currentTarget.value })}
              />
              <span class="inline-check">
                <input id={`${sid}-regex`} type="checkbox" checked={s.isRegex} onChange={(e) => setStream(i, { isRegex: e.currentTarget.checked })} />
                <label for={`${sid}-regex`}>Regex</label>
              </span>
              <button
                type="button"
                aria-label={`Remove stream ${i + 1}`}
                disabled={f.streams.length === 1}
                onClick={() => setF((x) => ({ ...x, streams: x.streams.filter((_, j) => j !== i) }))}
              >
                Remove
              </button>
              <FieldError id={`${sid}-error`} messages={rowErr} />
            </div>
          );
        })}
        <FieldError id={id('streams-error')} messages={listErrors()} />
        <button type="button" onClick={() => setF((x) => ({ ...x, streams: [...x.streams, { streamName: '', isRegex: false }] }))}>
          Add stream
        </button>
      </fieldset>

      <div class="grid">
        <div>
          <Checkbox id={id('never-expires')} label="Never expires" checked={f.neverExpires} onChange={set('neverExpires')} />
          {!f.neverExpires && (
            <Field
              id={id('expires')}
              label={token ? 'Expires in (seconds from now)' : 'Expires in (seconds)'}
              value={f.expires}
              onInput={set('expires')}
              inputMode="numeric"
              hint={token ? `Now: ${token.expiresOn ?? 'never'}. Empty keeps it.` : 'e.g. 3600 for one hour'}
              errors={err('expires')}
            />
          )}
          {f.neverExpires && <FieldError id={id('expires-error')} messages={err('expires')} />}
        </div>
        <Field
          id={id('bindIpsOnUsage')}
          label="Bind to the first N client addresses"
          value={f.bindIpsOnUsage}
          onInput={set('bindIpsOnUsage')}
          inputMode="numeric"
          hint="Empty or 0: no binding. Cannot be combined with allowed IP addresses."
          errors={err('bindIpsOnUsage')}
        />
        <Field
          id={id('maxConcurrentSessions')}
          label="Live sessions at once"
          type="number"
          min={0}
          value={f.maxConcurrentSessions}
          onInput={set('maxConcurrentSessions')}
          inputMode="numeric"
          hint={`${kind === 'publish' ? 'Publishers' : 'Viewers'} connected at the same time with this token. Empty or 0: unlimited.`}
          errors={err('maxConcurrentSessions')}
        />
        <Field
          id={id('maxUses')}
          label="Uses"
          type="number"
          min={0}
          value={f.maxUses}
          onInput={set('maxUses')}
          inputMode="numeric"
          hint="Sessions ever admitted with this token (1: a one-time token). Empty or 0: unlimited."
          errors={err('maxUses')}
        />
        <Field
          id={id('allowedOrigins')}
          label="Allowed origins"
          multiline
          value={f.allowedOrigins}
          onInput={set('allowedOrigins')}
          hint="One host per line: example.com or *.example.com. Empty: any origin."
          errors={err('allowedOrigins')}
        />
        <Field
          id={id('allowedIpAddresses')}
          label="Allowed IP addresses"
          multiline
          value={f.allowedIpAddresses}
          onInput={set('allowedIpAddresses')}
          hint="One IPv4 address or CIDR block per line. Empty: any address."
          errors={err('allowedIpAddresses')}
        />
        <Field
          id={id('allowedCountries')}
          label="Allowed countries"
          value={f.allowedCountries}
          onInput={set('allowedCountries')}
          hint="ISO codes separated by commas, e.g. US, DE"
          errors={err('allowedCountries')}
        />
        <Field
          id={id('deniedCountries')}
          label="Denied countries"
          value={f.deniedCountries}
          onInput={set('deniedCountries')}
          hint="Only one of allowed or denied countries"
          errors={err('deniedCountries')}
        />
        {kind === 'subscribe' && (
          <Field
            id={id('trackingId')}
            label="Tracking id"
            value={f.trackingId}
            onInput={set('trackingId')}
            hint="Groups usage in analytics. Empty: none."
            errors={err('trackingId')}
          />
        )}
      </div>
      {kind === 'publish' && (
        <div class="checks">
          <Checkbox
            id={id('subscribeRequiresAuth')}
            label="Viewers need a subscribe token"
            checked={f.subscribeRequiresAuth}
            onChange={set('subscribeRequiresAuth')}
            errors={err('subscribeRequiresAuth')}
          />
          <Checkbox id={id('record')} label="Record" checked={f.record} onChange={set('record')} errors={err('record')} />
          <Checkbox
            id={id('enableThumbnails')}
            label="Thumbnails"
            checked={f.enableThumbnails}
            onChange={set('enableThumbnails')}
            errors={err('enableThumbnails')}
          />
        </div>
      )}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {token ? 'Save changes' : 'Create token'}
        </button>
        <button type="button" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
