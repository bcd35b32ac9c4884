// Bodies as the hosted platform's clients send them, made ready for the strict request schemas:
// - a field the schema does not know (neither the hosted API's nor one of Streamgate's extensions)
//   is left out and named, so a client of a newer hosted API version still works (docs/compatibility.md);
//   with `api.unknownFields: reject` it stays, and the strict schema answers 400 naming it;
// - `null` in an optional field that gives null no meaning of its own is "not given" (the clients
//   serialise every unset field as null). Fields whose schema accepts null keep it (null clears).
// The walk follows the zod schema (objects, arrays, unions, optional/nullable/default wrappers), so
// nested entries such as `streams[0]` get the same treatment. Nothing here validates: the schema does.
import type { z } from 'zod';
import { fieldPath } from './validation.js';

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
};

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under optional/nullable/default/pipe wrappers. */
function core(s: z.ZodType): z.ZodType {
  for (;;) {
    const d = defOf(s);
    if ((d.type === 'optional' || d.type === 'nullable' || d.type === 'default' || d.type === 'readonly') && d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in) s = d.in;
    else return s;
  }
}

/** Whether the field may be left out, and whether null is a value of its own there. */
function nullability(s: z.ZodType): { optional: boolean; nullable: boolean } {
  let optional = false;
  let nullable = false;
  for (;;) {
    const d = defOf(s);
    if (d.type === 'optional' || d.type === 'default') optional = true;
    else if (d.type === 'nullable') nullable = true;
    else if (d.type !== 'readonly' && d.type !== 'pipe') return { optional, nullable };
    s = (d.type === 'pipe' ? d.in : d.innerType) as z.ZodType;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

export interface PreparedBody {
  value: unknown;
  /** Paths of the fields left out as unknown (`streams[0].foo`), in body order. */
  ignored: string[];
}

/** A copy of `value` ready for `schema` (the input is not changed). */
export function prepareBody(schema: z.ZodType, value: unknown, dropUnknown: boolean): PreparedBody {
  const ignored: string[] = [];
  const walk = (s: z.ZodType, v: unknown, path: PropertyKey[]): unknown => {
    const c = core(s);
    const d = defOf(c);
    if (d.type === 'object' && d.shape && isPlainObject(v)) {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const [k, fv] of Object.entries(v)) {
        const field = Object.hasOwn(d.shape, k) ? d.shape[k] : undefined;
        if (!field) {
          if (dropUnknown) ignored.push(fieldPath([...path, k], 'body'));
          else out[k] = fv;
          continue;
        }
        if (fv === null) {
          const n = nullability(field);
          if (n.optional && !n.nullable) continue;
        }
        out[k] = walk(field, fv, [...path, k]);
      }
      // A plain object again: the schemas' output must not carry a null prototype into records.
      return { ...out };
    }
    if (d.type === 'array' && d.element && Array.isArray(v)) return v.map((x, i) => walk(d.element!, x, [...path, i]));
    if (d.type === 'union' && d.options && isPlainObject(v)) {
      const obj = d.options.find((o) => defOf(core(o)).type === 'object');
      return obj ? walk(obj, v, path) : v;
    }
    return v;
  };
  const out = walk(schema, value, []);
  return { value: out, ignored };
}

const MAX_NAMED = 20;

/**
 * The x-streamgate-ignored-fields header value: the first 20 names, comma-separated, characters a
 * header cannot carry (and the comma itself) percent-encoded as UTF-8.
 */
export function ignoredFieldsHeader(ignored: string[]): string {
  const enc = (name: string) =>
    name.slice(0, 128).replace(/[^\x21-\x7e]|[,%]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
  const named = ignored.slice(0, MAX_NAMED).map(enc).join(', ');
  return ignored.length > MAX_NAMED ? `${named}, ...(+${ignored.length - MAX_NAMED} more)` : named;
}
