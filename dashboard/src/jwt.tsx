// Self-signed subscribe JWTs (docs/api.md#self-signed-subscribe-tokens), signed here with WebCrypto HMAC: the parent token's
// value is the key (its UTF-8 bytes) and is never sent anywhere. Claims as src/policy/self-signed.ts
// signs them: {streaming: {tokenId, tokenType: "Subscribe", streamName, allowedOrigins,
// allowedIpAddresses, tracking?, customViewerData?}, iat, exp}.
import { useEffect, useState } from 'preact/hooks';
import { api, query, type FieldErrors, type TokenRecord } from './api';
import { CopyButton, ErrorNotice, Field, Notice, Select, toList, useAsync } from './components';

type Alg = 'HS256' | 'HS384' | 'HS512';
const HASH: Record<Alg, string> = { HS256: 'SHA-256', HS384: 'SHA-384', HS512: 'SHA-512' };

const b64url = (bytes: Uint8Array): string => {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const utf8 = (s: string) => new TextEncoder().encode(s);

export async function signJwt(alg: Alg, key: string, payload: object): Promise<string> {
  const head = b64url(utf8(JSON.stringify({ alg, typ: 'JWT' })));
  const body = b64url(utf8(JSON.stringify(payload)));
  const k = await crypto.subtle.importKey('raw', utf8(key), { name: 'HMAC', hash: HASH[alg] }, false, ['sign']);
  const sig = new Uint8Array(await crypto.subtle.sign('HMAC', k, utf8(`${head}.${body}`)));
  return `${head}.${body}.${b64url(sig)}`;
}

export function JwtPage({ params }: { params: URLSearchParams }) {
  const [tokenId, setTokenId] = useState(params.get('id') ?? '');
  const [secret, setSecret] = useState('');
  const [streamName, setStreamName] = useState('');
  const [expiresIn, setExpiresIn] = useState('600');
  const [alg, setAlg] = useState<Alg>('HS256');
  const [origins, setOrigins] = useState('');
  const [ips, setIps] = useState('');
  const [trackingId, setTrackingId] = useState('');
  const [viewerData, setViewerData] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [out, setOut] = useState<{ jwt: string; claims: object } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);

  // Filling from a subscribe token reads it from the API; the value then stays on this page.
  const tokens = useAsync(() => api.get<TokenRecord[]>(`/api/subscribe_token/list?${query({ sortBy: 'AddedOn', isDescending: true, itemsOnPage: 100 })}`), []);
  const fillFrom = (t: TokenRecord) => {
    setTokenId(String(t.id));
    setSecret(t.token);
    setTrackingId(t.tracking?.trackingId ?? '');
    const exact = t.streams.find((s) => !s.isRegex);
    if (exact && streamName === '') setStreamName(exact.streamName);
  };
  const fill = (id: string) => {
    const t = tokens.data?.find((x) => String(x.id) === id);
    if (t) fillFrom(t);
  };
  // Arriving from a token's "Sign a JWT" button (#/jwt?id=4) fills that token in.
  const preset = params.get('id');
  useEffect(() => {
    if (preset && /^[1-9][0-9]*$/.test(preset)) api.get<TokenRecord>(`/api/subscribe_token/${preset}`).then(fillFrom, setFailure);
  }, [preset]);

  const generate = async (e: Event) => {
    e.preventDefault();
    setOut(null);
    setFailure(null);
    const problems: FieldErrors = {};
    if (!/^[1-9][0-9]*$/.test(tokenId.trim())) problems.tokenId = ['give the id of the parent subscribe token'];
    if (secret.trim() === '') problems.token = ['give the parent subscribe token’s value (the signing key)'];
    if (streamName.trim() === '') problems.streamName = ['give one exact stream name'];
    if (!/^[1-9][0-9]*$/.test(expiresIn.trim())) problems.expiresIn = ['give a number of seconds (1 or more)'];
    if (viewerData.length > 1024) problems.customViewerData = ['at most 1024 characters'];
    setErrors(problems);
    if (Object.keys(problems).length) return;
    if (!globalThis.crypto?.subtle) {
      setFailure(new Error('This browser offers WebCrypto only on HTTPS or localhost pages: open the dashboard over HTTPS to sign here.'));
      return;
    }
    const now = Math.floor(Date.now() / 1000);
    const streaming: Record<string, unknown> = {
      tokenId: Number(tokenId),
      tokenType: 'Subscribe',
      streamName: streamName.trim(),
      allowedOrigins: toList(origins),
      allowedIpAddresses: toList(ips),
    };
    if (trackingId.trim()) streaming.tracking = { trackingId: trackingId.trim() };
    if (viewerData !== '') streaming.customViewerData = viewerData;
    const claims = { streaming, iat: now, exp: now + Number(expiresIn) };
    try {
      setOut({ jwt: await signJwt(alg, secret.trim(), claims), claims });
    } catch (x) {
      setFailure(x);
    }
  };

  const options: Array<[string, string]> = [['', tokens.loading ? 'Loading…' : 'Choose a subscribe token'], ...(tokens.data ?? []).map((t): [string, string] => [String(t.id), `${t.id}: ${t.label}`])];
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Self-signed subscribe JWT
      </h1>
      <p class="lead">
        Signs a viewer JWT in this browser with a subscribe token’s value as the HMAC key. The token value never leaves this page; Streamgate
        checks the JWT when a viewer presents it.
      </p>
      <form class="panel" onSubmit={generate} noValidate aria-label="JWT claims">
        <Select
          id="jwt-fill"
          label="Fill from subscribe token"
          value={options.some(([v]) => v === tokenId) ? tokenId : ''}
          options={options}
          onChange={fill}
        />
        <div class="grid">
          <Field id="jwt-token-id" label="Parent token id" value={tokenId} onInput={setTokenId} inputMode="numeric" errors={errors.tokenId} />
          <Field
            id="jwt-token"
            label="Parent token value (signing key)"
            type="password"
            value={secret}
            onInput={setSecret}
            autoComplete="off"
            hint="Used only in this browser."
            errors={errors.token}
          />
          <Field id="jwt-stream" label="Stream name" value={streamName} onInput={setStreamName} errors={errors.streamName} />
          <Field id="jwt-expires" label="Expires in (seconds)" value={expiresIn} onInput={setExpiresIn} inputMode="numeric" errors={errors.expiresIn} />
          <Select
            id="jwt-alg"
            label="Algorithm"
            value={alg}
            options={[
              ['HS256', 'HS256'],
              ['HS384', 'HS384'],
              ['HS512', 'HS512'],
            ]}
            onChange={setAlg}
          />
          <Field id="jwt-tracking" label="Tracking id" value={trackingId} onInput={setTrackingId} hint="Must equal the parent's when it has one." />
          <Field id="jwt-origins" label="Allowed origins" multiline value={origins} onInput={setOrigins} hint="Narrows the parent's; one host per line." />
          <Field id="jwt-ips" label="Allowed IP addresses" multiline value={ips} onInput={setIps} hint="Narrows the parent's; one per line." />
          <Field id="jwt-viewer-data" label="Custom viewer data" multiline value={viewerData} onInput={setViewerData} errors={errors.customViewerData} />
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Sign JWT
          </button>
        </div>
      </form>
      <ErrorNotice error={failure} />
      <ErrorNotice error={tokens.error} />
      {out && (
        <section class="panel" aria-labelledby="jwt-out-title">
          <h2 id="jwt-out-title">Signed JWT</h2>
          <Notice kind="ok">Signed in this browser with {alg}; valid until {new Date((out.claims as { exp: number }).exp * 1000).toISOString()}.</Notice>
          <label for="jwt-output">JWT</label>
          <textarea id="jwt-output" class="mono" readOnly rows={4} value={out.jwt} />
          <CopyButton text={out.jwt} what="the JWT" />
          <h3>Claims</h3>
          <section aria-label="Claims">
            <pre class="mono">{JSON.stringify(out.claims, null, 2)}</pre>
          </section>
        </section>
      )}
    </section>
  );
}
