// Credential issuers written into a Streamgate data directory before the server first starts on it
// (docs/api.md#credential-issuers): the first-start account, as the server makes it (its API secret
// in <dataDir>/default-api-secret), a token through the token service the API uses, and an issuer
// whose policy that token is, stored as the server reads it. The store is opened with the settings
// the server will start with, so it is the same file (or Redis prefix).
import type { IssuerRecord } from '../../src/domain/issuers.js';
import type { CreateTokenInput, TokenKind } from '../../src/domain/tokens.js';
import { loadConfig } from '../../src/config/load.js';
import { AccountService } from '../../src/management/accounts.js';
import { createLogger } from '../../src/observability/logger.js';
import { createStore, createTokenService } from '../../src/services.js';
import type { NewIssuer } from '../../src/store/store.js';
import { CLI_ACTOR } from '../../src/audit/actor.js';

export interface SeededIssuer {
  accountId: string;
  policyTokenId: number;
  issuer: IssuerRecord;
}

/**
 * Seeds the store `env` names (STREAMGATE_DATA_DIR, STREAMGATE_CONFIG, ... as the server gets them),
 * which must hold no account yet: the account "default", a `kind` token made of `token`, and the
 * issuer `issuer(policyTokenId)` of that account.
 */
export async function seedIssuer(
  env: Record<string, string>,
  kind: TokenKind,
  token: CreateTokenInput,
  issuer: (policyTokenId: number) => NewIssuer,
): Promise<SeededIssuer> {
  const config = loadConfig({ env });
  const store = await createStore(config, createLogger('silent'));
  try {
    const first = await new AccountService(store, Date.now).ensureDefaultAccount(config.dataDir);
    if (!first) throw new Error(`the store of ${config.dataDir} holds an account already: seed a new data directory`);
    const accountId = first.account.id;
    const policy = await createTokenService(config, store).create(accountId, kind, token, CLI_ACTOR);
    const policyTokenId = Number(policy.id);
    return { accountId, policyTokenId, issuer: await store.createIssuer(accountId, issuer(policyTokenId)) };
  } finally {
    await store.close();
  }
}
