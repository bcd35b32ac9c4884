// A stand-in for MediaMTX's control API (v1.20.1 api/openapi.yaml, internal/api/api.go), for the
// calls the MediaMTX driver makes; MediaMTX is not packaged for Debian, whose packages the
// end-to-end suite runs, so the driver is tested against this. It reproduces:
// POST /v3/{list}/kick/{id} → 200 {"status":"ok"}, 404 for an unknown id, 400 for an id that is not
// a UUID; only POST is routed, so a GET on a kick path is a 404 (gin's "404 page not found");
// GET /v3/paths/get/{name} → the path with `source {type, id}` (null when nothing publishes), 404
// for an unknown path; credentials (Basic user:pass or Bearer) checked before routing → 401.
// With `authHTTPAddress` it authenticates every API call as MediaMTX's `authMethod: http` does: a
// POST of {user, password, token, ip, action: "api", path, protocol, id, query} to that address,
// where only a 2xx lets the call through (else 401).
import { basicOf, serveStandIn, type StandIn } from './base.js';

export const MEDIAMTX_KICK_LISTS = ['rtspsessions', 'rtspssessions', 'rtmpconns', 'rtmpsconns', 'srtconns', 'webrtcsessions', 'hlssessions', 'moqsessions'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface MediamtxStandIn extends StandIn {
  /** Live connections as "{list}/{id}", e.g. "rtmpconns/6a0f…". */
  sessions: Set<string>;
  /** Paths by name and their source (null: the path exists with no publisher). */
  paths: Map<string, { type: string; id: string } | null>;
}

export async function mediamtxStandIn(auth: { user?: string; pass?: string; bearer?: string; /** A URL, or a function answering it when the hook's server is started later. */ authHTTPAddress?: string | (() => string) } = {}): Promise<MediamtxStandIn> {
  const sessions = new Set<string>();
  const paths = new Map<string, { type: string; id: string } | null>();
  const error = (status: number, message: string) => ({ status, body: { status: 'error', error: message } });
  const base = await serveStandIn((call) => {
    if (auth.bearer !== undefined || auth.user !== undefined) {
      const given = call.headers.authorization;
      const ok = (auth.bearer !== undefined && given === `Bearer ${auth.bearer}`) || (auth.user !== undefined && basicOf(given) === `${auth.user}:${auth.pass ?? ''}`);
      if (!ok) return { ...error(401, 'authentication error'), headers: { 'www-authenticate': 'Basic realm="mediamtx"' } };
    }
    const kick = /^\/v3\/([a-z]+)\/kick\/([^/]+)$/.exec(call.path);
    if (kick && call.method === 'POST' && MEDIAMTX_KICK_LISTS.includes(kick[1])) {
      const id = decodeURIComponent(kick[2]);
      if (!UUID.test(id)) return error(400, 'invalid UUID length');
      if (!sessions.delete(`${kick[1]}/${id}`)) return error(404, 'connection not found');
      for (const [name, source] of paths) if (source?.id === id) paths.set(name, null);
      return { status: 200, body: { status: 'ok' } };
    }
    const get = /^\/v3\/paths\/get\/(.+)$/.exec(call.path);
    if (get && call.method === 'GET') {
      const name = decodeURIComponent(get[1]);
      if (!paths.has(name)) return error(404, 'path not found');
      const source = paths.get(name) ?? null;
      return { status: 200, body: { name, confName: 'all_others', source, ready: source !== null, tracks: [], readers: [] } };
    }
    return { status: 404, body: '404 page not found' };
  }, auth.authHTTPAddress === undefined ? undefined : async (call, req) => {
    const [user = '', password = ''] = (basicOf(call.headers.authorization) ?? '').split(/:(.*)/s);
    const bearer = /^Bearer (.+)$/.exec(call.headers.authorization ?? '')?.[1] ?? '';
    const address = typeof auth.authHTTPAddress === 'function' ? auth.authHTTPAddress() : auth.authHTTPAddress!;
    const r = await fetch(address, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user, password, token: bearer, ip: req.socket.remoteAddress?.replace(/^::ffff:/, ''), action: 'api', path: '', protocol: '', id: null, query: '' }),
    }).catch(() => undefined);
    return r?.ok ? undefined : { ...error(401, 'authentication error'), headers: { 'www-authenticate': 'Basic realm="mediamtx"' } };
  });
  return Object.assign(base, { sessions, paths });
}
