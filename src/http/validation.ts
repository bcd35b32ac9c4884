// Turns zod issues into the contract's field-error map: {"streams[0].streamName": ["..."]}.
import type { z } from 'zod';
import { ApiError, type FieldErrors } from '../errors.js';

export function fieldPath(path: ReadonlyArray<PropertyKey>, root: string): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? root : out;
}

export function issuesToFieldErrors(issues: ReadonlyArray<z.core.$ZodIssue>, root: string): FieldErrors {
  // Null prototype: a field named __proto__ must be reported, not assigned to the prototype.
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  const add = (k: string, m: string) => {
    errors[k] ??= [];
    const list = errors[k];
    if (!list.includes(m)) list.push(m);
  };
  for (const i of issues) {
    if (i.code === 'unrecognized_keys') {
      for (const k of i.keys) add(fieldPath([...i.path, k], root), 'unknown field');
    } else if (i.code === 'invalid_union' && i.path.length > 0) {
      add(fieldPath(i.path, root), 'expected a stream name or a {streamName, isRegex} entry');
    } else {
      add(fieldPath(i.path, root), i.message);
    }
  }
  return errors;
}

/** Parses `value` or throws a 400 listing every problem. `root` names the whole value (body, query). */
export function parseOr400<T extends z.ZodType>(schema: T, value: unknown, root: string): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.validation(issuesToFieldErrors(r.error.issues, root));
  return r.data;
}

/**
 * `parseOr400` for schemas whose checks may run asynchronously (stream patterns compiled on worker
 * threads). A check that cannot run (an ApiError such as a 503) is thrown as it is.
 */
export async function parseOr400Async<T extends z.ZodType>(schema: T, value: unknown, root: string): Promise<z.output<T>> {
  const r = await schema.safeParseAsync(value);
  if (!r.success) throw ApiError.validation(issuesToFieldErrors(r.error.issues, root));
  return r.data;
}
