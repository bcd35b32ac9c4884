// Credential issuers: the account's list, a create and edit form with every field of the API for JWT
// issuers (the secret write-only: an empty field keeps it), disable/enable, delete after a
// confirmation, and for a signed-URL issuer a check of a pasted URL, cookie or CAT, field by field.
import { useState } from 'preact/hooks';
import { ApiError, ISSUER_ALGORITHMS, api, type FieldErrors, type Issuer, type SignedCheckResult } from './api';
import { Checkbox, ConfirmDialog, ErrorNotice, Field, FieldError, Notice, errorsFor, toList, useAsync } from './components';

const CLAIMS = [
  ['stream', 'Stream claim', 'Default sub. Ignored when a permissions claim is set.'],
  ['permissions', 'Permissions claim', 'MediaMTX-style [{"action","path"}] list.'],
  ['action', 'Action claim', 'publish, subscribe, read, play or playback.'],
  ['canPublish', 'Can-publish claim', 'Must be true for a publish (LiveKit video.canPublish).'],
  ['canSubscribe', 'Can-subscribe claim', 'Must be true for a subscribe.'],
  ['address', 'Address claim', 'The client address or CIDR list the request must come from.'],
  ['viewerId', 'Viewer id claim', 'Names the viewer in sessions and analytics.'],
] as const;
type Claim = (typeof CLAIMS)[number][0];
const REVOKED = ['jti', 'sub', 'kid'] as const;

interface FormState {
  label: string;
  isActive: boolean;
  policyTokenId: string;
  issuer: string;
  keyIds: string;
  audience: string;
  algorithms: string[];
  secret: string;
  removeSecret: boolean;
  jwks: string;
  jwksUrl: string;
  clockSkewSeconds: string;
  maxLifetimeSeconds: string;
  cookieName: string;
  claims: Record<Claim, string>;
  revoked: Record<(typeof REVOKED)[number], string>;
}

const fromRecord = (i?: Issuer): FormState => ({
  label: i?.label ?? '',
  isActive: i?.isActive ?? true,
  policyTokenId: i ? String(i.policyTokenId) : '',
  issuer: i?.issuer ?? '',
  keyIds: (i?.keyIds ?? []).join('\n'),
  audience: (i?.audience ?? []).join('\n'),
  algorithms: i ? [...i.algorithms] : [],
  secret: '',
  removeSecret: false,
  jwks: i?.jwks ? JSON.stringify(i.jwks, null, 2) : '',
  jwksUrl: i?.jwksUrl ?? '',
  clockSkewSeconds: i ? String(i.clockSkewSeconds) : '',
  maxLifetimeSeconds: i?.maxLifetimeSeconds ? String(i.maxLifetimeSeconds) : '',
  cookieName: i?.cookieName ?? '',
  claims: Object.fromEntries(CLAIMS.map(([c]) => [c, i?.claims[c] ?? ''])) as Record<Claim, string>,
  revoked: { jti: (i?.revoked.jti ?? []).join('\n'), sub: (i?.revoked.sub ?? []).join('\n'), kid: (i?.revoked.kid ?? []).join('\n') },
});

/** A number field: empty is `empty`; anything else goes to the API as typed, so it judges. */
const num = (s: string, empty: null | undefined): number | string | null | undefined => {
  const t = s.trim();
  if (t === '') return empty;
  return /^-?\d+$/.test(t) ? Number(t) : t;
};
const orNull = (s: string): string | null => (s.trim() === '' ? null : s.trim());
const lines = (s: string): string[] => s.split('\n').map((x) => x.trim()).filter((x) => x !== '');
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every field as the API takes it on a create; `jwks` parsed here so that a typo is named before sending. */
function fullBody(f: FormState): { body: Record<string, unknown>; local: FieldErrors } {
  const local: FieldErrors = {};
  let jwks: unknown = null;
  if (f.jwks.trim() !== '') {
    try {
      jwks = JSON.parse(f.jwks);
    } catch (e) {
      local.jwks = [`not JSON: ${(e as Error).message}`];
    }
  }
  const claims: Record<string, string | null> = {};
  for (const [c] of CLAIMS) claims[c] = orNull(f.claims[c]);
  const body: Record<string, unknown> = {
    label: f.label.trim(),
    isActive: f.isActive,
    policyTokenId: num(f.policyTokenId, undefined),
    issuer: orNull(f.issuer),
    keyIds: toList(f.keyIds),
    audience: toList(f.audience),
    algorithms: f.algorithms,
    jwks,
    jwksUrl: orNull(f.jwksUrl),
    maxLifetimeSeconds: num(f.maxLifetimeSeconds, null),
    cookieName: orNull(f.cookieName),
    claims,
    revoked: { jti: lines(f.revoked.jti), sub: lines(f.revoked.sub), kid: lines(f.revoked.kid) },
  };
  if (num(f.clockSkewSeconds, undefined) !== undefined) body.clockSkewSeconds = num(f.clockSkewSeconds, undefined);
  if (f.secret !== '') body.secret = f.secret;
  return { body, local };
}

/** Only what changed, with the rev the form was read at (a concurrent change is a 409, never overwritten). */
function updateBody(i: Issuer, f: FormState): { body: Record<string, unknown>; local: FieldErrors } {
  const { body: all, local } = fullBody(f);
  const was = fullBody(fromRecord(i)).body;
  const body: Record<string, unknown> = { rev: i.rev };
  for (const [k, v] of Object.entries(all)) {
    if (k === 'secret' || k === 'claims' || k === 'revoked') continue;
    if (!same(v, was[k])) body[k] = v;
  }
  const claims = all.claims as Record<string, string | null>;
  const changedClaims = Object.fromEntries(Object.entries(claims).filter(([c, v]) => v !== (i.claims[c as Claim] ?? null)));
  if (Object.keys(changedClaims).length > 0) body.claims = changedClaims;
  const revoked = all.revoked as Issuer['revoked'];
  const changedRevoked = Object.fromEntries(REVOKED.filter((r) => !same(revoked[r], i.revoked[r])).map((r) => [r, revoked[r]]));
  if (Object.keys(changedRevoked).length > 0) body.revoked = changedRevoked;
  if (f.secret !== '') body.secret = f.secret;
  else if (f.removeSecret) body.secret = null;
  return { body, local };
}

const FIELDS = ['label', 'isActive', 'policyTokenId', 'issuer', 'keyIds', 'audience', 'algorithms', 'secret', 'jwks', 'jwksUrl', 'clockSkewSeconds', 'maxLifetimeSeconds', 'cookieName', 'claims', 'revoked'];

function IssuerForm(p: { issuer?: Issuer; onSaved: (i: Issuer) => void; onCancel: () => void }) {
  const i = p.issuer;
  const [f, setF] = useState<FormState>(() => fromRecord(i));
  const [error, setError] = useState<unknown>(null);
  const errors: FieldErrors = error instanceof ApiError ? error.errors : {};
  const id = (n: string) => `issuer-${i ? 'edit' : 'new'}-${n}`;
  const set =
    <K extends keyof FormState>(k: K) =>
    (v: FormState[K]) =>
      setF((s) => ({ ...s, [k]: v }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const { body, local } = i ? updateBody(i, f) : fullBody(f);
    if (Object.keys(local).length > 0) {
      setError(new ApiError(400, 'Validation errors', local));
      return;
    }
    try {
      p.onSaved(i ? await api.put<Issuer>(`/api/issuers/${i.id}`, body) : await api.post<Issuer>('/api/issuers', body));
    } catch (x) {
      setError(x);
    }
  };
  const toggleAlg = (alg: string, on: boolean) => set('algorithms')(on ? [...f.algorithms.filter((a) => a !== alg), alg] : f.algorithms.filter((a) => a !== alg));
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby={id('title')}>
      <h2 id={id('title')}>{i ? `Edit issuer ${i.id}` : 'New issuer'}</h2>
      <ErrorNotice error={error} fields={FIELDS} />
      <div class="grid">
        <Field id={id('label')} label="Label" value={f.label} onInput={set('label')} errors={errorsFor(errors, 'label')} required />
        <Field
          id={id('policy-token')}
          label="Policy token id"
          value={f.policyTokenId}
          onInput={set('policyTokenId')}
          inputMode="numeric"
          hint="A publish or subscribe token of this account: its rules decide; a credential can only narrow them."
          errors={errorsFor(errors, 'policyTokenId')}
          required
        />
        <Field
          id={id('iss')}
          label="Issuer (iss)"
          value={f.issuer}
          onInput={set('issuer')}
          placeholder="https://idp.example.com/"
          hint="Empty: JWTs without iss (Mux, IVS, Cloudflare)."
          errors={errorsFor(errors, 'issuer')}
        />
        <Field id={id('key-ids')} label="Key ids" value={f.keyIds} onInput={set('keyIds')} multiline hint="One per line. Empty: any key id." errors={errorsFor(errors, 'keyIds')} />
        <Field id={id('audience')} label="Audience" value={f.audience} onInput={set('audience')} multiline hint="One per line. Empty: aud not checked." errors={errorsFor(errors, 'audience')} />
      </div>
      <fieldset aria-describedby={errorsFor(errors, 'algorithms').length ? id('algorithms-error') : undefined}>
        <legend>Algorithms</legend>
        <div class="checks">
          {ISSUER_ALGORITHMS.map((alg) => (
            <Checkbox key={alg} id={id(`alg-${alg}`)} label={alg} checked={f.algorithms.includes(alg)} onChange={(on) => toggleAlg(alg, on)} />
          ))}
        </div>
        <FieldError id={id('algorithms-error')} messages={errorsFor(errors, 'algorithms')} />
      </fieldset>
      <div class="grid">
        <div>
          <Field
            id={id('secret')}
            label="HMAC secret (HS256/384/512)"
            type="password"
            value={f.secret}
            onInput={set('secret')}
            autoComplete="new-password"
            hint={
              i
                ? `Write-only: ${i.hasSecret ? 'the issuer has a secret; ' : 'the issuer has none; '}leave empty to keep it as it is.`
                : 'At least 16 characters (32 bytes or more recommended). It is never shown again.'
            }
            errors={errorsFor(errors, 'secret')}
          />
          {i?.hasSecret && <Checkbox id={id('remove-secret')} label="Remove the secret" checked={f.removeSecret} onChange={set('removeSecret')} />}
        </div>
        <Field
          id={id('jwks-url')}
          label="JWKS URL"
          value={f.jwksUrl}
          onInput={set('jwksUrl')}
          placeholder="https://idp.example.com/.well-known/jwks.json"
          hint="For RS*, PS*, ES*, EdDSA: https:// and a public address."
          errors={errorsFor(errors, 'jwksUrl')}
        />
      </div>
      <Field id={id('jwks')} label="Public keys (JWK set)" value={f.jwks} onInput={set('jwks')} multiline hint={'{"keys": [ … ]}: public keys only.'} errors={errorsFor(errors, 'jwks')} />
      <div class="grid">
        <Field id={id('skew')} label="Clock skew (seconds)" value={f.clockSkewSeconds} onInput={set('clockSkewSeconds')} inputMode="numeric" hint="0 to 300; empty on create: 30." errors={errorsFor(errors, 'clockSkewSeconds')} />
        <Field
          id={id('lifetime')}
          label="Max lifetime (seconds)"
          value={f.maxLifetimeSeconds}
          onInput={set('maxLifetimeSeconds')}
          inputMode="numeric"
          hint="Empty: the policy token's expiry bounds it."
          errors={errorsFor(errors, 'maxLifetimeSeconds')}
        />
        <Field id={id('cookie')} label="Cookie name" value={f.cookieName} onInput={set('cookieName')} hint="A cookie the JWT may arrive in (auth_request). Empty: none." errors={errorsFor(errors, 'cookieName')} />
      </div>
      <fieldset>
        <legend>Claim map</legend>
        <div class="grid">
          {CLAIMS.map(([c, label, hint]) => (
            <Field
              key={c}
              id={id(`claim-${c}`)}
              label={label}
              value={f.claims[c]}
              onInput={(v) => set('claims')({ ...f.claims, [c]: v })}
              placeholder={c === 'stream' ? 'sub' : undefined}
              hint={hint}
              errors={errorsFor(errors, `claims.${c}`)}
            />
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>Revoked (one per line)</legend>
        <div class="grid">
          {REVOKED.map((r) => (
            <Field key={r} id={id(`revoked-${r}`)} label={r} value={f.revoked[r]} onInput={(v) => set('revoked')({ ...f.revoked, [r]: v })} multiline errors={errorsFor(errors, `revoked.${r}`)} />
          ))}
        </div>
      </fieldset>
      <Checkbox id={id('active')} label="Active" checked={f.isActive} onChange={set('isActive')} errors={errorsFor(errors, 'isActive')} />
      <div class="actions">
        <button type="submit" class="primary">
          {i ? 'Save issuer' : 'Create issuer'}
        </button>
        <button type="button" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

const keysText = (i: Issuer) =>
  [i.jwks ? `${i.jwks.keys.length} inline` : '', i.jwksUrl ? 'JWKS URL' : '', i.hasSecret ? 'secret' : ''].filter(Boolean).join(', ') || 'none';

/**
 * A signed-URL issuer's check: what a viewer presented (its URL, Cookie header or CAT header) and the
 * request's stream and address, answered with each field verified and the exact string signed, so a
 * signature mismatch shows which part differs (docs/api.md#checking-a-signed-credential).
 */
function SignedCheck(p: { issuer: Issuer; onClose: () => void }) {
  const [url, setUrl] = useState('');
  const [cookie, setCookie] = useState('');
  const [cat, setCat] = useState('');
  const [streamName, setStreamName] = useState('');
  const [clientIp, setClientIp] = useState('');
  const [result, setResult] = useState<SignedCheckResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const errors: FieldErrors = error instanceof ApiError ? error.errors : {};
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    try {
      const body: Record<string, unknown> = { streamName };
      if (url.trim() !== '') body.url = url.trim();
      if (cookie.trim() !== '') body.cookie = cookie.trim();
      if (cat.trim() !== '') body.cat = cat.trim();
      if (clientIp.trim() !== '') body.clientIp = clientIp.trim();
      setResult(await api.post<SignedCheckResult>(`/api/issuers/${p.issuer.id}/check`, body));
    } catch (x) {
      setError(x);
    }
  };
  const id = (n: string) => `signed-check-${n}`;
  const c = result?.credential;
  return (
    <section class="panel" aria-labelledby="signed-check-title">
      <h2 id="signed-check-title">
        Check a credential of issuer {p.issuer.id} ({p.issuer.type})
      </h2>
      <form onSubmit={(e) => void submit(e)}>
        <Field id={id('url')} label="URL" value={url} onInput={setUrl} hint="The signed URL, or the URL the viewer requested (full, or its path and query)." errors={errorsFor(errors, 'url')} />
        <Field id={id('cookie')} label="Cookie header" value={cookie} onInput={setCookie} multiline hint="As the viewer sent it: CloudFront-Policy=…; CloudFront-Signature=…" errors={errorsFor(errors, 'cookie')} />
        {p.issuer.type === 'cat' && <Field id={id('cat')} label="CTA-Common-Access-Token header" value={cat} onInput={setCat} errors={errorsFor(errors, 'cat')} />}
        <Field id={id('stream')} label="Stream name" value={streamName} onInput={setStreamName} required errors={errorsFor(errors, 'streamName')} />
        <Field id={id('ip')} label="Client address" value={clientIp} onInput={setClientIp} errors={errorsFor(errors, 'clientIp')} />
        <div class="toolbar">
          <button type="submit" class="primary">
            Check
          </button>
          <button type="button" onClick={p.onClose}>
            Close
          </button>
        </div>
      </form>
      <ErrorNotice error={error} fields={['url', 'cookie', 'cat', 'streamName', 'clientIp']} />
      {result && c && (
        <div id="signed-check-result">
          <p class={`decision ${result.allowed ? 'allowed' : 'denied'}`} role="status">
            {result.allowed ? 'Allowed' : 'Denied'}: {result.message}
            <span class="muted">
              {' '}
              (HTTP {result.status}, {result.reason})
            </span>
          </p>
          <p id="signed-check-verified">{c.verified ? `The ${c.format} credential verified.` : `The ${c.format} credential did not verify: ${c.problem ?? ''}`}</p>
          <table aria-label="Fields of the credential">
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Value</th>
                <th scope="col">Checked</th>
              </tr>
            </thead>
            <tbody>
              {c.fields.map((f, n) => (
                <tr key={`${f.name}-${n}`} class={f.ok === false ? 'rule-fail' : f.ok ? 'rule-pass' : undefined}>
                  <td>{f.name}</td>
                  <td class="mono">{f.value}</td>
                  <td>{f.check ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {c.signed !== undefined && (
            <>
              <h3>What the signature covers</h3>
              <pre class="mono" id="signed-check-string">
                {c.signed}
              </pre>
            </>
          )}
          <h3>Rules</h3>
          <ul>
            {result.rules.map((r) => (
              <li key={r.rule}>
                {r.rule}: {r.result}
                {r.detail ? ` — ${r.detail}` : ''}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

export function IssuersPage() {
  const list = useAsync(() => api.get<Issuer[]>('/api/issuers'), []);
  const [mode, setMode] = useState<'list' | 'new' | 'edit'>('list');
  const [selected, setSelected] = useState<Issuer | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [deleting, setDeleting] = useState<Issuer | null>(null);
  const [checking, setChecking] = useState<Issuer | null>(null);

  const saved = (text: string) => {
    setMessage(text);
    setError(null);
    setSelected(null);
    setMode('list');
    list.reload();
  };
  const run = async (f: () => Promise<void>) => {
    setMessage('');
    setError(null);
    try {
      await f();
    } catch (x) {
      setError(x);
    }
  };
  const setActive = (i: Issuer, active: boolean) =>
    run(async () => {
      await api.put<Issuer>(`/api/issuers/${i.id}`, { isActive: active, rev: i.rev });
      saved(`Issuer ${i.id} ${active ? 'enabled' : 'disabled'}.`);
    });
  const remove = () => {
    const i = deleting;
    setDeleting(null);
    if (!i) return;
    void run(async () => {
      await api.del<Issuer>(`/api/issuers/${i.id}`);
      saved(`Issuer ${i.id} deleted.`);
    });
  };
  const rows = list.data ?? [];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Issuers
      </h1>
      <p class="lead">JWTs signed by your identity provider or video platform, accepted as credentials that narrow one of your tokens.</p>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => {
          setMode('new');
          setSelected(null);
          setMessage('');
        }}>
          New issuer
        </button>
        <button type="button" onClick={list.reload}>
          Reload
        </button>
      </div>
      {message && <Notice kind="ok">{message}</Notice>}
      <ErrorNotice error={error} />
      {mode === 'new' && <IssuerForm onSaved={(i) => saved(`Issuer ${i.id} created.`)} onCancel={() => setMode('list')} />}
      {mode === 'edit' && selected && <IssuerForm issuer={selected} key={`${selected.id}-${selected.rev}`} onSaved={(i) => saved(`Issuer ${i.id} saved.`)} onCancel={() => setMode('list')} />}
      {checking && <SignedCheck issuer={checking} key={checking.id} onClose={() => setChecking(null)} />}
      <ErrorNotice error={list.error} />
      <table aria-label="Issuers" aria-busy={list.loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Label</th>
            <th scope="col">Issuer (iss)</th>
            <th scope="col">Key ids</th>
            <th scope="col">Algorithms</th>
            <th scope="col">Keys</th>
            <th scope="col">Policy token</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((i) => (
            <tr key={i.id} class={selected?.id === i.id ? 'selected' : undefined}>
              <td>{i.id}</td>
              <td>{i.label}</td>
              <td class="mono">{i.issuer ?? 'none'}</td>
              <td class="mono">{i.keyIds.length ? i.keyIds.join(', ') : 'any'}</td>
              <td>{i.type === 'jwt' ? i.algorithms.join(', ') : i.type}</td>
              <td>{keysText(i)}</td>
              <td>{i.policyTokenKind ? `${i.policyTokenId} (${i.policyTokenKind})` : `${i.policyTokenId} (missing: every JWT is refused)`}</td>
              <td>{i.isActive ? 'Active' : 'Disabled'}</td>
              <td>
                {i.type !== 'jwt' && (
                  <button type="button" aria-label={`Check a credential of issuer ${i.id}`} onClick={() => setChecking(i)}>
                    Check
                  </button>
                )}
                <button type="button" aria-label={`Edit issuer ${i.id}`} hidden={i.type !== 'jwt'} onClick={() => {
                  setSelected(i);
                  setMode('edit');
                  setMessage('');
                }}>
                  Edit
                </button>
                <button type="button" aria-label={`${i.isActive ? 'Disable' : 'Enable'} issuer ${i.id}`} onClick={() => void setActive(i, !i.isActive)}>
                  {i.isActive ? 'Disable' : 'Enable'}
                </button>
                <button type="button" class="danger" aria-label={`Delete issuer ${i.id}`} onClick={() => setDeleting(i)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {!list.loading && rows.length === 0 && (
            <tr>
              <td colSpan={9}>No issuers yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete issuer ${deleting?.id}?`}
        titleId="issuer-delete-title"
        confirmLabel="Delete issuer"
        danger
        onConfirm={remove}
        onCancel={() => setDeleting(null)}
      >
        <p>JWTs of {deleting?.label} stop being credentials at once. This cannot be undone.</p>
      </ConfirmDialog>
    </section>
  );
}
