// Copies of objects with some fields set: what `{ ...base, field: value }` means, written so that
// Node 20's V8 (11.3) keeps it on its fast path. An object made by a leading spread and then given
// a property its source lacks (in the same literal, by a second spread, or assigned afterwards)
// takes a slow path there (V8 issue 11536): measured ~40x slower to make than a literal, and such
// objects survive young-generation collections, so the pauses grow with the request rate.
// docs/performance.md#object-copies-and-checkpoints has the measurements; the Biome rule
// lint/object-copies.grit keeps src/ free of the form.

/** `base` copied with `fields` set over it (own enumerable properties, as a spread copies). */
export function copyWith<T extends object, const U extends object>(base: T, fields: U): Omit<T, keyof U> & U {
  return Object.assign({}, base, fields) as Omit<T, keyof U> & U;
}
