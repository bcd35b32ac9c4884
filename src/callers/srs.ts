// SRS http_hooks: JSON POSTs per action. SRS admits only on HTTP 200/201 with a body that is
// exactly 0 or has an integer code 0, so allow is 200 {"code":0}; deny is 403 {"code":403,...}.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import type { Services } from '../../services.js';
import { bodyParsers } from '../middleware.js';
import type { AccessRequest } from '../../policy/types.js';
import { normaliseIp, originHost } from '../../policy/rules.js';
import { field, reportBytes, reportStart, streamIdentity, tokenFromQuery } from './common.js';
import { sendJson } from '../answer.js';

const CALLER = 'srs';

export function mountSrs(app: DecisionRoutes, s: Services): void {
  const { accountInPath } = s.config.hooks;
  app.post('/hooks/srs', ...bodyParsers('json', s.config.server.bodyLimitBytes), async (req: Request, res: Response) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    const action = field(b, 'action');
    const stream = field(b, 'stream');
    const clientId = field(b, 'client_id');
    const ok = () => sendJson(res, 200, { code: 0 });
    const refuse = (status: number, message: string) => sendJson(res, status, { code: status, message });
    if (!action) return refuse(400, 'action is required');
    // SRS client ids are per server: qualify them by server_id.
    const sessionId = clientId ? `${field(b, 'server_id') ?? ''}#${clientId}` : undefined;
    if (action === 'on_close') {
      reportBytes(s, CALLER, sessionId, field(b, 'send_bytes'), field(b, 'recv_bytes'));
      return ok();
    }
    if (action === 'on_connect' || action === 'on_hls' || action === 'on_forward') return ok();
    if (!stream || stream.length > 256) return refuse(action === 'on_publish' || action === 'on_play' ? 403 : 400, 'stream is required');
    const id = streamIdentity(stream, '', accountInPath);
    switch (action) {
      case 'on_publish':
      case 'on_play': {
        const access: AccessRequest = {
          action: action === 'on_publish' ? 'publish' : 'subscribe',
          token: tokenFromQuery(field(b, 'param')),
          streamName: id.streamName,
          accountId: id.accountId,
          clientIp: normaliseIp(field(b, 'ip')),
          // SRS passes the HTTP-FLV Referer as pageUrl; RTMP clients usually leave it empty.
          origin: originHost(field(b, 'pageUrl')),
          protocol: /^([a-z][a-z0-9+.-]*):\/\//i.exec(field(b, 'tcUrl') ?? '')?.[1].toLowerCase() ?? 'rtmp',
          sessionId,
        };
        const d = await s.enforcer.decide(access, CALLER);
        if (!d.allowed) return refuse(d.status === 503 ? 503 : 403, d.message);
        reportStart(s, CALLER, access, d);
        return ok();
      }
      case 'on_unpublish':
      case 'on_stop':
        s.lifecycle.signal({
          kind: 'session_ended',
          caller: CALLER,
          sessionId,
          action: action === 'on_unpublish' ? 'publish' : 'subscribe',
          accountId: id.accountId,
          streamName: id.streamName,
          token: tokenFromQuery(field(b, 'param')),
        });
        return ok();
      case 'on_dvr':
        s.lifecycle.signal({
          kind: 'recording',
          event: 'completed',
          caller: CALLER,
          sessionId,
          accountId: id.accountId,
          streamName: id.streamName,
          path: field(b, 'file'),
          token: tokenFromQuery(field(b, 'param')),
        });
        return ok();
      default:
        return ok();
    }
  });
}
