// nginx-rtmp: the control module's drop answers how many sessions it dropped, as text
// (docs/callers.md#cutting-sessions). It sees only the worker that serves the control request, so
// "0" may also mean "on another worker": on_update's refusal stays the dependable way to end it.
import type { MediaServerConfig } from '../../config/schema.js';
import { DriverError, type CutTarget, type Driver } from './driver.js';
import { apiUrl, unexpected } from './http.js';

type NginxRtmpServer = Extract<MediaServerConfig, { caller: 'nginx-rtmp' }>;

export const nginxRtmpDriver: Driver<NginxRtmpServer> = async (target: CutTarget, server, http) => {
  const { app = '', name = '', clientid = '' } = target.native;
  // Without the client id a drop by app+name would take every session of that stream.
  if (!clientid) return 'gone';
  const query = `app=${encodeURIComponent(app)}&name=${encodeURIComponent(name)}&clientid=${encodeURIComponent(clientid)}`;
  const filter = target.direction === 'publish' ? 'publisher' : 'subscriber';
  const r = await http.request(apiUrl(server.url, `/drop/${filter}?${query}`), { method: 'GET' });
  if (r.status !== 200) throw unexpected(r.status, `nginx-rtmp drop ${filter}`);
  const dropped = r.body.trim();
  if (!/^\d+$/.test(dropped)) throw new DriverError(`nginx-rtmp drop ${filter}: the answer is not a count`, false, r.status);
  return Number(dropped) > 0 ? 'cut' : 'gone';
};
