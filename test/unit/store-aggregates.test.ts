// The store is split by what it stores (docs/architecture.md#the-store-contract): no interface under
// src/store holds more than MAX_METHODS methods, and a backend is its aggregates put together by
// composeAggregates, which copies each aggregate's methods and refuses two that share a name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { composeAggregates } from '../../src/store/compose.js';

const MAX_METHODS = 15;
const STORE_DIR = path.resolve('src/store');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/**
 * Every exported interface of a file, with the number of methods it declares: members at the
 * interface's own depth written `name(`, `name?(`, `name<T>(` or `name: (` (a function-typed
 * property). Comments and string contents are skipped.
 */
function interfaces(file: string): Array<{ name: string; methods: number }> {
  return interfacesIn(readFileSync(file, 'utf8'));
}

function interfacesIn(source: string): Array<{ name: string; methods: number }> {
  const text = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, "''");
  const out: Array<{ name: string; methods: number }> = [];
  const head = /export interface (\w+)[^{]*\{/g;
  for (let m = head.exec(text); m !== null; m = head.exec(text)) {
    let depth = 1;
    let i = head.lastIndex;
    let member = '';
    let methods = 0;
    for (; i < text.length && depth > 0; i++) {
      const ch = text[i];
      if (ch === '{' || ch === '(' || ch === '[') depth++;
      else if (ch === '}' || ch === ')' || ch === ']') depth--;
      if (depth === 1 && (ch === ';' || ch === '\n')) {
        // a member ends at the interface's own depth; its first line says whether it is a method
        if (/^\s*(readonly\s+)?\w+\??\s*(<[^>]*>)?\s*(:\s*)?\(/.test(member)) methods++;
        member = '';
      } else if (depth >= 1) member += ch;
    }
    out.push({ name: m[1], methods });
  }
  return out;
}

describe('the store split by aggregate', () => {
  it(`no exported interface under src/store declares more than ${MAX_METHODS} methods`, () => {
    const all = files(STORE_DIR).flatMap((f) => interfaces(f).map((i) => ({ ...i, file: path.relative(STORE_DIR, f) })));
    const aggregates = all.filter((i) => i.name.endsWith('Store') && i.methods > 0).map((i) => i.name).sort();
    assert.deepEqual(aggregates, [
      'AccountStore',
      'AuditStore',
      'BindStore',
      'IssuerStore',
      'LiveStreamStore',
      'MarkStore',
      'MetaStore',
      'RecordingStore',
      'SessionStore',
      'SharingStore',
      'TokenStore',
      'UsageStore',
      'WebhookStore',
    ]);
    const over = all.filter((i) => i.methods > MAX_METHODS);
    assert.deepEqual(over, [], `interfaces over ${MAX_METHODS} methods: ${JSON.stringify(over)}`);
  });

  it('the counter sees method signatures and function-typed properties, and not data members, so a large interface is caught', () => {
    const methods = Array.from({ length: 14 }, (_, i) => `  m${i}(a: string, b: { x: number; y: number }): Promise<void>;`).join('\n');
    const source = `// a comment with name(: not a member
export interface Big {
  /** a doc comment: fn(x) */
${methods}
  optional?(x: number): void;
  generic<T>(x: T): T;
  handler: (x: number) => void;
  readonly kind: 'a' | 'b';
  nested: { inner(): void };
}
interface NotExported {
  f(): void;
}`;
    assert.deepEqual(interfacesIn(source), [{ name: 'Big', methods: 17 }]);
    assert.equal(interfaces(path.join(STORE_DIR, 'accounts.ts')).find((i) => i.name === 'AccountStore')?.methods, 9);
  });
});

describe('composeAggregates', () => {
  class Counter {
    n = 0;
    add(k: number): number {
      this.n += k;
      return this.#twice();
    }
    #twice(): number {
      return this.n * 2;
    }
  }
  class Names {
    name(): string {
      return 'names';
    }
  }

  it("copies each part's methods bound to the part, and not its #private helpers", () => {
    const target = {} as { add(k: number): number; name(): string };
    const counter = new Counter();
    composeAggregates(target, [counter, new Names()]);
    const { add } = target;
    assert.equal(add(2), 4);
    assert.equal(counter.n, 2);
    assert.equal(target.name(), 'names');
    assert.deepEqual(Object.getOwnPropertyNames(target).sort(), ['add', 'name']);
    assert.deepEqual(Object.keys(target), [], 'not enumerable: a store serialised or spread shows no methods');
  });

  it('refuses two parts that define the same method, naming both', () => {
    class Other {
      add(): number {
        return 0;
      }
    }
    assert.throws(() => composeAggregates({}, [new Counter(), new Other()]), { message: 'store aggregates: add is defined by Counter and by Other' });
  });

  it('refuses a part whose method the target already has', () => {
    class Host {
      name(): string {
        return 'host';
      }
    }
    assert.throws(() => composeAggregates(new Host(), [new Names()]), { message: 'store aggregates: name is defined by Host and by Names' });
  });
});
