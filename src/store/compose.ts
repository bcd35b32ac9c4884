// A backend is its aggregates put together (docs/architecture.md#the-store-contract): each aggregate is an
// object of its own (one file per aggregate and backend) over the connection they share, and the
// backend's Store object carries every aggregate's methods, bound to the aggregate. A class that
// calls composeAggregates in its constructor declares the methods it gains by an interface of the
// same name (declaration merging), so that callers keep one object with every Store method.

/** The names of an object's methods along its prototype chain (its class's, not Object's). */
function methodNames(part: object): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(part); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue;
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (d && typeof d.value === 'function' && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/**
 * Puts every method of each part on `target`, bound to its part. A part's helpers are `#private`
 * methods, which no prototype lists, so only its aggregate's methods are copied. A method that two
 * parts (or the part and the target) both define is a mistake in the backend: it throws.
 */
export function composeAggregates(target: object, parts: readonly object[]): void {
  const owner = new Map<string, string>();
  for (const part of parts) {
    for (const name of methodNames(part)) {
      if (owner.has(name) || name in target) {
        throw new Error(`store aggregates: ${name} is defined by ${owner.get(name) ?? target.constructor.name} and by ${part.constructor.name}`);
      }
      owner.set(name, part.constructor.name);
      const fn = (part as Record<string, (...args: unknown[]) => unknown>)[name];
      Object.defineProperty(target, name, { value: fn.bind(part), enumerable: false, writable: true, configurable: true });
    }
  }
}
