// OvenMediaEngine: a publisher is cut by deleting its stream, which "terminates the ingress
// connection" (docs/callers.md#cutting-sessions). OME has no per-viewer kick: a viewer ends at
// its admission's lifetime, so no call is made for one.
import type { MediaServerConfig } from '../../config/schema.js';
import type { CutTarget, Driver } from './driver.js';
import { apiUrl, seg, unexpected } from './http.js';

type OmeServer = Extract<MediaServerConfig, { caller: 'ome' }>;

export const omeDriver: Driver<OmeServer> = async (target: CutTarget, server, http) => {
  if (target.direction !== 'publish') return 'unsupported';
  const { app = '', stream = '' } = target.native;
  if (!app || !stream) return 'gone';
  const r = await http.request(apiUrl(server.url, `/v1/vhosts/${seg(server.vhost)}/apps/${seg(app)}/streams/${seg(stream)}`), {
    method: 'DELETE',
    // OME's API takes the access token itself base64-encoded as the Basic credentials.
    headers: { authorization: `Basic ${Buffer.from(server.accessToken, 'utf8').toString('base64')}` },
  });
  if (r.status === 200) return 'cut';
  if (r.status === 404) return 'gone';
  throw unexpected(r.status, 'OME delete stream');
};
