// Credential issuers: the account's list, a create and edit form with every field of the API for JWT
// issuers and for the signed-URL formats (their settings, a secret and a private key write-only: an
// empty field keeps them), disable/enable, delete after a confirmation, and for a signed-URL issuer
// a check of a pasted URL, cookie or CAT, field by field.
import { useState } from 'preact/hooks';
import { ApiError, ISSUER_ALGORITHMS, api, type FieldErrors, type Issuer, type SignedCheckResult } from './api';
import { Checkbox, ConfirmDialog, ErrorNotice, Field, FieldError, Notice, Select, errorsFor, toList, useAsync } from './components';

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

type IssuerType = Issuer['type'];
type SignedType = Exclude<IssuerType, 'jwt'>;
/** An issuer as answered, with the key references a signed-URL issuer may read its keys from (docs/api.md#keys-from-files-and-the-environment). */
type IssuerAnswer = Issuer & { secretFrom?: string | null; signingKeyFrom?: string | null };

const TYPES: Array<[IssuerType, string]> = [
  ['jwt', 'JWT'],
  ['akamai-edgeauth', 'Akamai EdgeAuth'],
  ['cloudfront', 'Amazon CloudFront'],
  ['cat', 'Common Access Token (CAT)'],
  ['wowza-securetoken', 'Wowza SecureToken'],
  ['nimble-wmsauth', 'Nimble WMSAuth'],
];

/**
 * One field of a signed-URL issuer's settings (docs/api.md#signed-url-issuers). `text` empty is
 * absent (or null when `nullable`), `list` is comma-separated, `lines` one per line, `choice` one of
 * `options` (the first the API's default), `flag` a checkbox whose API default is `fallback`, `keys`
 * the public keys by id.
 */
interface SettingSpec {
  name: string;
  label: string;
  kind: 'text' | 'list' | 'lines' | 'number' | 'choice' | 'flag' | 'keys';
  hint?: string;
  options?: readonly string[];
  fallback?: boolean;
  nullable?: boolean;
}

const SETTINGS: Record<SignedType, SettingSpec[]> = {
  'akamai-edgeauth': [
    { name: 'algorithm', label: 'Algorithm', kind: 'choice', options: ['sha256', 'sha1', 'md5'] },
    { name: 'fieldDelimiter', label: 'Field delimiter', kind: 'text', hint: 'One character. Empty on create: ~' },
    { name: 'aclDelimiter', label: 'ACL delimiter', kind: 'text', hint: 'One character. Empty on create: !' },
    { name: 'names', label: 'Token names', kind: 'list', hint: 'The query parameters and cookies the token arrives in, comma-separated, at most 4. Empty on create: hdnts, __token__' },
    { name: 'salt', label: 'Salt', kind: 'text', nullable: true, hint: 'Empty: none.' },
    { name: 'escapeEarly', label: 'Escape early (the token input is escaped, as Akamai’s escapeEarly)', kind: 'flag', fallback: false },
  ],
  cloudfront: [
    { name: 'publicKeys', label: 'Public keys', kind: 'keys', hint: "The distribution's trusted key group, by the ids CloudFront gives them: PEM or base64 SPKI, RSA of 2048 bits or more, or EC P-256." },
    { name: 'urls', label: 'Viewer URLs', kind: 'lines', hint: 'One per line: the scheme and host viewers request through, e.g. https://d111111abcdef8.cloudfront.net' },
    { name: 'signingKeyId', label: 'Signing key id', kind: 'text', nullable: true, hint: 'The public key whose private key (below) signs for the edge. Empty: none.' },
    { name: 'hashAlgorithm', label: 'Hash algorithm', kind: 'choice', options: ['SHA256', 'SHA1'] },
  ],
  cat: [
    { name: 'publicKeys', label: 'Public keys', kind: 'keys', hint: 'ES256 (EC P-256) public keys by kid: PEM or base64 SPKI.' },
    { name: 'secretKeyId', label: 'Secret key id', kind: 'text', nullable: true, hint: 'The kid of the HS256 key, which is the secret. Empty: none.' },
    { name: 'urls', label: 'Viewer URLs', kind: 'lines', hint: "One per line: the scheme and host (and port) viewers request through, which catu's are compared with." },
    { name: 'queryParam', label: 'Query parameter', kind: 'text', hint: 'The query parameter a token may arrive in. Empty on create: cat' },
    { name: 'signingKeyId', label: 'Signing key id', kind: 'text', nullable: true, hint: 'The kid signing for the edge uses: the secret key id, or a public key whose private key is below. Empty: none.' },
  ],
  'wowza-securetoken': [
    { name: 'prefix', label: 'Parameter prefix', kind: 'text', hint: 'Letters, digits and _. Empty on create: wowzatoken' },
    { name: 'algorithm', label: 'Algorithm', kind: 'choice', options: ['sha256', 'sha384', 'sha512'] },
    { name: 'includeClientIp', label: 'The hash includes the client address', kind: 'flag', fallback: false },
    { name: 'requireEndTime', label: 'Require an end time', kind: 'flag', fallback: true },
  ],
  'nimble-wmsauth': [{ name: 'maxValidMinutes', label: 'Max valid minutes', kind: 'number', hint: '1 to 525600: the longest validminutes accepted. Empty on create: 1440' }],
};

/** The secret each type keeps (none: cloudfront verifies with public keys only). */
const SECRETS: Record<IssuerType, { label: string; hint: string } | null> = {
  jwt: { label: 'HMAC secret (HS256/384/512)', hint: 'At least 16 characters (32 bytes or more recommended). It is never shown again.' },
  'akamai-edgeauth': { label: 'EdgeAuth key (hex)', hint: "The key as Akamai's property holds it: hex, 16 bytes or more. It is never shown again." },
  cloudfront: null,
  cat: { label: 'HS256 key (hex)', hint: 'The key of the secret key id: hex, 32 bytes or more. It is never shown again.' },
  'wowza-securetoken': { label: 'Shared secret', hint: 'The SecureToken shared secret. It is never shown again.' },
  'nimble-wmsauth': { label: 'WMSAuth password', hint: "The WMSAuth rule's password. It is never shown again." },
};
/** Whether the type signs with a private key of its own. */
const signsWithKey = (t: IssuerType) => t === 'cloudfront' || t === 'cat';
/** Whether the type checks iss (and aud). */
const checksIss = (t: IssuerType) => t === 'jwt' || t === 'cat';

interface KeyRow {
  /** Tells the rows apart while they are added and removed. */
  row: number;
  id: string;
  key: string;
}
let lastRow = 0;
const keyRow = (id: string, key: string): KeyRow => ({ row: ++lastRow, id, key });

interface FormState {
  type: IssuerType;
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
  /** A signed-URL issuer's settings fields as typed, by name; its flags and public keys apart. */
  settings: Record<string, string>;
  flags: Record<string, boolean>;
  publicKeys: KeyRow[];
  signingKey: string;
  removeSigningKey: boolean;
  secretFrom: string;
  signingKeyFrom: string;
}

/** The settings fields of `type` as the form holds them: from `s` (an answer's settings), else empty (the API's defaults). */
function settingsState(type: IssuerType, s?: Record<string, unknown> | null): Pick<FormState, 'settings' | 'flags' | 'publicKeys'> {
  const settings: Record<string, string> = {};
  const flags: Record<string, boolean> = {};
  let publicKeys: KeyRow[] = [];
  if (type === 'jwt') return { settings, flags, publicKeys };
  for (const spec of SETTINGS[type]) {
    const v = s?.[spec.name];
    if (spec.kind === 'flag') flags[spec.name] = typeof v === 'boolean' ? v : (spec.fallback ?? false);
    else if (spec.kind === 'keys') publicKeys = Array.isArray(v) ? v.map((k: { id?: unknown; key?: unknown }) => keyRow(String(k.id ?? ''), String(k.key ?? ''))) : [];
    else if (spec.kind === 'list') settings[spec.name] = Array.isArray(v) ? v.join(', ') : '';
    else if (spec.kind === 'lines') settings[spec.name] = Array.isArray(v) ? v.join('\n') : '';
    else settings[spec.name] = v === null || v === undefined ? '' : String(v);
  }
  return { settings, flags, publicKeys };
}

const fromRecord = (i?: Issuer): FormState => ({
  type: i?.type ?? 'jwt',
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
  ...settingsState(i?.type ?? 'jwt', i?.settings),
  signingKey: '',
  removeSigningKey: false,
  secretFrom: '',
  signingKeyFrom: '',
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
/** The problems the API names for exactly `name` (not the fields under it). */
const exactly = (errors: FieldErrors, name: string): string[] => errors[name] ?? [];

/** Every settings field of the form's type as the API takes it; an empty field is absent (null when it may be none). */
function settingsValues(f: FormState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.type === 'jwt') return out;
  for (const spec of SETTINGS[f.type]) {
    const raw = f.settings[spec.name] ?? '';
    let v: unknown;
    if (spec.kind === 'flag') v = f.flags[spec.name] ?? spec.fallback ?? false;
    else if (spec.kind === 'keys') v = f.publicKeys.map((k) => ({ id: k.id.trim(), key: k.key.trim() }));
    else if (spec.kind === 'list') v = toList(raw);
    else if (spec.kind === 'lines') v = lines(raw);
    else if (spec.kind === 'number') v = num(raw, undefined);
    else if (spec.kind === 'choice') v = raw === '' ? undefined : raw;
    else v = raw.trim() === '' ? (spec.nullable ? null : undefined) : raw.trim();
    if (v !== undefined) out[spec.name] = v;
  }
  return out;
}

/** The settings a create sends: only the fields filled (a flag left at its default, an empty list: absent), so the API's defaults apply. */
function createSettings(f: FormState): Record<string, unknown> {
  if (f.type === 'jwt') return {};
  const specs = SETTINGS[f.type];
  return Object.fromEntries(
    Object.entries(settingsValues(f)).filter(([k, v]) => {
      if (v === null || (Array.isArray(v) && v.length === 0)) return false;
      return typeof v !== 'boolean' || v !== specs.find((s) => s.name === k)?.fallback;
    }),
  );
}

/** Every field as the API takes it on a create; `jwks` parsed here so that a typo is named before sending. */
function fullBody(f: FormState): { body: Record<string, unknown>; local: FieldErrors } {
  const local: FieldErrors = {};
  const revoked = { jti: lines(f.revoked.jti), sub: lines(f.revoked.sub), kid: lines(f.revoked.kid) };
  if (f.type !== 'jwt') {
    const body: Record<string, unknown> = { label: f.label.trim(), type: f.type, isActive: f.isActive, policyTokenId: num(f.policyTokenId, undefined) };
    if (checksIss(f.type)) {
      body.issuer = orNull(f.issuer);
      body.audience = toList(f.audience);
    }
    const settings = createSettings(f);
    if (Object.keys(settings).length > 0) body.settings = settings;
    body.revoked = revoked;
    if (num(f.clockSkewSeconds, undefined) !== undefined) body.clockSkewSeconds = num(f.clockSkewSeconds, undefined);
    // only the keys the type has: what was typed for another type before a change of type stays here
    if (SECRETS[f.type] && f.secret !== '') body.secret = f.secret;
    if (SECRETS[f.type] && f.secretFrom.trim() !== '') body.secretFrom = f.secretFrom.trim();
    if (signsWithKey(f.type) && f.signingKey.trim() !== '') body.signingKey = f.signingKey;
    if (signsWithKey(f.type) && f.signingKeyFrom.trim() !== '') body.signingKeyFrom = f.signingKeyFrom.trim();
    return { body, local };
  }
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
    revoked,
  };
  if (num(f.clockSkewSeconds, undefined) !== undefined) body.clockSkewSeconds = num(f.clockSkewSeconds, undefined);
  if (f.secret !== '') body.secret = f.secret;
  return { body, local };
}

/** The fields an update sends apart from the rest (merged, write-only, or fixed). */
const APART = new Set(['type', 'secret', 'claims', 'revoked', 'settings', 'signingKey', 'secretFrom', 'signingKeyFrom']);

/**
 * Only what changed, with the rev the form was read at (a concurrent change is a 409, never
 * overwritten). A signed-URL issuer's settings go as a whole when any of their fields changed.
 */
function updateBody(i: Issuer, f: FormState): { body: Record<string, unknown>; local: FieldErrors } {
  const { body: all, local } = fullBody(f);
  const was = fullBody(fromRecord(i)).body;
  const body: Record<string, unknown> = { rev: i.rev };
  for (const [k, v] of Object.entries(all)) {
    if (APART.has(k)) continue;
    if (!same(v, was[k])) body[k] = v;
  }
  if (all.claims !== undefined) {
    const claims = all.claims as Record<string, string | null>;
    const changedClaims = Object.fromEntries(Object.entries(claims).filter(([c, v]) => v !== (i.claims[c as Claim] ?? null)));
    if (Object.keys(changedClaims).length > 0) body.claims = changedClaims;
  }
  const revoked = all.revoked as Issuer['revoked'];
  const changedRevoked = Object.fromEntries(REVOKED.filter((r) => !same(revoked[r], i.revoked[r])).map((r) => [r, revoked[r]]));
  if (Object.keys(changedRevoked).length > 0) body.revoked = changedRevoked;
  if (f.type !== 'jwt') {
    const settings = settingsValues(f);
    if (!same(settings, settingsValues(fromRecord(i)))) body.settings = settings;
    for (const k of ['signingKey', 'secretFrom', 'signingKeyFrom'] as const) if (all[k] !== undefined) body[k] = all[k];
    if (all.signingKey === undefined && f.removeSigningKey) body.signingKey = null;
  }
  if (f.secret !== '' && SECRETS[f.type]) body.secret = f.secret;
  else if (f.removeSecret) body.secret = null;
  return { body, local };
}

const COMMON_FIELDS = ['type', 'label', 'isActive', 'policyTokenId', 'clockSkewSeconds', 'revoked'];
const JWT_FIELDS = ['issuer', 'keyIds', 'audience', 'algorithms', 'secret', 'jwks', 'jwksUrl', 'maxLifetimeSeconds', 'cookieName', 'claims'];

/** The API's error keys the form shows under a field of `type` (the others are listed above the form). */
function fieldsOf(type: IssuerType): string[] {
  if (type === 'jwt') return [...COMMON_FIELDS, ...JWT_FIELDS];
  return [
    ...COMMON_FIELDS,
    ...(checksIss(type) ? ['issuer', 'audience'] : []),
    ...(SECRETS[type] ? ['secret', 'secretFrom'] : []),
    ...(signsWithKey(type) ? ['signingKey', 'signingKeyFrom'] : []),
    ...SETTINGS[type].map((s) => `settings.${s.name}`),
  ];
}

/** A list of public keys by id, a row each, added and removed; each row's problems (settings.publicKeys.N) under it. */
function PublicKeys(p: { id: (n: string) => string; hint?: string; rows: KeyRow[]; onChange: (rows: KeyRow[]) => void; errors: FieldErrors }) {
  const path = 'settings.publicKeys';
  const own = exactly(p.errors, path);
  const at = (n: number, patch: Partial<KeyRow>) => p.onChange(p.rows.map((r, m) => (m === n ? Object.assign({}, r, patch) : r)));
  return (
    <fieldset aria-describedby={[p.hint ? p.id('settings-publicKeys-hint') : '', own.length ? p.id('settings-publicKeys-error') : ''].filter(Boolean).join(' ') || undefined}>
      <legend>Public keys</legend>
      {p.hint && (
        <p class="hint" id={p.id('settings-publicKeys-hint')}>
          {p.hint}
        </p>
      )}
      {p.rows.map((r, n) => (
        <div class="grid" key={r.row}>
          <Field id={p.id(`settings-publicKeys-${n}-id`)} label={`Key ${n + 1} id`} value={r.id} onInput={(v) => at(n, { id: v })} errors={errorsFor(p.errors, `${path}.${n}.id`)} />
          <Field
            id={p.id(`settings-publicKeys-${n}-key`)}
            label={`Key ${n + 1} public key (PEM)`}
            value={r.key}
            onInput={(v) => at(n, { key: v })}
            multiline
            placeholder="-----BEGIN PUBLIC KEY-----"
            errors={[...exactly(p.errors, `${path}.${n}`), ...errorsFor(p.errors, `${path}.${n}.key`)]}
          />
          <div>
            <button type="button" aria-label={`Remove key ${n + 1}`} onClick={() => p.onChange(p.rows.filter((_, m) => m !== n))}>
              Remove
            </button>
          </div>
        </div>
      ))}
      <button type="button" onClick={() => p.onChange([...p.rows, keyRow('', '')])}>
        Add a public key
      </button>
      <FieldError id={p.id('settings-publicKeys-error')} messages={own} />
    </fieldset>
  );
}

function IssuerForm(p: { issuer?: Issuer; onSaved: (i: Issuer) => void; onCancel: () => void }) {
  const i = p.issuer as IssuerAnswer | undefined;
  const [f, setF] = useState<FormState>(() => fromRecord(i));
  const [error, setError] = useState<unknown>(null);
  const errors: FieldErrors = error instanceof ApiError ? error.errors : {};
  const id = (n: string) => `issuer-${i ? 'edit' : 'new'}-${n}`;
  const set =
    <K extends keyof FormState>(k: K) =>
    (v: FormState[K]) =>
      setF((s) => ({ ...s, [k]: v }));
  const jwt = f.type === 'jwt';
  const secret = SECRETS[f.type];

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
  // Another type has other settings: those typed for the previous one are dropped.
  const setType = (t: IssuerType) => setF((s) => ({ ...s, type: t, ...settingsState(t), removeSecret: false, removeSigningKey: false }));
  const setting = (name: string) => (v: string) => setF((s) => ({ ...s, settings: { ...s.settings, [name]: v } }));
  const flag = (name: string) => (v: boolean) => setF((s) => ({ ...s, flags: { ...s.flags, [name]: v } }));
  const writeOnly = (has: boolean, what: string, from?: string | null) =>
    `Write-only: ${has ? `the issuer has ${what}; ` : from ? `the issuer reads it from ${from}; ` : 'the issuer has none; '}leave empty to keep it as it is.`;
  const keyRef = (field: 'secretFrom' | 'signingKeyFrom', label: string, instead: string) => {
    const now = i?.[field];
    return (
      <Field
        id={id(field === 'secretFrom' ? 'secret-from' : 'signing-key-from')}
        label={label}
        value={f[field]}
        onInput={set(field)}
        placeholder="env:NAME or file:name"
        hint={
          i
            ? `${now ? `Now ${now}` : 'None now'}: a reference given replaces it and a stored ${instead}. Empty: kept as it is.`
            : `Instead of the ${instead}: where the operator keeps it, env:NAME or file:name. Empty: the ${instead} above.`
        }
        errors={errorsFor(errors, field)}
      />
    );
  };
  const settingField = (spec: SettingSpec) => {
    const key = `settings.${spec.name}`;
    const fid = id(`settings-${spec.name}`);
    if (spec.kind === 'keys') return <PublicKeys key={spec.name} id={id} hint={spec.hint} rows={f.publicKeys} onChange={set('publicKeys')} errors={errors} />;
    if (spec.kind === 'flag') return <Checkbox key={spec.name} id={fid} label={spec.label} checked={f.flags[spec.name] ?? false} onChange={flag(spec.name)} errors={errorsFor(errors, key)} />;
    if (spec.kind === 'choice') {
      const options = (spec.options ?? []).map((o): [string, string] => [o, o]);
      return (
        <Select
          key={spec.name}
          id={fid}
          label={spec.label}
          value={f.settings[spec.name] ?? ''}
          options={i ? options : [['', `Default (${spec.options?.[0] ?? ''})`], ...options]}
          onChange={setting(spec.name)}
          errors={errorsFor(errors, key)}
        />
      );
    }
    return (
      <Field
        key={spec.name}
        id={fid}
        label={spec.label}
        value={f.settings[spec.name] ?? ''}
        onInput={setting(spec.name)}
        multiline={spec.kind === 'lines'}
        inputMode={spec.kind === 'number' ? 'numeric' : undefined}
        hint={spec.hint}
        errors={errorsFor(errors, key)}
      />
    );
  };
  const signedSettings = jwt ? [] : SETTINGS[f.type as SignedType];
  return (
    <form class="panel" onSubmit={submit} noValidate aria-labelledby={id('title')}>
      <h2 id={id('title')}>{i ? `Edit issuer ${i.id}` : 'New issuer'}</h2>
      <ErrorNotice error={error} fields={fieldsOf(f.type)} />
      <div class="grid">
        {i ? (
          <div class="field">
            <label for={id('type')}>Type</label>
            <input id={id('type')} class="mono" value={i.type} readOnly aria-describedby={id('type-hint')} />
            <p class="hint" id={id('type-hint')}>
              Fixed: another format is another issuer.
            </p>
          </div>
        ) : (
          <Select id={id('type')} label="Type" value={f.type} options={TYPES} onChange={setType} errors={errorsFor(errors, 'type')} />
        )}
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
        {checksIss(f.type) && (
          <Field
            id={id('iss')}
            label="Issuer (iss)"
            value={f.issuer}
            onInput={set('issuer')}
            placeholder="https://idp.example.com/"
            hint={jwt ? 'Empty: JWTs without iss (Mux, IVS, Cloudflare).' : 'The iss its tokens must carry. Empty: not checked.'}
            errors={errorsFor(errors, 'issuer')}
          />
        )}
        {jwt && <Field id={id('key-ids')} label="Key ids" value={f.keyIds} onInput={set('keyIds')} multiline hint="One per line. Empty: any key id." errors={errorsFor(errors, 'keyIds')} />}
        {checksIss(f.type) && <Field id={id('audience')} label="Audience" value={f.audience} onInput={set('audience')} multiline hint="One per line. Empty: aud not checked." errors={errorsFor(errors, 'audience')} />}
      </div>
      {jwt && (
        <fieldset aria-describedby={errorsFor(errors, 'algorithms').length ? id('algorithms-error') : undefined}>
          <legend>Algorithms</legend>
          <div class="checks">
            {ISSUER_ALGORITHMS.map((alg) => (
              <Checkbox key={alg} id={id(`alg-${alg}`)} label={alg} checked={f.algorithms.includes(alg)} onChange={(on) => toggleAlg(alg, on)} />
            ))}
          </div>
          <FieldError id={id('algorithms-error')} messages={errorsFor(errors, 'algorithms')} />
        </fieldset>
      )}
      {!jwt && (
        <fieldset>
          <legend>Settings ({f.type})</legend>
          {signedSettings.filter((s) => s.kind === 'keys').map(settingField)}
          <div class="grid">{signedSettings.filter((s) => s.kind !== 'keys' && s.kind !== 'flag').map(settingField)}</div>
          {signedSettings.filter((s) => s.kind === 'flag').map(settingField)}
        </fieldset>
      )}
      <div class="grid">
        {secret && (
          <div>
            <Field
              id={id('secret')}
              label={secret.label}
              type="password"
              value={f.secret}
              onInput={set('secret')}
              autoComplete="new-password"
              hint={i ? writeOnly(i.hasSecret, 'a secret', i.secretFrom) : secret.hint}
              errors={errorsFor(errors, 'secret')}
            />
            {i?.hasSecret && checksIss(f.type) && <Checkbox id={id('remove-secret')} label="Remove the secret" checked={f.removeSecret} onChange={set('removeSecret')} />}
          </div>
        )}
        {!jwt && secret && keyRef('secretFrom', 'Secret from', 'secret')}
        {jwt && (
          <Field
            id={id('jwks-url')}
            label="JWKS URL"
            value={f.jwksUrl}
            onInput={set('jwksUrl')}
            placeholder="https://idp.example.com/.well-known/jwks.json"
            hint="For RS*, PS*, ES*, EdDSA: https:// and a public address."
            errors={errorsFor(errors, 'jwksUrl')}
          />
        )}
      </div>
      {signsWithKey(f.type) && (
        <div class="grid">
          <div>
            <Field
              id={id('signing-key')}
              label="Private key (PEM)"
              value={f.signingKey}
              onInput={set('signingKey')}
              multiline
              placeholder="-----BEGIN PRIVATE KEY-----"
              hint={
                i
                  ? writeOnly(i.hasSigningKey, 'a private key', i.signingKeyFrom)
                  : 'The private key of the signing key id (PKCS#8, PKCS#1 or SEC1), which signs for the edge. It is never shown again.'
              }
              errors={errorsFor(errors, 'signingKey')}
            />
            {i?.hasSigningKey && <Checkbox id={id('remove-signing-key')} label="Remove the private key" checked={f.removeSigningKey} onChange={set('removeSigningKey')} />}
          </div>
          {keyRef('signingKeyFrom', 'Private key from', 'private key')}
        </div>
      )}
      {jwt && <Field id={id('jwks')} label="Public keys (JWK set)" value={f.jwks} onInput={set('jwks')} multiline hint={'{"keys": [ … ]}: public keys only.'} errors={errorsFor(errors, 'jwks')} />}
      <div class="grid">
        <Field id={id('skew')} label="Clock skew (seconds)" value={f.clockSkewSeconds} onInput={set('clockSkewSeconds')} inputMode="numeric" hint="0 to 300; empty on create: 30." errors={errorsFor(errors, 'clockSkewSeconds')} />
        {jwt && (
          <Field
            id={id('lifetime')}
            label="Max lifetime (seconds)"
            value={f.maxLifetimeSeconds}
            onInput={set('maxLifetimeSeconds')}
            inputMode="numeric"
            hint="Empty: the policy token's expiry bounds it."
            errors={errorsFor(errors, 'maxLifetimeSeconds')}
          />
        )}
        {jwt && <Field id={id('cookie')} label="Cookie name" value={f.cookieName} onInput={set('cookieName')} hint="A cookie the JWT may arrive in (auth_request). Empty: none." errors={errorsFor(errors, 'cookieName')} />}
      </div>
      {jwt && (
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
      )}
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

const keysText = (i: IssuerAnswer) => {
  const publicKeys = Array.isArray(i.settings?.publicKeys) ? i.settings.publicKeys.length : 0;
  return (
    [
      i.jwks ? `${i.jwks.keys.length} inline` : '',
      i.jwksUrl ? 'JWKS URL' : '',
      publicKeys ? `${publicKeys} public` : '',
      i.hasSecret ? 'secret' : '',
      i.secretFrom ? `secret from ${i.secretFrom}` : '',
      i.hasSigningKey ? 'private key' : '',
      i.signingKeyFrom ? `private key from ${i.signingKeyFrom}` : '',
    ]
      .filter(Boolean)
      .join(', ') || 'none'
  );
};

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
      <p class="lead">JWTs signed by your identity provider or video platform, and the signed URLs, cookies and tokens of CDNs and media servers, accepted as credentials that narrow one of your tokens.</p>
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
                <button type="button" aria-label={`Edit issuer ${i.id}`} onClick={() => {
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
