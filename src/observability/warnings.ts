// Settings that work but leave a door open: logged at start and listed in /readyz's details, so an
// operator sees them where they look, not only in a start-up log that has scrolled away.
import { isLoopbackHost, type Config } from '../config/schema.js';
import type { AccountService } from '../management/accounts.js';

export const OPEN_HOOKS_WARNING =
  'hooks.allowUnauthenticated: /hooks/* answer without a hook secret to anyone who can reach this address; anyone there can forge recordings, live publishers and usage';

export const SHARED_PATHS_WARNING =
  'hooks.accountInPath is false and the store holds more than one account: media-server paths do not name the account, so a token of one account admits the same-named path of another (publish over it, or view it); set hooks.accountInPath: true for several tenants';

export const VIEWER_KEY_WARNING =
  'sessions.http: viewer credentials are signed with a key no other instance has (no sessions.http.secret or hooks.secret); with several instances on one store, a viewer reaching another instance is decided in full and refused without its token; set sessions.http.secret, the same on every instance';

export async function configWarnings(config: Config, accounts: AccountService): Promise<string[]> {
  const out: string[] = [];
  const redis = config.redis.url !== '' || config.redis.clusterNodes.length > 0 || config.redis.sentinels.length > 0;
  if (config.sessions.http.enabled && redis && config.sessions.http.secret === '' && config.hooks.secret === '') out.push(VIEWER_KEY_WARNING);
  if (config.hooks.secret === '' && config.hooks.allowUnauthenticated && !isLoopbackHost(config.server.host)) out.push(OPEN_HOOKS_WARNING);
  if (!config.hooks.accountInPath && (await accounts.hasSeveral())) out.push(SHARED_PATHS_WARNING);
  return out;
}
