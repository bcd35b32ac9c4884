// A stand-in for nginx-rtmp's control module (ngx_rtmp_control_module.c) at a location such as
// /control, for the call the nginx-rtmp driver makes, so that the driver tests can make it fail or
// hang; test/e2e/sessions-rtmp.test.ts drives the real module (Debian's libnginx-mod-rtmp).
// It reproduces: GET {location}/drop/{publisher|subscriber|client}?app=&name=&clientid= drops the
// matching sessions and answers HTTP 200 with their count as text ("0" when none matched); an
// unknown filter is a 500. The module has no credentials of its own (the location is protected
// in nginx), so none are checked.
import { serveStandIn, type StandIn } from './base.js';

export interface RtmpSession {
  app: string;
  name: string;
  clientid: string;
  publishing: boolean;
}

export interface NginxRtmpControlStandIn extends StandIn {
  /** Live sessions of the worker that answers. */
  sessions: RtmpSession[];
}

export async function nginxRtmpControlStandIn(location = '/control'): Promise<NginxRtmpControlStandIn> {
  const sessions: RtmpSession[] = [];
  const base = await serveStandIn((call) => {
    const m = new RegExp(`^${location}/drop/([a-z]+)$`).exec(call.path);
    if (!m || call.method !== 'GET') return { status: 404, body: 'Not Found' };
    const filter = m[1];
    if (!['publisher', 'subscriber', 'client'].includes(filter)) return { status: 500, body: 'Undefined filter' };
    const q = call.query;
    const hit = (s: RtmpSession) =>
      (q.app === undefined || q.app === s.app) &&
      (q.name === undefined || q.name === s.name) &&
      (q.clientid === undefined || Number(q.clientid) === Number(s.clientid)) &&
      (filter === 'client' || (filter === 'publisher') === s.publishing);
    const dropped = sessions.filter(hit);
    for (const s of dropped) sessions.splice(sessions.indexOf(s), 1);
    return { status: 200, body: String(dropped.length) };
  });
  const standIn = Object.assign(base, { sessions });
  standIn.base = `${base.base}${location}`;
  return standIn;
}
