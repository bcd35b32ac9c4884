// nginx-rtmp-module notify calls (on_publish, on_play, *_done, on_record_done, on_update):
// form-encoded POST (or GET with notify_method get). 2xx lets the client on, anything else makes
// nginx drop it. The module's own fields come first; the client's query args follow, raw.
import type { Request } from 'express';
import type { Action } from '../contracts/decision.js';
import { normaliseIp } from '../domain/addresses.js';
import { peerAddress } from '../http/client.js';
import type { Caller, CallerRoute, Outcome, SessionIdentity } from './caller.js';
import { bytesSignal, field, nameable, refusalMessage, refusalStatus, streamIdentity, tokenFromQuery } from './shared.js';

const CALLER = 'nginx-rtmp';
const PATH = '/hooks/nginx-rtmp';
const OK: Outcome = { reply: { status: 200, text: 'OK' } };
/** A server's name in its notify URL (`/hooks/nginx-rtmp/<name>`). */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const BAD_NAME: Outcome = { reply: { status: 400, text: 'The path below /hooks/nginx-rtmp/ names the server: 1 to 64 letters, digits, dots, underscores or hyphens' } };

/**
 * The name the notify URL gives its server (docs/callers.md#nginx-rtmp-debian-libnginx-mod-rtmp): '' when it gives none, null
 * when what follows the path is not a name. Only the configured URL carries it: a client's args go
 * in the body (POST) or after nginx's own query (GET), never in the path.
 */
function serverName(req: Request): string | null {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const name = path.length > PATH.length + 1 ? path.slice(PATH.length + 1) : '';
  return name === '' || SERVER_NAME.test(name) ? name : null;
}
const NO_STREAM: Outcome = { reply: { status: 403, text: refusalMessage('stream_not_allowed') } };

const read: CallerRoute['read'] = async (req, ctx) => {
  const body = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
  const call = field(body, 'call');
  const name = field(body, 'name');
  const clientid = field(body, 'clientid');
  // nginx connection numbers restart with nginx and repeat across servers: qualify by the server,
  // its address and the name its notify URL gives it (servers that reach Streamgate from one
  // address — on one host, behind a NAT or a load balancer — tell themselves apart by it).
  const named = serverName(req);
  if (named === null) return BAD_NAME;
  const server = peerAddress(req) ?? 'unknown';
  const qualified = named === '' ? server : `${server}/${named}`;
  const session: SessionIdentity | undefined = clientid ? { id: `${qualified}#${clientid}`, native: { server, clientid, app: field(body, 'app') ?? '', name: name ?? '' } } : undefined;
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
      // (and below it, for either method: a server's name, `/hooks/nginx-rtmp/<name>`)
      method: 'POST',
      path: PATH,
      below: true,
      body: 'form',
      read,
      docs: [{ summary: 'nginx-rtmp notify calls (also GET with notify_method get)', bodyType: 'application/x-www-form-urlencoded', answer: '200 to allow, 403 to drop the client' }],
    },
    { method: 'GET', path: PATH, body: 'none', read, docs: [] },
  ],
  answer(d) {
    return d.allowed ? OK.reply : { status: refusalStatus(d, 'never'), text: d.message };
  },
};
