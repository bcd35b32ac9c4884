// Copies of objects with some fields set: what `{ ...base, field: value }` means, written so that
// Node 20's V8 (11.3) keeps it on its fast path. An object made by a leading spread and then given
// a property its source lacks (in the same literal, by a second spread, or assigned afterwards)
// takes a slow path there: far slower to make than a literal, and such objects survive
// young-generation collections, so the pauses grow with the request rate.
// docs/decision-path.md#object-copies-and-checkpoints has the measurements; the Biome rule
// lint/object-copies.grit keeps src/ free of the form.

const hasOwn = Object.prototype.hasOwnProperty;
const isEnumerable = Object.prototype.propertyIsEnumerable;

/** What a spread does, key by key: own enumerable keys defined as fields (never through a setter such as __proto__'s). */
function defineAll(out: object, src: object): void {
  for (const k of Reflect.ownKeys(src)) {
    if (isEnumerable.call(src, k)) Object.defineProperty(out, k, { value: (src as Record<PropertyKey, unknown>)[k], enumerable: true, writable: true, configurable: true });
  }
}

/**
 * `base` copied with `fields` set over it (own enumerable properties, as a spread copies). An own
 * `__proto__` key (JSON.parse makes one from a body that names it) would make Object.assign set the
 * copy's prototype instead of copying a field; such a copy is made key by key instead, so every
 * key stays an own field as with `{ ...base, ...fields }`.
 */
export function copyWith<T extends object, const U extends object>(base: T, fields: U): Omit<T, keyof U> & U {
  if (hasOwn.call(base, '__proto__') || hasOwn.call(fields, '__proto__')) {
    const out = {};
    defineAll(out, base);
    defineAll(out, fields);
    return out as Omit<T, keyof U> & U;
  }
  return Object.assign({}, base, fields) as Omit<T, keyof U> & U;
}
