// "Why was my viewer rejected?": a probe sent to /api/{kind}_token/{id}/check (a dry run that binds
// nothing), answered with the decision and every rule, the failing one marked, and whose country
// lists applied to the viewer.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, api, type CheckResult, type RuleOutcome, type TokenKind } from './api';
import { ErrorNotice, Field, Select, errorsFor } from './components';

const PROTOCOLS: Array<[string, string]> = ['webrtc', 'rtmp', 'rtsp', 'srt', 'hls', 'dash', 'whip', 'whep'].map((p) => [p, p]);

export function CheckPage({ params }: { params: URLSearchParams }) {
  const [kind, setKind] = useState<TokenKind>(params.get('kind') === 'subscribe' ? 'subscribe' : 'publish');
  const [tokenId, setTokenId] = useState(params.get('id') ?? '');
  const [streamName, setStreamName] = useState(params.get('stream') ?? '');
  const [origin, setOrigin] = useState('');
  const [clientIp, setClientIp] = useState('');
  const [country, setCountry] = useState('');
  const [protocol, setProtocol] = useState('webrtc');
  const [result, setResult] = useState<CheckResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const errors = error instanceof ApiError ? error.errors : {};

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const id = tokenId.trim();
      if (!/^[1-9][0-9]*$/.test(id)) throw new ApiError(400, 'Validation errors', { tokenId: ['give the id of a token (a positive number)'] });
      const body: Record<string, string> = { streamName, protocol };
      if (origin.trim()) body.origin = origin.trim();
      if (clientIp.trim()) body.clientIp = clientIp.trim();
      if (country.trim()) body.country = country.trim();
      setResult(await api.post<CheckResult>(`/api/${kind}_token/${id}/check`, body));
    } catch (x) {
      setError(x);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Check access
      </h1>
      <p class="lead">
        Runs every rule of a token against a publisher or viewer you describe. Nothing is bound or counted. Country lists restrict viewers, never
        publishers: a publish token's lists apply to the viewers of the streams it publishes.
      </p>
      <form class="panel" onSubmit={submit} noValidate aria-label="Access probe">
        <div class="grid">
          <Select
            id="check-kind"
            label="Token kind"
            value={kind}
            options={[
              ['publish', 'Publish token'],
              ['subscribe', 'Subscribe token'],
            ]}
            onChange={setKind}
          />
          <Field id="check-token-id" label="Token id" value={tokenId} onInput={setTokenId} inputMode="numeric" required errors={errorsFor(errors, 'tokenId', 'path')} />
          <Field id="check-stream" label="Stream name" value={streamName} onInput={setStreamName} required errors={errorsFor(errors, 'streamName')} />
          <Field
            id="check-origin"
            label="Origin"
            value={origin}
            onInput={setOrigin}
            placeholder="https://www.example.com"
            hint="The page the player runs on (Origin or Referer). Empty: none sent."
            errors={errorsFor(errors, 'origin')}
          />
          <Field id="check-ip" label="Client IP address" value={clientIp} onInput={setClientIp} placeholder="203.0.113.7" errors={errorsFor(errors, 'clientIp')} />
          <Field id="check-country" label="Country" value={country} onInput={setCountry} placeholder="US" hint="Empty: looked up from the address." errors={errorsFor(errors, 'country')} />
          <Select id="check-protocol" label="Protocol" value={protocol} options={PROTOCOLS} onChange={setProtocol} errors={errorsFor(errors, 'protocol')} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Check
          </button>
        </div>
      </form>
      <ErrorNotice error={error} fields={['tokenId', 'path', 'streamName', 'origin', 'clientIp', 'country', 'protocol']} />
      {result && <RulesExplanation r={result} id="check" />}
    </section>
  );
}

/** How a rule's result reads; `pending` rules (session limits) are decided when a media server admits the session. */
const RESULT_TEXT: Record<RuleOutcome['result'], string> = { pass: 'pass', fail: 'fail', skipped: 'skipped', pending: 'at admission' };

/** What a country-list source means for the viewer, in a sentence. */
function sourceNote(source: string): string {
  if (source.startsWith('subscribe token')) return "the viewer's own token sets country lists: they alone apply";
  if (source === 'account default') return "no token sets country lists for this stream: the account's defaults apply (/api/geo/account)";
  if (source.startsWith('publish tokens')) return 'the stream is not live: the lists of every active publish token whose streams match it apply, and each must pass';
  return 'the lists of the publish token publishing the stream (or, before it is live, the only active publish token with lists whose streams match it)';
}

/**
 * A decision and every rule's outcome, the failing one marked: the Check access page's dry run, and a
 * kept decision of the Decisions page (the same rules, docs/api.md#decision-history). `id` prefixes
 * the element ids (the heading, `${id}-result`, takes focus when a page moves the reader to it);
 * `dryRun`: session limits were not counted.
 */
export function RulesExplanation({
  r,
  id,
  title = 'Result',
  dryRun = true,
  children,
}: { r: CheckResult; id: string; title?: string; dryRun?: boolean; children?: ComponentChildren }) {
  const failing = r.rules.find((x) => x.result === 'fail');
  const country = r.rules.find((x) => x.rule === 'country allowed');
  const pendingLimits = dryRun && r.rules.some((x) => x.rule === 'session limits' && x.result === 'pending');
  return (
    <section class="panel" aria-labelledby={`${id}-result`}>
      <h2 id={`${id}-result`} tabIndex={-1}>
        {title}
      </h2>
      {children}
      <p class={`decision ${r.allowed ? 'allowed' : 'denied'}`} role="status" id={`${id}-decision`}>
        {r.allowed ? 'Allowed' : 'Denied'}: {r.message}
        <span class="muted">
          {' '}
          (HTTP {r.status}, {r.reason})
        </span>
      </p>
      {failing && (
        <p id={`${id}-failing-rule`}>
          Failing rule: <strong>{failing.rule}</strong>
          {failing.detail ? ` — ${failing.detail}` : ''}
        </p>
      )}
      {pendingLimits && (
        <p id={`${id}-session-limits`}>
          Session limits are counted when a media server admits the session, not in this check: a session over the limit is refused with{' '}
          <code>session_limit</code> or <code>uses_exhausted</code>.
        </p>
      )}
      {country?.source && (
        <p id={`${id}-country-source`}>
          Country lists applied: <strong>{country.source}</strong> <span class="muted">— {sourceNote(country.source)}</span>
        </p>
      )}
      <table aria-label="Rules in the order they are checked">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Rule</th>
            <th scope="col">Result</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          {r.rules.map((x, i) => (
            <tr key={x.rule} class={`rule-${x.result}`}>
              <td>{i + 1}</td>
              <td>{x.rule}</td>
              <td>
                <span class={`badge ${x.result}`}>{RESULT_TEXT[x.result]}</span>
              </td>
              <td>{x.detail ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
