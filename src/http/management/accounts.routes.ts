// The operator surface (/admin/accounts, admin key) and the account holder's own secret rotation.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { accountView, type AccountService } from '../../management/accounts.js';
import { route, type RouteSpec } from '../route.js';
import { accountIdParamsSchema, createAccountSchema, updateAccountSchema } from './schemas.js';

const accountOut = z.object({
  id: z.string(),
  name: z.string(),
  createdOn: z.string(),
  secureViewer: z.boolean(),
  ipRulesOnRtmp: z.boolean().meta({ description: "whether tokens' address rules apply on RTMP, RTSP and SRT (docs/api.md#rtmp)" }),
  hasApiSecret: z.boolean(),
});
const secretOut = z.object({ apiSecret: z.string() });
const noAccount = (id: string) => ApiError.notFound('account', id, 'accountId');

export function adminRoutes(accounts: AccountService, onSecretDeleted: (accountId: string) => Promise<void> = async () => undefined): RouteSpec[] {
  const tag = 'Admin';
  return [
    route({
      method: 'post',
      path: '/admin/accounts',
      summary: 'Create an account and its first API secret (shown once)',
      tag,
      auth: 'admin',
      body: createAccountSchema,
      response: accountOut.extend({ apiSecret: z.string() }),
      status: 201,
      handler: async ({ body, actor }) => {
        const { account, apiSecret } = await accounts.create(body.name, actor);
        const v = accountView(account);
        return { id: v.id, name: v.name, apiSecret, createdOn: v.createdOn };
      },
    }),
    route({
      method: 'get',
      path: '/admin/accounts',
      summary: 'List accounts (no secrets)',
      tag,
      auth: 'admin',
      response: z.array(accountOut),
      handler: async () => (await accounts.list()).map(accountView),
    }),
    route({
      method: 'put',
      path: '/admin/accounts/:accountId',
      summary: 'Change account settings (secureViewer: every stream needs a subscribe token; ipRulesOnRtmp: address rules on RTMP, RTSP and SRT)',
      tag,
      auth: 'admin',
      params: accountIdParamsSchema,
      body: updateAccountSchema,
      response: accountOut,
      handler: async ({ params, body, actor }) => {
        if (Object.keys(body).length === 0) throw new ApiError(400, 'No properties specified to update.');
        const a = await accounts.update(params.accountId, body, actor);
        if (!a) throw noAccount(params.accountId);
        return accountView(a);
      },
    }),
    route({
      method: 'post',
      path: '/admin/accounts/:accountId/secret',
      summary: "Create or refresh the account's API secret (the old one is rejected at once)",
      tag,
      auth: 'admin',
      params: accountIdParamsSchema,
      response: secretOut,
      handler: async ({ params, actor }) => {
        const apiSecret = await accounts.refreshSecret(params.accountId, actor);
        if (!apiSecret) throw noAccount(params.accountId);
        return { apiSecret };
      },
    }),
    route({
      method: 'delete',
      path: '/admin/accounts/:accountId/secret',
      summary: "Delete the account's API secret (every call is rejected until a new one is created)",
      tag,
      auth: 'admin',
      params: accountIdParamsSchema,
      response: z.literal(true),
      handler: async ({ params, actor }) => {
        if (!(await accounts.deleteSecret(params.accountId, actor))) throw noAccount(params.accountId);
        await onSecretDeleted(params.accountId);
        return true;
      },
    }),
  ];
}

export function accountRoutes(accounts: AccountService): RouteSpec[] {
  return [
    route({
      method: 'post',
      path: '/api/account/secret',
      summary: 'Rotate the calling API secret (the old one is rejected from now on)',
      tag: 'Account',
      auth: 'apiSecret',
      response: secretOut,
      handler: async ({ account, actor }) => {
        // only if the secret of this call is still the account's (a racing rotation may have won)
        const apiSecret = await accounts.refreshSecret(account.id, actor, account.secretHash ?? '');
        if (!apiSecret) throw ApiError.unauthorized();
        return { apiSecret };
      },
    }),
  ];
}
