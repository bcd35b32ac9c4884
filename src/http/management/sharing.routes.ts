// /api/sharing: the account's token-sharing policy, and what a token's (or an issuer subject's) window holds — the addresses,
// networks, providers and countries its uses came from, and the signals over the policy's limits
// (docs/api.md#token-sharing). The dashboard's token page reads the second.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { assessSharing, effectiveSharing, SHARING_ACTIONS, SHARING_SIGNALS, SUBJECT_CLAIMS, subjectOf, type SharingPolicy } from '../../domain/sharing.js';
import type { TokenKind } from '../../domain/tokens.js';
import type { Store } from '../../store/store.js';
import type { AccountService } from '../../management/accounts.js';
import { credentialKey } from '../../sharing/monitor.js';
import { route, type RouteSpec } from '../route.js';
import { idParamsSchema, sharingSettings } from './schemas.js';

const TAG = 'Token sharing';

const policyOut = z.object({
  enabled: z.boolean(),
  windowSeconds: z.number().int(),
  maxAddresses: z.number().int(),
  maxNetworks: z.number().int(),
  maxAsns: z.number().int(),
  maxCountries: z.number().int(),
  travelKmh: z.number().int(),
  travelMinKm: z.number().int(),
  action: z.enum(SHARING_ACTIONS),
});

const useOut = z.object({
  ip: z.string(),
  network: z.string(),
  asn: z.number().int().optional(),
  country: z.string().optional(),
  at: z.string().meta({ description: 'the last use from this address (ISO 8601)' }),
});

const windowOut = z.object({
  tokenId: z.number().int(),
  policy: policyOut.meta({ description: "the token's policy: its override over the account's, over the defaults" }),
  uses: z.array(useOut).meta({ description: 'the addresses seen in the window, most recent first' }),
  addresses: z.number().int(),
  networks: z.array(z.string()),
  asns: z.array(z.number().int()),
  countries: z.array(z.string()),
  travel: z
    .object({ fromCountry: z.string().optional(), toCountry: z.string().optional(), km: z.number(), kmh: z.number() })
    .optional()
    .meta({ description: 'the fastest impossible trip between two uses, if any' }),
  flags: z.array(z.enum(SHARING_SIGNALS)).meta({ description: 'the signals over the policy’s limits (empty: not flagged)' }),
});

const subjectQuery = z.object({
  subject: z.string().min(1).max(1024).meta({ description: 'the subject, as the tokenSharing webhook names it' }),
  claim: z.enum(SUBJECT_CLAIMS).default('sub').meta({ description: 'the claim it was read from (the webhook’s subjectClaim; default sub)' }),
});

const subjectWindowOut = windowOut.extend({
  issuerId: z.number().int(),
  subject: z.string(),
  subjectClaim: z.enum(SUBJECT_CLAIMS),
});

const distinct = <T extends string | number>(xs: Array<T | undefined>): T[] =>
  [...new Set(xs.filter((x): x is T => x !== undefined && x !== ''))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));

export function sharingRoutes(store: Store, accounts: AccountService, now: () => number): RouteSpec[] {
  const account = async (id: string) => {
    const a = await store.getAccount(id);
    if (!a) throw ApiError.unauthorized();
    return a;
  };
  /** What a credential's window holds, under `policy`, answered as windowOut. */
  const windowOf = async (accountId: string, key: string, policy: SharingPolicy): Promise<Omit<z.infer<typeof windowOut>, 'tokenId'>> => {
    const uses = await store.sharingUses(accountId, key, policy.windowSeconds * 1000);
    const assessed = assessSharing(uses, policy, now());
    const out: Omit<z.infer<typeof windowOut>, 'tokenId'> = {
      policy,
      uses: uses.map((u) => {
        const v: z.infer<typeof useOut> = { ip: u.ip, network: u.network, at: new Date(u.at).toISOString() };
        if (u.asn !== undefined) v.asn = u.asn;
        if (u.country !== undefined) v.country = u.country;
        return v;
      }),
      addresses: assessed.addresses,
      networks: distinct(uses.map((u) => u.network)),
      asns: distinct(uses.map((u) => u.asn)),
      countries: distinct(uses.map((u) => u.country)),
      flags: assessed.flags,
    };
    if (assessed.travel) out.travel = { fromCountry: assessed.travel.from.country, toCountry: assessed.travel.to.country, km: assessed.travel.km, kmh: assessed.travel.kmh };
    return out;
  };
  const windowRoute = (kind: TokenKind): RouteSpec =>
    route({
      method: 'get',
      path: `/api/sharing/${kind}_token/:id`,
      summary: `Streamgate: what the ${kind} token's sharing window holds (addresses, networks, providers, countries) and the signals over its policy's limits`,
      tag: TAG,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: windowOut,
      handler: async ({ account: caller, params }) => {
        const [a, t] = await Promise.all([account(caller.id), store.getToken(caller.id, kind, params.id)]);
        if (!t) throw new ApiError(404, `No ${kind} token with id: ${params.id}`);
        return Object.assign({ tokenId: t.id }, await windowOf(caller.id, credentialKey({ kind, tokenId: t.id }), effectiveSharing(a.sharing, t.sharing)));
      },
    });
  const subjectRoute = route({
    method: 'get',
    path: '/api/sharing/issuer/:id',
    summary: "Streamgate: what a credential issuer's subject's sharing window holds and the signals over its policy token's policy",
    tag: TAG,
    auth: 'apiSecret',
    params: idParamsSchema,
    query: subjectQuery,
    response: subjectWindowOut,
    handler: async ({ account: caller, params, query }) => {
      const [a, issuer] = await Promise.all([account(caller.id), store.getIssuer(caller.id, params.id)]);
      if (!issuer) throw ApiError.notFound('issuer', params.id, 'issuerId');
      const found = await store.findTokenById(issuer.policyTokenId);
      const t = found?.accountId === caller.id ? found : null;
      const subject = subjectOf(query.claim, query.subject);
      // (the key does not depend on the kind: a subject's is its issuer's and its own)
      const key = credentialKey({ kind: t?.kind ?? 'subscribe', tokenId: issuer.policyTokenId, issuerId: issuer.id, subject });
      const w = await windowOf(caller.id, key, effectiveSharing(a.sharing, t?.sharing));
      return Object.assign({ tokenId: issuer.policyTokenId, issuerId: issuer.id, subject: query.subject, subjectClaim: query.claim }, w);
    },
  });
  return [
    route({
      method: 'get',
      path: '/api/sharing/policy',
      summary: "Streamgate: the account's token-sharing policy (every setting, the defaults filled in)",
      tag: TAG,
      auth: 'apiSecret',
      response: policyOut,
      handler: async ({ account: caller }) => effectiveSharing((await account(caller.id)).sharing, undefined),
    }),
    route({
      method: 'put',
      path: '/api/sharing/policy',
      summary: "Streamgate: replaces the account's token-sharing policy (settings left out take the defaults; {} restores them all); answers as GET",
      tag: TAG,
      auth: 'apiSecret',
      body: sharingSettings,
      response: policyOut,
      handler: async ({ account: caller, body, actor }) => {
        const updated = await accounts.update(caller.id, { sharing: Object.keys(body).length === 0 ? null : body }, actor);
        if (!updated) throw ApiError.unauthorized();
        return effectiveSharing(updated.sharing, undefined);
      },
    }),
    windowRoute('publish'),
    windowRoute('subscribe'),
    subjectRoute,
  ];
}
