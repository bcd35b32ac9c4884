// /api/secured_streams: the stream rules that keep securing viewing after their publish token was
// deleted (docs/api.md#secured-streams). Read and shrunk by the account; never grown by hand.
import { z } from 'zod';
import type { TokenService } from '../../management/tokens.js';
import { route, type RouteSpec } from '../route.js';
import { text } from '../text.js';
import { MAX_NAME } from '../../domain/matchers.js';

const securedOut = z.object({
  streamName: z.string(),
  isRegex: z.boolean(),
  tokenId: z.number().int().meta({ description: 'the deleted publish token it was kept from' }),
  addedOn: z.string().meta({ description: 'when it was kept (ISO 8601)' }),
});

const pageQuery = z.object({
  page: z.coerce.number().int().min(1).max(2147483647).default(1),
  itemsOnPage: z.coerce.number().int().min(1).max(100).default(25),
});

export function securedStreamRoutes(tokens: TokenService): RouteSpec[] {
  const tag = 'Secured streams';
  return [
    route({
      method: 'get',
      path: '/api/secured_streams',
      summary: 'List the stream rules kept secured after their publish token was deleted (by name; an empty page is the end of the list)',
      tag,
      auth: 'apiSecret',
      query: pageQuery,
      response: z.array(securedOut),
      handler: ({ account, query }) => tokens.securedStreams(account.id, query.page, query.itemsOnPage),
    }),
    route({
      method: 'delete',
      path: '/api/secured_streams/:streamName',
      summary: 'Open the streams a kept rule secures: removes the entries of that name (exact and regex; URL-encode a pattern)',
      tag,
      auth: 'apiSecret',
      params: z.object({ streamName: text(1, MAX_NAME) }),
      response: z.array(securedOut),
      handler: ({ account, params, actor }) => tokens.releaseSecuredStream(account.id, params.streamName, actor),
    }),
  ];
}
