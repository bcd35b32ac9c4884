// SRS http_hooks: JSON POSTs per action. SRS admits only on HTTP 200/201 with a body that is
// exactly 0 or has an integer code 0, so allow is 200 {"code":0}; deny is 403 {"code":403,...}.
import { normaliseIp, originHost } from '../domain/addresses.js';
import type { Caller, Outcome, Reply, SessionIdentity } from './caller.js';
import { bytesSignal, field, nameable, queryValue, refusalMessage, refusalStatus, streamIdentity, tokenFromQuery } from './shared.js';

const CALLER = 'srs';
const OK: Reply = { status: 200, json: { code: 0 } };
const refuse = (status: number, message: string): Reply => ({ status, json: { code: status, message } });

/**
 * The token of an SRS `param`: `token=`, or the SRT token key (hooks.srt.tokenKey). SRS reads an
 * SRT stream id `#!::r=live/cam1,m=publish,sg_token=T` itself and passes its keys other than h, r
 * and m as this query (`sg_token=T`), so the id's credential arrives here; both keys naming
 * different values is a conflict, never a choice (docs/callers.md#srt-stream-ids).
 */
export function srsToken(param: string | undefined, tokenKey: string): { token: string | undefined } | { conflict: string } {
  const plain = tokenFromQuery(param);
  if (tokenKey === 'token') return { token: plain };
  const keyed = queryValue(param, tokenKey);
  if (plain !== undefined && keyed !== undefined && plain !== keyed) return { conflict: `param: token and ${tokenKey} name different credentials` };
  return { token: keyed ?? plain };
}

export const srs: Caller = {
  name: CALLER,
  capabilities: { sessionIdentity: true, reasks: false, terminate: true },
  routes: [
    {
      method: 'POST',
      path: '/hooks/srs',
      body: 'json',
      read(req, ctx): Outcome {
        const b = (req.body ?? {}) as Record<string, unknown>;
        const action = field(b, 'action');
        const stream = field(b, 'stream');
        const clientId = field(b, 'client_id');
        if (!action) return { reply: refuse(400, 'action is required') };
        // SRS client ids are per server: qualify them by server_id.
        const server = field(b, 'server_id') ?? '';
        const session: SessionIdentity | undefined = clientId ? { id: `${server}#${clientId}`, native: { server_id: server, client_id: clientId, app: field(b, 'app') ?? '', stream: stream ?? '', stream_id: field(b, 'stream_id') ?? '' } } : undefined;
        const sessionId = session?.id;
        if (action === 'on_close') return { reply: OK, signals: bytesSignal(CALLER, sessionId, field(b, 'send_bytes'), field(b, 'recv_bytes')) };
        if (action === 'on_connect' || action === 'on_hls' || action === 'on_forward') return { reply: OK };
        const admission = action === 'on_publish' || action === 'on_play';
        const id = streamIdentity(stream ?? '', '', ctx.config.hooks.accountInPath);
        if (!nameable(id)) return { reply: admission ? refuse(403, refusalMessage('stream_not_allowed')) : refuse(400, 'stream is required') };
        const credential = srsToken(field(b, 'param'), ctx.config.hooks.srt.tokenKey);
        if ('conflict' in credential) return { reply: refuse(400, credential.conflict) };
        const token = credential.token;
        switch (action) {
          case 'on_publish':
          case 'on_play':
            return {
              admit: {
                access: {
                  action: action === 'on_publish' ? 'publish' : 'subscribe',
                  token,
                  streamName: id.streamName,
                  accountId: id.accountId,
                  clientIp: normaliseIp(field(b, 'ip')),
                  // SRS passes the HTTP-FLV Referer as pageUrl; RTMP clients usually leave it empty.
                  origin: originHost(field(b, 'pageUrl')),
                  protocol: /^([a-z][a-z0-9+.-]*):\/\//i.exec(field(b, 'tcUrl') ?? '')?.[1].toLowerCase() ?? 'rtmp',
                  sessionId,
                },
                session,
                starts: true,
                credentialsGiven: token !== undefined,
              },
            };
          case 'on_unpublish':
          case 'on_stop':
            return {
              reply: OK,
              signals: [
                {
                  kind: 'session_ended',
                  caller: CALLER,
                  sessionId,
                  action: action === 'on_unpublish' ? 'publish' : 'subscribe',
                  accountId: id.accountId,
                  streamName: id.streamName,
                  token,
                },
              ],
            };
          case 'on_dvr':
            return {
              reply: OK,
              signals: [{ kind: 'recording', event: 'completed', caller: CALLER, sessionId, accountId: id.accountId, streamName: id.streamName, path: field(b, 'file'), token }],
            };
          default:
            return { reply: OK };
        }
      },
      docs: [{ summary: 'SRS http_hooks (every action)', answer: '200 {"code":0} to allow; 403 {"code":403,"message"} to deny' }],
    },
  ],
  answer(d) {
    return d.allowed ? OK : refuse(refusalStatus(d, 'never'), d.message);
  },
};
