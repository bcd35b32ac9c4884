// A stand-in for SRS's HTTP API (trunk/src/app/srs_app_http_api.cpp, srs_kernel_error.hpp), for
// the calls the SRS driver makes; the SRS media server is not packaged for Debian, whose packages
// the end-to-end suite runs, so the driver is tested against this. It reproduces: SRS answers
// its own errors as HTTP 200 with a JSON code — DELETE /api/v1/clients/{id} → {"code":0,...} and
// the client expired, {"code":2049} (ERROR_RTMP_CLIENT_NOT_FOUND) for an unknown id, {"code":400}
// for a client without a connection (an HLS viewer); GET /api/v1/streams/{id} → {"code":0,
// "stream":{..., "publish":{"active", "cid"}}} or {"code":2048} (ERROR_RTMP_STREAM_NOT_FOUND);
// with http_api.auth (Basic) or a Bearer token configured, a missing or wrong Authorization is an
// HTTP 401 with an empty body (SrsHttpAuthMux).
import { basicOf, serveStandIn, type StandIn } from './base.js';

export interface SrsStandIn extends StandIn {
  /** Client ids with a connection. */
  sessions: Set<string>;
  /** Client ids SRS knows that have no connection object (HLS viewers). */
  connectionless: Set<string>;
  /** Streams by id and their publisher's client id (undefined: no publisher). */
  streams: Map<string, { app: string; name: string; publisher?: string }>;
}

export async function srsStandIn(auth: { user?: string; pass?: string; bearer?: string } = {}): Promise<SrsStandIn> {
  const sessions = new Set<string>();
  const connectionless = new Set<string>();
  const streams = new Map<string, { app: string; name: string; publisher?: string }>();
  const head = { server: 'vid-stand-in', service: 'stand-in', pid: '1' };
  const base = await serveStandIn((call) => {
    if (auth.bearer !== undefined || auth.user !== undefined) {
      const given = call.headers.authorization;
      const ok = (auth.bearer !== undefined && given === `Bearer ${auth.bearer}`) || (auth.user !== undefined && basicOf(given) === `${auth.user}:${auth.pass ?? ''}`);
      if (!ok) return { status: 401, headers: { 'www-authenticate': 'Basic' } };
    }
    const client = /^\/api\/v1\/clients\/([^/]+)$/.exec(call.path);
    if (client) {
      const id = decodeURIComponent(client[1]);
      if (call.method !== 'DELETE') return { status: 405 };
      if (connectionless.has(id)) return { status: 200, body: { code: 400 } };
      if (!sessions.delete(id)) return { status: 200, body: { code: 2049 } };
      for (const s of streams.values()) if (s.publisher === id) s.publisher = undefined;
      return { status: 200, body: { code: 0, ...head } };
    }
    const stream = /^\/api\/v1\/streams\/([^/]+)$/.exec(call.path);
    if (stream && call.method === 'GET') {
      const id = decodeURIComponent(stream[1]);
      const s = streams.get(id);
      if (!s) return { status: 200, body: { code: 2048 } };
      const publish = s.publisher ? { active: true, cid: s.publisher } : { active: false };
      return { status: 200, body: { code: 0, ...head, stream: { id, name: s.name, vhost: 'vid-stand-in', app: s.app, clients: 1, publish } } };
    }
    return { status: 404 };
  });
  return Object.assign(base, { sessions, connectionless, streams });
}
