// The audit log of management changes (docs/api.md#audit-log): the account's entries, newest first
// and filtered; all of them as JSON Lines; and the verification of its chain, which names the first
// broken link. Account-scoped: an account reads its own chain only.
import { z } from 'zod';
import type { Response } from 'express';
import { ApiError } from '../../errors.js';
import { AUDIT_ACTIONS, AUDIT_RESOURCES } from '../../domain/audit.js';
import type { AuditLog } from '../../audit/log.js';
import { route, type RouteSpec } from '../route.js';

const TAG = 'Audit log';
const MAX_LIMIT = 200;

const time = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 time, e.g. 2026-11-28T20:00:00Z')
  .transform((s) => Date.parse(s));

const filters = {
  resource: z.enum(AUDIT_RESOURCES).optional().meta({ description: 'only entries about this kind of record' }),
  actor: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: 'only entries of this actor: api-secret:<8 hex>, admin, cli or system' }),
  from: time.optional().meta({ description: 'ISO 8601, inclusive' }),
  to: time.optional().meta({ description: 'ISO 8601, exclusive' }),
};
const fromBeforeTo = (q: { from?: number; to?: number }) => q.from === undefined || q.to === undefined || q.from < q.to;

const listQuery = z
  .object(filters)
  .extend({
    cursor: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: "the previous page's `next`" }),
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  })
  .refine(fromBeforeTo, { message: 'from must be before to', path: ['from'] });

const exportQuery = z.object(filters).refine(fromBeforeTo, { message: 'from must be before to', path: ['from'] });

const verifyQuery = z
  .object({
    seq: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'a logged head: its seq (with mac)' }),
    mac: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex digits')
      .optional()
      .meta({ description: 'a logged head: its mac (with seq)' }),
  })
  .refine((q) => (q.seq === undefined) === (q.mac === undefined), { message: 'give seq and mac together (a head logged earlier), or neither', path: ['seq'] });

const changeOut = z.object({ from: z.unknown().optional(), to: z.unknown().optional() });
const entryOut = z.object({
  seq: z.number().int(),
  accountId: z.string(),
  at: z.string(),
  actor: z.string(),
  address: z.string().nullable(),
  requestId: z.string().nullable(),
  action: z.enum(AUDIT_ACTIONS),
  resource: z.enum(AUDIT_RESOURCES),
  resourceId: z.string(),
  changes: z.record(z.string(), changeOut).meta({ description: 'field → {from, to}; secret values are "***" (or "changed" for a new one), never the value' }),
  mac: z.string(),
});
const headOut = z.object({ seq: z.number().int(), mac: z.string() }).nullable();
const verifyOut = z.object({
  ok: z.boolean(),
  entries: z.number().int().meta({ description: 'entries walked' }),
  first: z.number().int().nullable().optional(),
  last: z.number().int().nullable().optional(),
  logged: z.enum(['matched', 'pruned']).optional().meta({ description: "with seq and mac: the chain holds that link, or retention removed it" }),
  broken: z
    .object({ seq: z.number().int(), problem: z.enum(['missing', 'edited', 'out_of_order', 'unsealed']), detail: z.string() })
    .optional()
    .meta({ description: 'the first broken link (ok false)' }),
  head: headOut,
  anchor: headOut.meta({ description: 'the last entry retention removed: the chain verifies from it' }),
});

/** The client of an export went away: the export stops. */
class ClientGone extends Error {}

/** Writes a line, waiting for the socket to drain when its buffer is full; ClientGone once the response is closed. */
async function writeLine(res: Response, text: string): Promise<void> {
  if (res.destroyed) throw new ClientGone('the client went away');
  if (res.write(`${text}\n`)) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (gone: boolean) => () => {
      res.off('drain', drained);
      res.off('close', closed);
      if (gone) reject(new ClientGone('the client went away'));
      else resolve();
    };
    const drained = settle(false);
    const closed = settle(true);
    res.once('drain', drained);
    res.once('close', closed);
  });
}

export function auditRoutes(audit: AuditLog): RouteSpec[] {
  const on = () => {
    if (!audit.enabled) throw new ApiError(404, 'Not found: the audit log is off (set audit.key; docs/operations.md#audit-log)');
  };
  return [
    route({
      method: 'get',
      path: '/api/audit',
      summary: "Streamgate: the account's audit log of management changes, newest first (filters: resource, actor, time range; next is the cursor of the next page)",
      tag: TAG,
      auth: 'apiSecret',
      query: listQuery,
      response: z.object({ entries: z.array(entryOut), next: z.number().int().nullable() }),
      handler: async ({ account, query }) => {
        on();
        return audit.list(account.id, { resource: query.resource, actor: query.actor, from: query.from, to: query.to, cursor: query.cursor, limit: query.limit });
      },
    }),
    route({
      method: 'get',
      path: '/api/audit/export',
      summary: "Streamgate: the account's whole audit log (or what the filters select) as JSON Lines, oldest first",
      tag: TAG,
      auth: 'apiSecret',
      query: exportQuery,
      answer: 'JSON Lines (application/x-ndjson): one entry per line, oldest first',
      handler: async ({ account, query, res }) => {
        on();
        res.status(200).type('application/x-ndjson');
        try {
          await audit.export(account.id, { resource: query.resource, actor: query.actor, from: query.from, to: query.to }, (line) => writeLine(res, line));
        } catch (e) {
          if (e instanceof ClientGone) return undefined;
          throw e;
        }
        res.end();
        return undefined;
      },
    }),
    route({
      method: 'get',
      path: '/api/audit/verify',
      summary: "Streamgate: verifies the account's audit chain: ok, or the first broken link (missing, edited, out_of_order, unsealed); seq and mac hold it to a logged head",
      tag: TAG,
      auth: 'apiSecret',
      query: verifyQuery,
      response: verifyOut,
      handler: async ({ account, query }) => {
        on();
        return audit.verify(account.id, query.seq !== undefined && query.mac !== undefined ? { seq: query.seq, mac: query.mac } : undefined);
      },
    }),
  ];
}
