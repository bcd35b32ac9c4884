// Settings that work but leave a door open: logged at start and listed in /readyz's details, so an
// operator sees them where they look, not only in a start-up log that has scrolled away.
import { isLoopbackHost, type Config } from '../config/schema.js';
import { dataDirWarning } from '../store/data-dir.js';

export const OPEN_HOOKS_WARNING =
  'hooks.allowUnauthenticated: /hooks/* answer without a hook secret to anyone who can reach this address; anyone there can forge recordings, live publishers and usage';

export const SHARED_PATHS_WARNING =
  'hooks.accountInPath is false and the store holds more than one account: media-server paths do not name the account, so a token of one account admits the same-named path of another (publish over it, or view it); set hooks.accountInPath: true for several tenants';

export const AUDIT_OFF_WARNING =
  'audit.key is not set and the store is Redis: the audit log of management changes is off (instances sharing a store must share one key); set STREAMGATE_AUDIT_KEY on every instance, or audit.enabled: false to say so (docs/operations.md#audit-log)';

export const AUDIT_REFUSING_WARNING =
  'the store keeps audit chains and this instance has no audit key: its management writes are refused (503) until STREAMGATE_AUDIT_KEY is set to the key the other instances use (docs/operations.md#audit-log)';

/** What the warnings ask of the accounts (the account service answers it). */
export interface AccountCount {
  hasSeveral(): Promise<boolean>;
}

/** What they ask of the audit log: whether it refuses writes for want of a key. */
export interface AuditKeyCheck {
  checkKey(): Promise<boolean>;
}

export async function configWarnings(config: Config, accounts: AccountCount, audit?: AuditKeyCheck): Promise<string[]> {
  const out: string[] = [];
  if (audit !== undefined && (await audit.checkKey())) out.push(AUDIT_REFUSING_WARNING);
  if (config.hooks.secret === '' && config.hooks.allowUnauthenticated && !isLoopbackHost(config.server.host)) out.push(OPEN_HOOKS_WARNING);
  if (!config.hooks.accountInPath && (await accounts.hasSeveral())) out.push(SHARED_PATHS_WARNING);
  const redis = config.redis.url !== '' || config.redis.clusterNodes.length > 0 || config.redis.sentinels.length > 0;
  if (redis && config.audit.enabled && config.audit.key === '' && config.audit.keyFile === '') out.push(AUDIT_OFF_WARNING);
  // read at each call: a chmod shows in /readyz without a restart
  const openDir = dataDirWarning(config.dataDir);
  if (openDir !== undefined) out.push(openDir);
  return out;
}
