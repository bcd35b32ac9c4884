// nginx-rtmp-module notify calls (on_publish, on_play, *_done, on_record_done, on_update):
// form-encoded POST (or GET with notify_method get). 2xx lets the client on, anything else makes
// nginx drop it. The module's own fields come first; the client's query args follow, raw.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import type { Services } from '../../services.js';
import { bodyParsers } from '../middleware.js';
import type { AccessRequest, Action } from '../../policy/types.js';
import { normaliseIp } from '../../policy/rules.js';
import { peerAddress } from '../client.js';
import { field, reportBytes, reportStart, streamIdentity, tokenFromQuery } from './common.js';
import { MAX_NAME } from '../../domain/matchers.js';
import { sendText } from '../answer.js';

const CALLER = 'nginx-rtmp';

export function mountNginxRtmp(app: DecisionRoutes, s: Services): void {
  const { accountInPath } = s.config.hooks;

  const handler = async (req: Request, res: Response) => {
    const body = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
    const call = field(body, 'call');
    const name = field(body, 'name');
    const clientid = field(body, 'clientid');
    // nginx connection numbers restart with nginx and repeat across servers: qualify by the server.
    const sessionId = clientid ? `${peerAddress(req) ?? 'unknown'}#${clientid}` : undefined;
    const token = field(body, 'token') ?? tokenFromQuery(field(body, 'tcurl'));
    const ok = () => sendText(res, 200, 'OK');

    if (call === 'connect' || call === undefined) return ok(); // no stream yet: decided at publish/play
    if (!name || name.length > MAX_NAME * 2) {
      sendText(res, 403, 'Forbidden: no stream name');
      return;
    }
    const id = streamIdentity(name, '', accountInPath);
    switch (call) {
      case 'publish':
      case 'play':
      case 'update': {
        let action: Action = call === 'publish' ? 'publish' : 'subscribe';
        if (call === 'update') {
          const known = sessionId ? await s.store.getSession(CALLER, sessionId).catch(() => null) : null;
          action = known?.action ?? 'subscribe';
        }
        const access: AccessRequest = {
          action,
          token,
          streamName: id.streamName,
          accountId: id.accountId,
          clientIp: normaliseIp(field(body, 'addr')),
          origin: undefined,
          protocol: 'rtmp',
          sessionId,
        };
        const d = await s.enforcer.decide(access, CALLER);
        if (!d.allowed) {
          sendText(res, d.status === 503 ? 503 : 403, d.message);
          return;
        }
        if (call !== 'update') reportStart(s, CALLER, access, d);
        return ok();
      }
      case 'publish_done':
      case 'play_done':
      case 'done': {
        // arut's module sends no byte counts; forks and wrappers that add bytes_out/bytes_in are counted.
        reportBytes(s, CALLER, sessionId, field(body, 'bytes_out'), field(body, 'bytes_in'));
        s.lifecycle.signal({
          kind: 'session_ended',
          caller: CALLER,
          sessionId,
          action: call === 'publish_done' ? 'publish' : call === 'play_done' ? 'subscribe' : undefined,
          accountId: id.accountId,
          streamName: id.streamName,
          token,
        });
        return ok();
      }
      case 'record_done':
        s.lifecycle.signal({ kind: 'recording', event: 'completed', caller: CALLER, sessionId, accountId: id.accountId, streamName: id.streamName, path: field(body, 'path'), token });
        return ok();
      default:
        return ok(); // calls added by forks (on_record_started, ...) are not ours to refuse
    }
  };

  app.post('/hooks/nginx-rtmp', ...bodyParsers('form', s.config.server.bodyLimitBytes), handler);
  app.get('/hooks/nginx-rtmp', handler);
}
