// MediaMTX: POST /v3/{type}/kick/{id} on its control API (docs/callers.md#cutting-sessions). The
// list type follows the protocol the auth request named; a publisher the kick did not find is
// looked up on its path, whose source names the exact type.
import type { MediaServerConfig } from '../../config/schema.js';
import { DriverError, type CutOutcome, type CutTarget, type Driver, type DriverHttp } from './driver.js';
import { apiUrl, basicOrBearer, json, seg, unexpected } from './http.js';

type MediamtxServer = Extract<MediaServerConfig, { caller: 'mediamtx' }>;

/**
 * The auth request's protocol → the API lists that may hold the connection. RTSP and RTMP are
 * named the same over TLS, so the TLS list is tried when the plain one does not know the id.
 * (No kick exists for rtspconns: the RTSP session is what is kicked.)
 */
export const KICK_LISTS: Readonly<Record<string, readonly string[]>> = {
  rtsp: ['rtspsessions', 'rtspssessions'],
  rtsps: ['rtspssessions'],
  rtmp: ['rtmpconns', 'rtmpsconns'],
  rtmps: ['rtmpsconns'],
  hls: ['hlssessions'],
  webrtc: ['webrtcsessions'],
  srt: ['srtconns'],
  moq: ['moqsessions'],
};

/** A path source's type (PathSourceType / PathReaderType of api/openapi.yaml) → its kick list. */
export const SOURCE_LISTS: Readonly<Record<string, string>> = {
  rtspSession: 'rtspsessions',
  rtspsSession: 'rtspssessions',
  rtmpConn: 'rtmpconns',
  rtmpsConn: 'rtmpsconns',
  hlsSession: 'hlssessions',
  webRTCSession: 'webrtcsessions',
  srtConn: 'srtconns',
  moqSession: 'moqsessions',
};

/** 'cut' on 200, 'gone' on 404 (no such id in that list), else a DriverError. */
async function kick(server: MediamtxServer, http: DriverHttp, list: string, id: string): Promise<'cut' | 'gone'> {
  const r = await http.request(apiUrl(server.url, `/v3/${list}/kick/${seg(id)}`), { method: 'POST', headers: basicOrBearer(server) });
  if (r.status === 200) return 'cut';
  if (r.status === 404) return 'gone';
  throw unexpected(r.status, `MediaMTX kick ${list}`);
}

/**
 * The path's current source. It is kicked only when it is this session (same id): after a kick a
 * client may reconnect, and the path's new source is then another, separately admitted session.
 */
async function kickPathSource(server: MediamtxServer, http: DriverHttp, path: string, id: string): Promise<CutOutcome> {
  if (!path) return 'gone';
  const name = path.split('/').map(seg).join('/');
  const r = await http.request(apiUrl(server.url, `/v3/paths/get/${name}`), { method: 'GET', headers: basicOrBearer(server) });
  if (r.status === 404) return 'gone';
  if (r.status !== 200) throw unexpected(r.status, 'MediaMTX paths/get');
  const body = json(r.body) as { source?: { type?: unknown; id?: unknown } | null } | undefined;
  if (body === undefined || typeof body !== 'object' || body === null) throw new DriverError('MediaMTX paths/get: the answer is not JSON', false, r.status);
  const source = body.source;
  if (!source || typeof source.id !== 'string' || source.id !== id) return 'gone';
  const list = typeof source.type === 'string' ? SOURCE_LISTS[source.type] : undefined;
  // A source with no kick (a pulled source, a redirect) is not a client connection.
  if (!list) return 'unsupported';
  return kick(server, http, list, source.id);
}

/** Every list, for a reader whose protocol is unknown: MediaMTX ids are UUIDs, unique across lists. */
const ALL_LISTS = [...new Set(Object.values(KICK_LISTS).flat())];

export const mediamtxDriver: Driver<MediamtxServer> = async (target: CutTarget, server, http) => {
  const { id = '', path = '', protocol = '' } = target.native;
  const known = KICK_LISTS[protocol];
  // A publisher of an unknown protocol is its path's source, which names the exact list.
  if (!known && target.direction === 'publish') return kickPathSource(server, http, path, id);
  if (!id) return 'gone';
  for (const list of known ?? ALL_LISTS) {
    if ((await kick(server, http, list, id)) === 'cut') return 'cut';
  }
  // No list knew the id; a publisher is asked for once more through its path (its source's type
  // is the authority), in case the protocol named a list the connection is not in.
  if (target.direction === 'publish') return kickPathSource(server, http, path, id);
  return 'gone';
};
