// A backend of two aggregates, MarkStore and MetaStore, with the lifecycle members, held in memory
// and written in plain JavaScript, as a package outside the repository would write it. Each call
// runs to its end before its promise exists, so concurrent calls never interleave.
// test/contract/outside-backend.test.ts copies it into such a package and runs the suite on it.
export class MemoryStore {
  kind = 'memory';
  inProcess = true;

  /** @param {() => number} now the store's clock */
  constructor(now = Date.now) {
    this.now = now;
    this.marks = new Map();
    this.meta = new Map();
  }

  async ping() {}

  async close() {}

  /** Whether a mark held until `until` (ms) is alive now. */
  alive(until) {
    return this.now() < until;
  }

  held(accountId, name) {
    const key = `${accountId}\u0000${name}`;
    const mark = this.marks.get(key);
    if (mark && !this.alive(mark.until)) this.marks.delete(key);
    return this.marks.get(key) ?? null;
  }

  async swapMark(accountId, name, value, ttlMs, when = 'always') {
    const held = this.held(accountId, name);
    if ((when === 'absent' && held) || (when === 'present' && !held)) return held?.value ?? null;
    this.marks.set(`${accountId}\u0000${name}`, { value, until: this.now() + ttlMs });
    return held?.value ?? null;
  }

  async takeMark(accountId, name, value) {
    if (this.held(accountId, name)?.value !== value) return false;
    this.marks.delete(`${accountId}\u0000${name}`);
    return true;
  }

  async getMeta(key) {
    return this.meta.get(key) ?? null;
  }

  async setMeta(key, value, onlyIfAbsent = false) {
    if (onlyIfAbsent && this.meta.has(key)) return false;
    this.meta.set(key, value);
    return true;
  }
}

/** The same backend with one fault: a mark still lives at the instant its time runs out. */
export class LateExpiryStore extends MemoryStore {
  alive(until) {
    return this.now() <= until;
  }
}
