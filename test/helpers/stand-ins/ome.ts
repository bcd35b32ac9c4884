// A stand-in for OvenMediaEngine's REST API (docs/rest-api/v1/virtualhost/application/stream),
// for the call the OME driver makes; OME is not packaged for Debian, whose packages the end-to-end
// suite runs, so the driver is tested against this. It reproduces:
// DELETE /v1/vhosts/{vhost}/apps/{app}/streams/{stream} with `Authorization: Basic
// base64(AccessToken)` → 200 {"statusCode":200,"message":"OK"} and the stream (its ingress
// connection) ended; 404 {"statusCode":404,...} for an unknown vhost, app or stream; 401 for a
// missing or wrong token. OME has no call that ends one viewer.
import { basicOf, serveStandIn, type StandIn } from './base.js';

export interface OmeStandIn extends StandIn {
  /** Live input streams as "{vhost}/{app}/{stream}". */
  sessions: Set<string>;
}

export async function omeStandIn(accessToken: string): Promise<OmeStandIn> {
  const sessions = new Set<string>();
  const base = await serveStandIn((call) => {
    if (basicOf(call.headers.authorization) !== accessToken) return { status: 401, body: { statusCode: 401, message: 'Unauthorized' } };
    const m = /^\/v1\/vhosts\/([^/]+)\/apps\/([^/]+)\/streams\/([^/]+)$/.exec(call.path);
    if (!m || call.method !== 'DELETE') return { status: 404, body: { statusCode: 404, message: 'Not Found' } };
    const key = m.slice(1).map(decodeURIComponent).join('/');
    if (!sessions.delete(key)) return { status: 404, body: { statusCode: 404, message: `Could not find the stream: [${key}]` } };
    return { status: 200, body: { statusCode: 200, message: 'OK' } };
  });
  return Object.assign(base, { sessions });
}
