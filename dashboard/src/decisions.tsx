// "Why was this viewer refused?" from the decisionId the viewer was told: a kept decision looked up
// by id, or picked from the account's recent refusals (GET /api/decisions), shown with the same
// rule-by-rule explanation as the Check access page (docs/api.md#decision-history).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, type DecisionPage, type KeptDecision } from './api';
import { RulesExplanation } from './check';
import { ErrorNotice, Field, errorsFor, formatTime } from './components';
import { navigate } from './router';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_AN_ID = 'a decisionId is a UUID, e.g. 019ac6b2-3f41-7c2e-9b1d-5e0f7a6c2d18';
const RECENT = 25;

export function DecisionsPage({ params }: { params: URLSearchParams }) {
  const opened = params.get('id')?.trim() ?? '';
  const [pasted, setPasted] = useState(opened);
  const [idError, setIdError] = useState<string[]>([]);
  const [shown, setShown] = useState<KeptDecision | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // Only the newest lookup's answer is shown; `focusResult`: the reader asked for it (Find, Explain),
  // so focus moves to it (a picked row sits below the decision it opens).
  const latest = useRef(0);
  const focusResult = useRef(false);

  const open = async (id: string) => {
    const n = ++latest.current;
    setError(null);
    setShown(null);
    setBusy(true);
    try {
      const d = await api.get<KeptDecision>(`/api/decisions/${encodeURIComponent(id)}`);
      if (n === latest.current) setShown(d);
    } catch (x) {
      if (n === latest.current) {
        focusResult.current = false;
        setError(x);
      }
    } finally {
      if (n === latest.current) setBusy(false);
    }
  };

  // #/decisions?id=… opens that decision (a link from a log line or a support ticket); #/decisions
  // (the nav link) starts over, keeping the recent refusals as they were.
  useEffect(() => {
    setPasted(opened);
    if (UUID.test(opened)) {
      setIdError([]);
      void open(opened);
      return;
    }
    latest.current++;
    focusResult.current = false;
    setShown(null);
    setError(null);
    setBusy(false);
    setIdError(opened ? [NOT_AN_ID] : []);
  }, [opened]);

  useEffect(() => {
    if (shown === null || !focusResult.current) return;
    focusResult.current = false;
    document.getElementById('decision-result')?.focus();
  }, [shown]);

  const submit = (e: Event) => {
    e.preventDefault();
    const id = pasted.trim();
    if (!UUID.test(id)) {
      setIdError([NOT_AN_ID]);
      return;
    }
    setIdError([]);
    focusResult.current = true;
    if (id === opened) void open(id);
    else navigate('decisions', { id });
  };

  const pick = (id: string) => {
    focusResult.current = true;
    if (id === opened) void open(id);
    else navigate('decisions', { id });
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Decisions
      </h1>
      <p class="lead">
        Look up a decision by the decisionId its caller was told (a refusal's body, the <code>x-streamgate-decision-id</code> header, a
        log line), or pick one of the recent refusals. Every refusal is kept, up to a rate per account, and a sample of allows.
      </p>
      <form class="panel" onSubmit={submit} noValidate aria-label="Find a decision">
        <div class="grid id-grid">
          <Field id="decision-id" label="Decision id" value={pasted} onInput={setPasted} placeholder="019ac6b2-3f41-7c2e-9b1d-5e0f7a6c2d18" errors={idError} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Find
          </button>
        </div>
      </form>
      <ErrorNotice error={error} />
      {shown && <DecisionView d={shown} />}
      <RecentRefusals onPick={pick} />
    </section>
  );
}

/** The facts of a kept decision, then its rules as the Check access page shows them. */
function DecisionView({ d }: { d: KeptDecision }) {
  const facts: Array<[string, string]> = [
    ['Decision id', d.decisionId],
    ['Time', formatTime(d.time)],
    ['Caller', d.caller],
    ['Action', `${d.action} (${d.protocol})`],
    ['Stream', d.streamName],
    ['Token id', d.tokenId === null ? '—' : String(d.tokenId)],
    ['Issuer id', d.issuerId === null ? '—' : String(d.issuerId)],
    ['Credential', d.credential],
    ['Client address', d.clientIp ?? '—'],
    ['Country', d.country ?? '—'],
    ['Origin', d.origin ?? '—'],
    ['Session id', d.sessionId ?? '—'],
  ];
  return (
    <RulesExplanation r={d} id="decision" title={`Decision ${d.decisionId}`} dryRun={false}>
      <div class="details">
        <dl id="decision-facts">
          {facts.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd class={k === 'Decision id' || k === 'Client address' ? 'mono' : undefined}>{v}</dd>
            </div>
          ))}
        </dl>
      </div>
    </RulesExplanation>
  );
}

/** The account's newest refusals, filtered by stream, token and address, older pages on demand. */
function RecentRefusals({ onPick }: { onPick: (id: string) => void }) {
  const [stream, setStream] = useState('');
  const [tokenId, setTokenId] = useState('');
  const [clientIp, setClientIp] = useState('');
  const [rows, setRows] = useState<KeptDecision[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const errors = error instanceof ApiError ? error.errors : {};

  const load = async (cursor: string | null) => {
    setLoading(true);
    setError(null);
    const q = new URLSearchParams({ allowed: 'false', limit: String(RECENT) });
    if (stream.trim()) q.set('streamName', stream.trim());
    if (tokenId.trim()) q.set('tokenId', tokenId.trim());
    if (clientIp.trim()) q.set('clientIp', clientIp.trim());
    if (cursor !== null) q.set('cursor', cursor);
    try {
      const page = await api.get<DecisionPage>(`/api/decisions?${q}`);
      setRows((r) => (cursor === null ? page.decisions : r.concat(page.decisions)));
      setNext(page.next);
    } catch (x) {
      setError(x);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(null);
  }, []);

  return (
    <section class="panel" aria-labelledby="recent-title">
      <h2 id="recent-title">Recent refusals</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void load(null);
        }}
        noValidate
        aria-label="Filter the recent refusals"
      >
        <div class="grid">
          <Field id="recent-stream" label="Stream name" value={stream} onInput={setStream} errors={errorsFor(errors, 'streamName')} />
          <Field id="recent-token" label="Token id" value={tokenId} onInput={setTokenId} inputMode="numeric" errors={errorsFor(errors, 'tokenId')} />
          <Field id="recent-ip" label="Client address" value={clientIp} onInput={setClientIp} placeholder="203.0.113.7" errors={errorsFor(errors, 'clientIp')} />
        </div>
        <div class="actions">
          <button type="submit" disabled={loading}>
            Filter
          </button>
        </div>
      </form>
      <ErrorNotice error={error} fields={['streamName', 'tokenId', 'clientIp']} />
      <table aria-label="Recent refusals, newest first" aria-busy={loading ? 'true' : 'false'}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Stream</th>
            <th scope="col">Reason</th>
            <th scope="col">Rule</th>
            <th scope="col">Token</th>
            <th scope="col">Client</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.decisionId}>
              <td>{formatTime(d.time)}</td>
              <td class="mono">{d.streamName}</td>
              <td>{d.reason}</td>
              <td>{d.rule ?? ''}</td>
              <td>{d.tokenId ?? '—'}</td>
              <td class="mono">{d.clientIp ?? '—'}</td>
              <td>
                <button type="button" aria-label={`Explain decision ${d.decisionId}`} onClick={() => onPick(d.decisionId)}>
                  Explain
                </button>
              </td>
            </tr>
          ))}
          {!loading && rows.length === 0 && (
            <tr>
              <td colSpan={7}>No refusal is kept for these filters.</td>
            </tr>
          )}
        </tbody>
      </table>
      {next !== null && (
        <div class="actions">
          <button type="button" disabled={loading} onClick={() => void load(next)}>
            Load older
          </button>
        </div>
      )}
    </section>
  );
}
