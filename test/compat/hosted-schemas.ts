// Validators for the hosted platform's response schemas (test/compat/hosted-api-schemas.json, a
// copy of its OpenAPI 3.0 paths and component schemas; SuccessAccountGeoCascade, for
// /api/account/geo_cascade, comes from the hosted Account API's own OpenAPI 3.1 file, written in
// 3.0's terms, and its `description` says where): OpenAPI's `nullable: true` becomes JSON
// Schema's null type, every object keeps `additionalProperties: false`, and Streamgate's own fields
// are admitted only through STREAMGATE_EXTENSIONS below, each with its type. Any other field a
// response carries beyond the hosted schema fails validation.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

type Schema = Record<string, unknown>;

interface HostedDoc {
  source: string;
  paths: Record<string, Record<string, { responses: { '200': { content: { 'application/json': { schema: Schema } } } } }>>;
  components: { schemas: Record<string, Schema> };
}

export const hosted: HostedDoc = JSON.parse(readFileSync(new URL('./hosted-api-schemas.json', import.meta.url), 'utf8'));

const isoDateTime = { type: 'string', format: 'date-time' };

/**
 * Streamgate's fields beyond the hosted schemas, per component schema: the only extra fields a
 * response may carry (docs/compatibility.md, README):
 * - `updatedOn`: when the token last changed;
 * - `boundIpAddresses`: the addresses a `bindIpsOnUsage` token has bound so far;
 * - `maxConcurrentSessions`, `maxUses`: a token's session limits, when set;
 * - `filter`: a webhook's stream-name pattern (the hosted platform has it in its docs, not its schema).
 */
const LIMITS = { maxConcurrentSessions: { type: 'integer' }, maxUses: { type: 'integer' } };

export const STREAMGATE_EXTENSIONS: Record<string, Record<string, Schema>> = {
  PublishTokenResponseV1: { updatedOn: isoDateTime, boundIpAddresses: { type: 'array', items: { type: 'string' } }, ...LIMITS },
  PublishTokenResponseV2: { updatedOn: isoDateTime, boundIpAddresses: { type: 'array', items: { type: 'string' } }, ...LIMITS },
  SubscribeTokenResponseV1: { updatedOn: isoDateTime, boundIpAddresses: { type: 'array', items: { type: 'string' } }, ...LIMITS },
  SubscribeTokenResponseV2: { updatedOn: isoDateTime, boundIpAddresses: { type: 'array', items: { type: 'string' } }, ...LIMITS },
  WebhookModel: { filter: { type: 'string' } },
};

/**
 * Records as Streamgate answers them (docs/compatibility.md#records): a field that is set is
 * present, an unset one is left out, and no field is ever null, although the hosted schemas mark
 * several nullable and require none (the official Python client warns on a null in a field its
 * model does not declare Optional). Per schema, the fields that may be left out, because they are
 * unset on some records; every other field is required.
 */
const PUBLISH_LEFT_OUT = ['expiresOn', 'bindIpsOnUsage', 'srtPassphrase', 'geoCascade', 'restream', 'adminSettings', 'priority'];
const SUBSCRIBE_LEFT_OUT = ['expiresOn', 'bindIpsOnUsage', 'tracking', 'adminSettings'];
export const RECORDS: Record<string, string[]> = {
  PublishTokenResponseV1: PUBLISH_LEFT_OUT,
  PublishTokenResponseV2: PUBLISH_LEFT_OUT,
  SubscribeTokenResponseV1: SUBSCRIBE_LEFT_OUT,
  SubscribeTokenResponseV2: SUBSCRIBE_LEFT_OUT,
  TokenEffectiveSettings: ['geoCascade'],
  GeoCascadeModel2: [],
  RestreamModel2: ['label'],
  TrackingInformation: [],
  WebhookModel: ['disabled'],
  DisabledInfoModel: ['until'],
};

/** A property schema that also refuses null. */
const nonNull = (s: unknown): Schema => ({ allOf: [s, { not: { type: 'null' } }] });

const REF = '#/components/schemas/';

/** OpenAPI 3.0 schema → JSON Schema (draft-07 as ajv reads it). */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const src = node as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === 'nullable' || k === 'deprecated') continue; // nullable is rewritten below; deprecated is a note
    if (k === '$ref' && typeof v === 'string') out.$ref = v.startsWith(REF) ? `#/definitions/${v.slice(REF.length)}` : v;
    else if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, toJsonSchema(s)]));
    else if (k === 'enum' || k === 'required') out[k] = v;
    else out[k] = toJsonSchema(v);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  if (src.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

function definitions(): Record<string, Schema> {
  const defs: Record<string, Schema> = {};
  for (const [name, s] of Object.entries(hosted.components.schemas)) {
    const d = toJsonSchema(s) as Schema;
    const props = d.properties as Schema | undefined;
    const leftOut = RECORDS[name];
    if (leftOut && props) {
      for (const field of leftOut) if (!(field in props)) throw new Error(`${name}.${field} is not in the hosted schema`);
      d.required = Object.keys(props).filter((p) => !leftOut.includes(p));
      d.properties = Object.fromEntries(Object.entries(props).map(([p, ps]) => [p, nonNull(ps)]));
    }
    const ext = STREAMGATE_EXTENSIONS[name];
    if (ext && props) {
      for (const field of Object.keys(ext)) {
        if (field in props) throw new Error(`${name}.${field} is in the hosted schema: it is no extension`);
      }
      d.properties = { ...(d.properties as Schema), ...ext };
    }
    defs[name] = d;
  }
  return defs;
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', {
  type: 'string',
  validate: (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
});
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
ajv.addFormat('decimal', { type: 'number', validate: (n: number) => Number.isFinite(n) });
ajv.addSchema({ $id: 'hosted', definitions: definitions() });

/** The hosted 200 response schema of `method path` (path as in the hosted document: `/api/publish_token/{tokenId}`). */
export function responseValidator(method: string, path: string): ValidateFunction {
  const op = hosted.paths[path]?.[method];
  if (!op) throw new Error(`no hosted response schema for ${method.toUpperCase()} ${path}`);
  let schema = toJsonSchema(op.responses['200'].content['application/json'].schema) as Schema;
  // The hosted document declares the webhook test's answer as a bare boolean; its clients unwrap
  // `data` from every answer (the Python client's BaseResponse, the Node client's response.data),
  // so the envelope around it is what they read.
  if (schema.type === 'boolean') schema = { $ref: '#/definitions/SuccessResponseBoolean' };
  // Refs point into the shared definitions.
  return ajv.compile(rebase(schema));
}

/** `#/definitions/X` → `hosted#/definitions/X`, so a response schema compiled alone finds them. */
function rebase(s: unknown): any {
  if (Array.isArray(s)) return s.map(rebase);
  if (typeof s !== 'object' || s === null) return s;
  return Object.fromEntries(
    Object.entries(s).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/definitions/') ? `hosted${v}` : rebase(v)]),
  );
}

/** ajv's errors as one line each: where, what, and the offending property or value. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const extra = e.params && 'additionalProperty' in e.params ? ` '${String(e.params.additionalProperty)}'` : '';
    return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
  });
}
