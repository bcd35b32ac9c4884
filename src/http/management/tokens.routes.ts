// /api/publish_token and /api/subscribe_token: one table of routes per token kind.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { effectiveCluster, matchesName, type TokenKind, type CreateTokenInput } from '../../domain/tokens.js';
import type { TokenService } from '../../management/tokens.js';
import { route, type RouteSpec } from '../route.js';
import type { Enforcer } from '../../admission/pipeline.js';
import { normaliseIp, originHost } from '../../domain/addresses.js';
import {
  activeQuerySchema,
  checkBodySchema,
  checkOut,
  disableSchema,
  idParamsSchema,
  listByClusterQuerySchema,
  listByNameQuerySchema,
  listQuerySchema,
  normalizeUpdate,
  tokenOut,
  tokenSchemas,
  type PatternCheck,
} from './schemas.js';
import { copyWith } from '../../domain/objects.js';

const disableOut = z.object({
  successfulTokens: z.array(z.number().int()),
  failedTokens: z.array(z.object({ tokenId: z.number().int(), errorMessage: z.string() })),
});
const activeOut = z.object({ tokenIds: z.array(z.number().int()) });

const listQueryOf = (q: z.infer<typeof listQuerySchema>) => ({
  sortBy: q.sortBy,
  page: q.page,
  itemsOnPage: q.itemsOnPage,
  descending: q.isDescending,
});

export function tokenRoutes(kind: TokenKind, tokens: TokenService, enforcer: Enforcer, patterns: PatternCheck): RouteSpec[] {
  const schemas = tokenSchemas(patterns);
  const base = `/api/${kind}_token`;
  const tag = kind === 'publish' ? 'Publish tokens' : 'Subscribe tokens';
  const out = tokenOut(kind);
  const update = route({
    method: 'put',
    path: `${base}/:id`,
    summary: `Update a ${kind} token`,
    tag,
    auth: 'apiSecret',
    params: idParamsSchema,
    body: schemas.update(kind),
    response: out,
    handler: ({ account, params, body, actor }) => {
      const { input, errors } = normalizeUpdate(body as Record<string, unknown>);
      if (Object.keys(errors).length > 0) throw ApiError.validation(errors);
      return tokens.update(account.id, kind, params.id, input, actor);
    },
  });
  const routes: RouteSpec[] = [
    route({
      method: 'post',
      path: base,
      summary: `Create a ${kind} token`,
      tag,
      auth: 'apiSecret',
      body: schemas.create(kind),
      response: out,
      handler: ({ account, body, actor }) => tokens.create(account.id, kind, body as CreateTokenInput, actor),
    }),
    route({
      method: 'get',
      path: `${base}/list`,
      summary: `List ${kind} tokens (an empty page is the end of the list)`,
      tag,
      auth: 'apiSecret',
      query: listQuerySchema,
      response: z.array(out),
      handler: ({ account, query }) =>
        tokens.list(account.id, kind, {
          sortBy: query.sortBy,
          page: query.page,
          itemsOnPage: query.itemsOnPage,
          descending: query.isDescending,
        }),
    }),
    route({
      method: 'get',
      path: `${base}/list_by_name`,
      summary: `List ${kind} tokens whose label or exact stream names contain \`name\` (case-insensitive; filterBy TokenName, StreamName or TokenOrStreamName)`,
      tag,
      auth: 'apiSecret',
      query: listByNameQuerySchema,
      response: z.array(out),
      handler: ({ account, query }) =>
        tokens.listWhere(account.id, kind, listQueryOf(query), (t) => matchesName(t, query.name, query.filterBy)),
    }),
  ];
  if (kind === 'publish') {
    routes.push(
      route({
        method: 'get',
        path: `${base}/list_by_cluster`,
        summary: "List publish tokens whose origin cluster is `cluster` (tokens without one are in the account's default cluster)",
        tag,
        auth: 'apiSecret',
        query: listByClusterQuerySchema,
        response: z.array(out),
        handler: async ({ account, query }) => {
          // tokens that name no cluster are in the account's default one (docs/compatibility.md)
          const accountDefault = await tokens.accountCluster(account.id);
          return tokens.listWhere(account.id, kind, listQueryOf(query), (t) => effectiveCluster(t, accountDefault).toLowerCase() === query.cluster.toLowerCase());
        },
      }),
      route({
        method: 'patch',
        path: `${base}/disable`,
        summary: 'Disable several publish tokens',
        tag,
        auth: 'apiSecret',
        body: disableSchema,
        response: disableOut,
        handler: ({ account, body, actor }) => tokens.disable(account.id, kind, body.tokenIds, actor),
      }),
      route({
        method: 'get',
        path: `${base}/active`,
        summary: 'Publish tokens now publishing a stream (streamId = <accountId>/<streamName>)',
        tag,
        auth: 'apiSecret',
        query: activeQuerySchema,
        response: activeOut,
        handler: ({ account, query }) => {
          const i = query.streamId.indexOf('/');
          const accountId = query.streamId.slice(0, i);
          // Another account's stream id shows nothing of that account.
          if (accountId !== account.id) return Promise.resolve({ tokenIds: [] });
          return tokens.active(account.id, query.streamId.slice(i + 1));
        },
      }),
      route({
        method: 'get',
        path: `${base}/active/all`,
        summary: 'Publish tokens now publishing any stream of the account',
        tag,
        auth: 'apiSecret',
        response: activeOut,
        handler: ({ account }) => tokens.active(account.id),
      }),
    );
  }
  routes.push(
    route({
      method: 'get',
      path: `${base}/:id`,
      summary: `Read a ${kind} token`,
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: out,
      handler: ({ account, params }) => tokens.read(account.id, kind, params.id),
    }),
    route({
      method: 'post',
      path: `${base}/:id/check`,
      summary: `Dry run: every rule of the ${kind} token against a probe, binding nothing`,
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      body: checkBodySchema,
      response: checkOut,
      handler: async ({ account, params, body }) => {
        const token = await tokens.record(account.id, kind, params.id);
        const probe = {
          action: kind,
          streamName: body.streamName,
          clientIp: normaliseIp(body.clientIp),
          origin: originHost(body.origin),
          country: body.country?.toUpperCase(),
          protocol: (body.protocol ?? 'webrtc').toLowerCase(),
        };
        const { decision, rules } = await enforcer.admit(probe, 'explain', 'check', token);
        return { allowed: decision.allowed, status: decision.status, reason: decision.reason, message: decision.message, rules };
      },
    }),
    update,
    copyWith(update, {
      path: `/api/v2/${kind}_token/:id`,
      summary: `Update a ${kind} token (v2 path, same body; the v2 record has no deprecated \`name\`)`,
      handler: async (ctx: Parameters<typeof update.handler>[0]) => {
        const { name: _name, ...v2 } = (await update.handler(ctx)) as Record<string, unknown>;
        return v2;
      },
    }),
    route({
      method: 'delete',
      path: `${base}/:id`,
      summary: `Delete a ${kind} token`,
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: z.literal(true),
      handler: ({ account, params, actor }) => tokens.remove(account.id, kind, params.id, actor),
    }),
  );
  return routes;
}
