// The stream patterns of an account's securing tokens, compiled incrementally and off the decision
// path: patterns are packed into chunks of bounded cost (one RE2 alternation each); a change
// recompiles only the chunks it touches, one chunk per event-loop turn, and never blocks a decision.
import RE2 from 're2';
import { compileStreamPattern, patternCost } from '../domain/matchers.js';
import { copyWith } from '../domain/objects.js';

/**
 * The most patternCost one chunk holds: at the worst compile rate measured for accepted patterns a
 * chunk compiles in a few milliseconds, one slice of work between other requests
 * (docs/api.md#how-the-token-less-decision-stays-bounded; the rate in docs/api.md#pattern-cost).
 */
export const CHUNK_COST = 20_000;
/** The most new patterns a change may bring to be compiled on the spot (a token's list). */
const SMALL_CHANGE = 100;
/** How long one turn of background work may run before letting other requests in. */
const SLICE_MS = 4;

interface Chunk {
  members: string[];
  cost: number;
  test: (name: string) => boolean;
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function compileChunk(members: string[]): (name: string) => boolean {
  try {
    const re = new RE2(`^(?:${members.map((p) => `(?:${p})`).join('|')})$`, 'u');
    return (name) => re.test(name);
  } catch {
    // Patterns valid alone can fail together (a group name used twice): one matcher each. A
    // pattern that does not compile at all secures every name (fail closed).
    const each = members.map((p) => {
      try {
        const re = compileStreamPattern(p);
        return (name: string) => re.test(name);
      } catch {
        return () => true;
      }
    });
    return (name) => each.some((t) => t(name));
  }
}

export class SecuringPatterns {
  /** Bumped whenever the wanted set changes; the compiled chunks answer for `done`. */
  private gen = 0;
  private done = 0;
  private wanted = new Set<string>();
  private chunks: Chunk[] = [];
  private running = false;
  private readonly costs = new Map<string, number>();
  /** Chunks compiled so far (what a change cost). */
  compiles = 0;

  /** How many patterns are wanted (what the cache weighs the account by). */
  get size(): number {
    return this.wanted.size;
  }

  get chunkCount(): number {
    return this.chunks.length;
  }

  /**
   * Asks for exactly these patterns. Returns the generation that answers for them: ready at once
   * when nothing changed, else after a rebuild in the background (a newer want supersedes it).
   */
  want(patterns: Iterable<string>): number {
    const next = new Set(patterns);
    if (next.size === this.wanted.size && [...next].every((p) => this.wanted.has(p))) return this.gen;
    this.wanted = next;
    this.gen++;
    if (!this.running && !this.compileNow(this.gen)) void this.run();
    return this.gen;
  }

  isReady(gen: number): boolean {
    return this.done === gen;
  }

  /** Whether a pattern matches the whole name; meaningful only while isReady(gen) holds. */
  matches(name: string): boolean {
    for (const c of this.chunks) if (c.test(name)) return true;
    return false;
  }

  private cost(p: string): number {
    let c = this.costs.get(p);
    if (c === undefined) {
      c = patternCost(p);
      this.costs.set(p, c);
    }
    return c;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.done !== this.gen) await this.rebuild(this.gen);
    } finally {
      this.running = false;
    }
  }

  /** Every well-filled chunk whose members are all still wanted is kept; the rest is packed anew. */
  private plan(wanted: Set<string>): { kept: Chunk[]; pool: string[] } {
    const kept = this.chunks.filter((c) => c.cost >= CHUNK_COST / 2 && c.members.every((p) => wanted.has(p)));
    const placed = new Set(kept.flatMap((c) => c.members));
    return { kept, pool: [...wanted].filter((p) => !placed.has(p)).sort() };
  }

  /**
   * A small change (one chunk's worth, a token's patterns at most) is compiled at once: a bounded
   * slice of work, and the decision that asked answers exactly instead of failing closed.
   */
  private compileNow(gen: number): boolean {
    const { kept, pool } = this.plan(this.wanted);
    if (pool.length > SMALL_CHANGE) return false;
    let cost = 0;
    for (const p of pool) {
      cost += this.cost(p);
      if (cost > CHUNK_COST) return false;
    }
    if (pool.length > 0) this.compiles++;
    this.finish(gen, kept, pool.length > 0 ? [{ members: pool, cost, test: compileChunk(pool) }] : []);
    return true;
  }

  private finish(gen: number, kept: Chunk[], fresh: Chunk[]): void {
    this.chunks = [...kept, ...fresh];
    for (const p of this.costs.keys()) if (!this.wanted.has(p)) this.costs.delete(p);
    this.done = gen;
  }

  private async rebuild(gen: number): Promise<void> {
    const { kept, pool } = this.plan(this.wanted);
    const groups: Array<{ members: string[]; cost: number }> = [];
    let open = { members: [] as string[], cost: 0 };
    let slice = performance.now();
    for (const p of pool) {
      // Costing a pattern is a parse: a few milliseconds of them at a time between other requests.
      if (performance.now() - slice > SLICE_MS) {
        await yieldTurn();
        if (this.gen !== gen) return;
        slice = performance.now();
      }
      const c = this.cost(p);
      if (open.members.length > 0 && open.cost + c > CHUNK_COST) {
        groups.push(open);
        open = { members: [], cost: 0 };
      }
      open.members.push(p);
      open.cost += c;
    }
    if (open.members.length > 0) groups.push(open);
    const fresh: Chunk[] = [];
    for (const g of groups) {
      await yieldTurn();
      if (this.gen !== gen) return; // superseded: the newer set rebuilds from the last finished one
      this.compiles++;
      fresh.push(copyWith(g, { test: compileChunk(g.members) }));
    }
    await yieldTurn();
    if (this.gen !== gen) return;
    this.finish(gen, kept, fresh);
  }
}
