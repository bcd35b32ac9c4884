// /api/geo/account: the account's viewer country defaults, which apply to a viewer when neither its
// subscribe token nor the publish token(s) of the stream set country lists (docs/api.md#country).
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { countryProblem } from '../../domain/matchers.js';
import { MAX_LIST } from '../../domain/tokens.js';
import type { Account, Store } from '../../store/store.js';
import { route, type RouteSpec } from '../route.js';
import type { AccountService } from '../../management/accounts.js';

const countryList = z
  .array(
    z.string().superRefine((s, ctx) => {
      const p = countryProblem(s);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    }),
  )
  .max(MAX_LIST)
  .nullable()
  .optional();

/** The hosted UpdateAccountGeoModel: null or absent = not given, [] clears. */
export const updateAccountGeoSchema = z.strictObject({
  updateAllowedCountries: countryList.meta({ description: 'ISO 3166-1 alpha-2 codes; [] clears; null or absent: unchanged' }),
  updateDeniedCountries: countryList.meta({ description: 'ISO 3166-1 alpha-2 codes; [] clears; null or absent: unchanged' }),
  // The Python client sends the record's names; taken as aliases, as token updates take theirs.
  allowedCountries: countryList.meta({ description: 'alias of updateAllowedCountries' }),
  deniedCountries: countryList.meta({ description: 'alias of updateDeniedCountries' }),
});

/** The hosted AccountGeoModel. */
export const accountGeoOut = z.object({
  allowedCountries: z.array(z.string()),
  deniedCountries: z.array(z.string()),
});

type AccountGeo = z.infer<typeof accountGeoOut>;

const geoOf = (a: Pick<Account, 'allowedCountries' | 'deniedCountries'>): AccountGeo => ({
  allowedCountries: a.allowedCountries ?? [],
  deniedCountries: a.deniedCountries ?? [],
});

const normalise = (codes: string[]): string[] => [...new Set(codes.map((c) => c.toUpperCase()))];

export function geoRoutes(store: Store, accounts: AccountService): RouteSpec[] {
  const tag = 'Account';
  return [
    route({
      method: 'get',
      path: '/api/geo/account',
      summary: "The account's viewer country defaults (apply when no token sets country lists)",
      tag,
      auth: 'apiSecret',
      response: accountGeoOut,
      handler: async ({ account }) => {
        const current = await store.getAccount(account.id);
        if (!current) throw ApiError.unauthorized();
        return geoOf(current);
      },
    }),
    route({
      method: 'post',
      path: '/api/geo/account',
      summary: "Change the account's viewer country defaults; answers the new ones",
      tag,
      auth: 'apiSecret',
      body: updateAccountGeoSchema,
      response: accountGeoOut,
      handler: async ({ account, body, actor }) => {
        const current = await store.getAccount(account.id);
        if (!current) throw ApiError.unauthorized();
        const both = (['allowedCountries', 'deniedCountries'] as const).filter((k) => body[k] != null && body[k === 'allowedCountries' ? 'updateAllowedCountries' : 'updateDeniedCountries'] != null);
        if (both.length > 0) {
          throw ApiError.validation(Object.fromEntries(both.map((k) => [k, [`give either ${k} or update${k[0].toUpperCase()}${k.slice(1)}, not both`]])));
        }
        const allowed = body.updateAllowedCountries ?? body.allowedCountries;
        const denied = body.updateDeniedCountries ?? body.deniedCountries;
        // Nothing given (the hosted client sends {} for "no change"): the current defaults.
        if ((allowed === null || allowed === undefined) && (denied === null || denied === undefined)) return geoOf(current);
        const next = geoOf(current);
        if (allowed !== null && allowed !== undefined) next.allowedCountries = normalise(allowed);
        if (denied !== null && denied !== undefined) next.deniedCountries = normalise(denied);
        if (next.allowedCountries.length > 0 && next.deniedCountries.length > 0) {
          // Name the list this request made non-empty (both, when it gave both).
          const field = denied !== null && denied !== undefined && denied.length > 0 ? 'updateDeniedCountries' : 'updateAllowedCountries';
          const other = field === 'updateDeniedCountries' ? 'allowedCountries' : 'deniedCountries';
          throw ApiError.validation({
            [field]: [`give allowedCountries or deniedCountries, not both (the account's ${other} is not empty: clear it with [] in the same request)`],
          });
        }
        // Both lists in one write: a pair from one request never mixes with a concurrent request's.
        const updated = await accounts.update(account.id, next, actor);
        if (!updated) throw ApiError.unauthorized();
        return geoOf(updated);
      },
    }),
  ];
}
