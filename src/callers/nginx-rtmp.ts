// nginx-rtmp-module notify calls (on_publish, on_play, *_done, on_record_done, on_update):
// form-encoded POST (or GET with notify_method get). 2xx lets the client on, anything else makes
// nginx drop it. The module's own fields come first; the client's query args follow, raw.
import type { Action } from '../contracts/decision.js';
import { normaliseIp } from '../domain/addresses.js';
import { peerAddress } from '../http/client.js';
import type { Caller, CallerRoute, Outcome, SessionIdentity } from './caller.js';
import { bytesSignal, field, nameable, refusalMessage, refusalStatus, streamIdentity, tokenFromQuery } from './shared.js';

const CALLER = 'nginx-rtmp';
const OK: Outcome = { reply: { status: 200, text: 'OK' } };
const NO_STREAM: Outcome = { reply: { status: 403, text: refusalMessage('stream_not_allowed') } };

const read: CallerRoute['read'] = async (req, ctx) => {
  const body = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
  const call = field(body, 'call');
  const name = field(body, 'name');
  const clientid = field(body, 'clientid');
  // nginx connection numbers restart with nginx and repeat across servers: qualify by the server.
  const server = peerAddress(req) ?? 'unknown';
  const session: SessionIdentity | undefined = clientid ? { id: `${server}#${clientid}`, native: { server, clientid, app: field(body, 'app') ?? '', name: name ?? '' } } : undefined;
  const sessionId = session?.id;
  const token = field(body, 'token') ?? tokenFromQuery(field(body, 'tcurl'));

  if (call === 'connect' || call === undefined) return OK; // no stream yet: decided at publish/play
  const id = streamIdentity(name ?? '', '', ctx.config.hooks.accountInPath);
  if (!nameable(id)) return NO_STREAM;
  switch (call) {
    case 'publish':
    case 'play':
    case 'update':
    case 'update_publish':
    case 'update_play': {
      // on_update: the module (1.2.x) names the side (update_publish / update_play); a bare `update`
      // (older forks) is resolved from the session registry.
      const reask = call.startsWith('update');
      let action: Action = call === 'publish' || call === 'update_publish' ? 'publish' : 'subscribe';
      if (call === 'update') action = (sessionId ? await ctx.sessionOf(CALLER, sessionId) : null)?.action ?? 'subscribe';
      return {
        admit: {
          access: { action, token, streamName: id.streamName, accountId: id.accountId, clientIp: normaliseIp(field(body, 'addr')), origin: undefined, protocol: 'rtmp', sessionId },
          session,
          starts: !reask,
          reask,
          credentialsGiven: token !== undefined,
        },
      };
    }
    case 'publish_done':
    case 'play_done':
    case 'done':
      return {
        reply: OK.reply,
        signals: [
          // arut's module sends no byte counts; forks and wrappers that add bytes_out/bytes_in are counted.
          ...bytesSignal(CALLER, sessionId, field(body, 'bytes_out'), field(body, 'bytes_in')),
          {
            kind: 'session_ended',
            caller: CALLER,
            sessionId,
            action: call === 'publish_done' ? 'publish' : call === 'play_done' ? 'subscribe' : undefined,
            accountId: id.accountId,
            streamName: id.streamName,
            token,
          },
        ],
      };
    case 'record_done':
      return {
        reply: OK.reply,
        signals: [{ kind: 'recording', event: 'completed', caller: CALLER, sessionId, accountId: id.accountId, streamName: id.streamName, path: field(body, 'path'), token }],
      };
    default:
      return OK; // calls added by forks (on_record_started, ...) are not ours to refuse
  }
};

export const nginxRtmp: Caller = {
  name: CALLER,
  capabilities: { sessionIdentity: true, reasks: true, terminate: true },
  routes: [
    {
      method: 'POST',
      path: '/hooks/nginx-rtmp',
      body: 'form',
      read,
      docs: [{ summary: 'nginx-rtmp notify calls (also GET with notify_method get)', bodyType: 'application/x-www-form-urlencoded', answer: '200 to allow, 403 to drop the client' }],
    },
    { method: 'GET', path: '/hooks/nginx-rtmp', body: 'none', read, docs: [] },
  ],
  answer(d) {
    return d.allowed ? OK.reply : { status: refusalStatus(d, 'never'), text: d.message };
  },
};
