// SRS: DELETE /api/v1/clients/{client_id} expires the connection (docs/callers.md#cutting-sessions).
// SRS answers its own errors as HTTP 200 with a JSON `code` (srs_app_http_api.cpp,
// srs_api_response_code), so the body's code decides, not only the status.
import type { MediaServerConfig } from '../../config/schema.js';
import { DriverError, type CutTarget, type Driver, type DriverHttp } from './driver.js';
import { apiUrl, basicOrBearer, json, seg, unexpected } from './http.js';

type SrsServer = Extract<MediaServerConfig, { caller: 'srs' }>;

/** SRS error codes met here (srs_kernel_error.hpp). */
export const SRS_CODE = {
  success: 0,
  /** ERROR_RTMP_STREAM_NOT_FOUND */
  streamNotFound: 2048,
  /** ERROR_RTMP_CLIENT_NOT_FOUND */
  clientNotFound: 2049,
  /** The client has no connection to expire (an HLS viewer): SRS answers code 400. */
  noConnection: 400,
} as const;

/**
 * The JSON `code` of an HTTP 200 answer, or a DriverError for any other answer. An HTTP 404 (a
 * proxy in front of SRS, or an SRS that answers so) stands for `notFound`.
 */
async function srsCall(server: SrsServer, http: DriverHttp, method: 'GET' | 'DELETE', list: 'clients' | 'streams', id: string, notFound: number): Promise<{ code: number; body: Record<string, unknown> }> {
  const r = await http.request(apiUrl(server.url, `/api/v1/${list}/${seg(id)}`), { method, headers: basicOrBearer(server) });
  if (r.status === 404) return { code: notFound, body: {} };
  if (r.status !== 200) throw unexpected(r.status, `SRS ${method} ${list}`);
  const body = json(r.body);
  if (typeof body !== 'object' || body === null || typeof (body as { code?: unknown }).code !== 'number') {
    throw new DriverError('SRS API: the answer has no JSON code', false, r.status);
  }
  return { code: (body as { code: number }).code, body: body as Record<string, unknown> };
}

/** The publisher's client id: GET /api/v1/streams/{stream_id} → stream.publish.cid ('' when none). */
async function publisherOf(server: SrsServer, http: DriverHttp, streamId: string): Promise<string> {
  if (!streamId) return '';
  const { code, body } = await srsCall(server, http, 'GET', 'streams', streamId, SRS_CODE.streamNotFound);
  if (code === SRS_CODE.streamNotFound) return '';
  if (code !== SRS_CODE.success) throw new DriverError(`SRS streams: error code ${code}`, false);
  const stream = body.stream as { publish?: { active?: unknown; cid?: unknown } } | undefined;
  const cid = stream?.publish?.cid;
  return stream?.publish?.active !== false && typeof cid === 'string' ? cid : '';
}

export const srsDriver: Driver<SrsServer> = async (target: CutTarget, server, http) => {
  let clientId = target.native.client_id ?? '';
  if (!clientId && target.direction === 'publish') clientId = await publisherOf(server, http, target.native.stream_id ?? '');
  if (!clientId) return 'gone';
  const { code } = await srsCall(server, http, 'DELETE', 'clients', clientId, SRS_CODE.clientNotFound);
  switch (code) {
    case SRS_CODE.success:
      return 'cut';
    case SRS_CODE.clientNotFound:
      return 'gone';
    case SRS_CODE.noConnection:
      return 'unsupported';
    default:
      throw new DriverError(`SRS clients: error code ${code}`, false);
  }
};
