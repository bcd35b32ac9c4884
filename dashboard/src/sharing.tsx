// A token's sharing window (docs/api.md#token-sharing): the addresses, networks, providers and
// countries its uses came from within the window, and the signals over its policy's limits.
import { api, type SharingWindow, type TokenKind } from './api';
import { ErrorNotice, formatTime, useAsync } from './components';

const SIGNAL_TEXT: Record<string, string> = {
  addresses: 'too many addresses',
  networks: 'too many networks',
  asns: 'too many providers',
  countries: 'too many countries',
  travel: 'impossible travel',
};

export function SharingPanel({ kind, tokenId }: { kind: TokenKind; tokenId: number }) {
  const w = useAsync(() => api.get<SharingWindow>(`/api/sharing/${kind}_token/${tokenId}`), [kind, tokenId]);
  const d = w.data;
  const list = (xs: Array<string | number>) => (xs.length ? xs.join(', ') : 'none');
  return (
    <section class="sharing" aria-labelledby="sharing-title">
      <h3 id="sharing-title">Sharing</h3>
      <ErrorNotice error={w.error} />
      {d && (
        <>
          <p class="hint" id="sharing-policy">
            {d.policy.enabled
              ? `Watched: over ${Math.round(d.policy.windowSeconds / 60)} minutes; action ${d.policy.action}.`
              : 'Not watched: the account’s sharing policy (or this token’s) is off.'}
          </p>
          <p id="sharing-flags" class={d.flags.length ? 'flagged' : ''}>
            {d.flags.length ? `Flagged: ${d.flags.map((f) => SIGNAL_TEXT[f] ?? f).join(', ')}` : 'Not flagged'}
            {d.travel ? ` (${d.travel.fromCountry ?? '?'} to ${d.travel.toCountry ?? '?'}, ${d.travel.km} km at ${d.travel.kmh} km/h)` : ''}
          </p>
          <dl>
            <dt>Addresses</dt>
            <dd id="sharing-addresses">{d.addresses}</dd>
            <dt>Networks</dt>
            <dd id="sharing-networks" class="mono">
              {list(d.networks)}
            </dd>
            <dt>Providers</dt>
            <dd id="sharing-asns">{list(d.asns.map((a) => `AS${a}`))}</dd>
            <dt>Countries</dt>
            <dd id="sharing-countries">{list(d.countries)}</dd>
          </dl>
          {d.uses.length > 0 && (
            <table aria-label={`Addresses that used token ${tokenId}`}>
              <thead>
                <tr>
                  <th scope="col">Address</th>
                  <th scope="col">Network</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Country</th>
                  <th scope="col">Last use</th>
                </tr>
              </thead>
              <tbody>
                {d.uses.map((u) => (
                  <tr key={u.ip}>
                    <td class="mono">{u.ip}</td>
                    <td class="mono">{u.network}</td>
                    <td>{u.asn === undefined ? '' : `AS${u.asn}`}</td>
                    <td>{u.country ?? ''}</td>
                    <td>{formatTime(u.at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
