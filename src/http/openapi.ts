// Generates the OpenAPI 3.1 document from the route table of every surface (src/http/surfaces.ts):
// the schemas that validate requests are the schemas that document them.
import { z } from 'zod';
import type { DocRoute } from './surfaces.js';

export type { DocRoute } from './surfaces.js';

const jsonSchema = (s: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;

const stripMeta = (s: Record<string, unknown>) => {
  const { $schema: _s, ...rest } = s;
  return rest;
};

function parameters(r: DocRoute): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!schema) continue;
    const js = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, s] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: s });
    }
  }
  return out;
}

const responseHeaders = (headers: NonNullable<DocRoute['responseHeaders']>) =>
  Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { description: h.description, schema: { type: h.type } }]));

const failResponse = {
  description: 'Client error',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          status: { const: 'fail' },
          data: {
            type: 'object',
            properties: {
              message: { type: 'string' },
              errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
    },
  },
};

export function openApiDocument(routes: DocRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method}${p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: parameters(r),
      responses: {
        [String(r.status ?? 200)]: r.answer ? { description: r.answer } : {
          description: 'Success',
          ...(r.responseHeaders ? { headers: responseHeaders(r.responseHeaders) } : {}),
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['status', 'data'],
                properties: { status: { const: 'success' }, data: r.response ? stripMeta(jsonSchema(r.response, 'output')) : {} },
              },
            },
          },
        },
        '400': failResponse,
        '401': failResponse,
        '404': failResponse,
      },
    };
    const scheme = { admin: 'AdminKey', apiSecret: 'ApiSecret', hookSecret: 'HookSecret', streamToken: 'StreamToken', none: '' }[r.auth];
    if (scheme) op.security = [{ [scheme]: [] }];
    if (r.body) {
      op.requestBody = {
        required: true,
        content: { [r.bodyType ?? 'application/json']: { schema: stripMeta(jsonSchema(r.body, 'input')) } },
      };
    } else if (r.bodyType) {
      op.requestBody = { required: true, content: { [r.bodyType]: {} } };
    }
    paths[p] ??= {};
    paths[p][r.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Streamgate',
      version,
      description: 'Publish/subscribe token management compatible with the hosted real-time streaming token API.',
    },
    components: {
      securitySchemes: {
        ApiSecret: { type: 'http', scheme: 'bearer', description: 'the account API secret' },
        AdminKey: { type: 'http', scheme: 'bearer', description: 'STREAMGATE_ADMIN_KEY' },
        HookSecret: { type: 'apiKey', in: 'header', name: 'x-streamgate-hook-secret', description: 'hooks.secret (also ?secret=), when configured' },
        StreamToken: { type: 'http', scheme: 'bearer', description: 'a publish/subscribe token or a self-signed subscribe JWT' },
      },
    },
    paths,
  };
}
