// The decision history (docs/api.md#decision-history): the account's kept decisions by id, token,
// stream, address, reason and time, each with the rule-by-rule explanation the check endpoint gives;
// and the admin's erasure of an account's history.
import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import { ApiError } from '../../errors.js';
import { REASONS, type Reason } from '../../contracts/decision.js';
import type { DecisionHistory } from '../../history/recorder.js';
import { HistoryCursorInvalid, type DecisionEntry } from '../../history/entry.js';
import { normaliseIp } from '../../domain/addresses.js';
import type { Store } from '../../store/store.js';
import { route, type RouteSpec } from '../route.js';
import { queryBool } from './schemas.js';

const TAG = 'Decisions';
const MAX_LIMIT = 200;
const REASON_NAMES = Object.keys(REASONS) as [Reason, ...Reason[]];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const time = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 time, e.g. 2026-11-28T20:00:00Z')
  .transform((s) => Date.parse(s));

const decisionsQuery = z
  .object({
    tokenId: z.coerce.number().int().min(1).max(2147483647).optional(),
    streamName: z.string().min(1).max(512).optional(),
    clientIp: z
      .string()
      .max(64)
      .refine((s) => ipaddr.isValid(s), 'expected an IPv4 or IPv6 address')
      .transform((s) => normaliseIp(s) ?? s)
      .optional(),
    reason: z.enum(REASON_NAMES).optional(),
    allowed: queryBool.optional(),
    from: time.optional().meta({ description: 'ISO 8601, inclusive' }),
    to: time.optional().meta({ description: 'ISO 8601, exclusive' }),
    cursor: z.string().min(1).max(200).optional().meta({ description: "the previous page's `next`" }),
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, { message: 'from must be before to', path: ['from'] });

const ruleOut = z.object({
  rule: z.string(),
  reason: z.string(),
  result: z.enum(['pass', 'fail', 'skipped', 'pending']),
  detail: z.string().nullable(),
  source: z.string().nullable(),
});

const decisionOut = z.object({
  decisionId: z.string(),
  time: z.string(),
  caller: z.string(),
  action: z.enum(['publish', 'subscribe']),
  streamName: z.string(),
  protocol: z.string(),
  allowed: z.boolean(),
  status: z.number().int(),
  reason: z.string(),
  message: z.string(),
  rule: z.string().nullable(),
  detail: z.string().nullable(),
  tokenId: z.number().int().nullable(),
  issuerId: z.number().int().nullable(),
  credential: z.string(),
  clientIp: z.string().nullable(),
  country: z.string().nullable(),
  origin: z.string().nullable(),
  sessionId: z.string().nullable(),
  rules: z.array(ruleOut),
});

/** A kept decision as the API answers it. */
export function decisionView(e: DecisionEntry): z.infer<typeof decisionOut> {
  return {
    decisionId: e.decisionId,
    time: new Date(e.at).toISOString(),
    caller: e.caller,
    action: e.action,
    streamName: e.streamName,
    protocol: e.protocol,
    allowed: e.allowed,
    status: e.status,
    reason: e.reason,
    message: REASONS[e.reason]?.message ?? '',
    rule: e.rule ?? null,
    detail: e.detail ?? null,
    tokenId: e.tokenId ?? null,
    issuerId: e.issuerId ?? null,
    credential: e.credential,
    clientIp: e.clientIp ?? null,
    country: e.country ?? null,
    origin: e.origin ?? null,
    sessionId: e.sessionId ?? null,
    rules: e.rules.map((r) => ({ rule: r.rule, reason: r.reason, result: r.result, detail: r.detail ?? null, source: r.source ?? null })),
  };
}

function historyOf(history: DecisionHistory | undefined): DecisionHistory {
  if (history === undefined) throw new ApiError(404, 'The decision history is off on this deployment (history.enabled: false)');
  return history;
}

export function decisionRoutes(history: DecisionHistory | undefined, store: Store): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/api/decisions',
      summary: "Streamgate: the account's kept decisions, newest first: every refusal (up to history.refusalsPerSecond) and a sample of allows",
      tag: TAG,
      auth: 'apiSecret',
      query: decisionsQuery,
      response: z.object({ decisions: z.array(decisionOut), next: z.string().nullable() }),
      handler: async ({ account, query }) => {
        const page = await historyOf(history)
          .query(account.id, query)
          .catch((e: unknown) => {
            if (e instanceof HistoryCursorInvalid) throw ApiError.field('cursor', e.message.replace(/^cursor: /, ''));
            throw e;
          });
        return { decisions: page.items.map(decisionView), next: page.next ?? null };
      },
    }),
    route({
      method: 'get',
      path: '/api/decisions/:decisionId',
      summary: 'Streamgate: one kept decision by the decisionId its caller was told, with every rule the check endpoint explains',
      tag: TAG,
      auth: 'apiSecret',
      params: z.object({ decisionId: z.string().regex(UUID, 'expected a decisionId (a UUID)') }),
      response: decisionOut,
      handler: async ({ account, params }) => {
        const id = params.decisionId.toLowerCase();
        const page = await historyOf(history).query(account.id, { decisionId: id, limit: 1 });
        const found = page.items[0];
        if (found === undefined) {
          throw new ApiError(
            404,
            `No decision ${id} in this account's history: it was made for another account, was an allow not sampled (history.allowSampleRate), came over history.refusalsPerSecond, or is older than history.maxAgeSeconds`,
          );
        }
        return decisionView(found);
      },
    }),
    route({
      method: 'delete',
      path: '/admin/accounts/:accountId/decisions',
      summary: "Erases an account's decision history (its queued decisions included)",
      tag: TAG,
      auth: 'admin',
      params: z.object({ accountId: z.string().min(1).max(64) }),
      response: z.literal(true),
      handler: async ({ params }) => {
        if ((await store.getAccount(params.accountId)) === null) throw new ApiError(404, `No account with id: ${params.accountId}`);
        await historyOf(history).erase(params.accountId);
        return true;
      },
    }),
  ];
}
