// The callers Streamgate answers, in one list: it gives the route table its hook routes (mounted
// behind the hook secret and documented in the OpenAPI document, src/http/caller-routes.ts), names the
// `adapter` label of the decision metrics, lists the callers whose sessions usage reports can name,
// and feeds the tests that enumerate callers. A new caller is one module and one line here.
import type { Caller } from './caller.js';
import { authorize } from './authorize.js';
import { authRequest } from './auth-request.js';
import { mediamtx } from './mediamtx.js';
import { srs } from './srs.js';
import { nginxRtmp } from './nginx-rtmp.js';
import { ome } from './ome.js';
import { events } from './events.js';
import { usageCaller } from './usage.js';

const DECIDING_AND_REPORTING: readonly Caller[] = [authorize, authRequest, mediamtx, srs, nginxRtmp, ome, events];

/** The callers whose connections the session registry keeps, in the order a session id is looked up. */
export const SESSION_CALLERS = DECIDING_AND_REPORTING.filter((c) => c.capabilities.sessionIdentity).map((c) => c.name) as [string, ...string[]];

/** Every caller; usage reports come last, as they name the sessions of the others. */
export const CALLERS: readonly Caller[] = [...DECIDING_AND_REPORTING, usageCaller(SESSION_CALLERS)];
