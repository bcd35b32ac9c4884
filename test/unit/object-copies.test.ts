// src/ never writes an object literal that starts with a spread and goes on with more members
// (`{ ...base, field }`, `{ ...a, ...b }`): on Node 20's V8 such objects are made on a slow path and
// survive young-generation collections (src/domain/objects.ts, docs/decision-path.md#object-copies-and-checkpoints).
// The store contract's tests in src/store-contract, which never run in the service, are left out.
// The rule is a Biome plugin (lint/object-copies.grit), run by `npm run lint` and by CI; these tests
// show that it finds the form however it is laid out, passes the others, and finds none in src/.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyWith } from '../../src/domain/objects.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIOME = path.join(ROOT, 'node_modules', '.bin', 'biome');

interface Finding {
  category: string;
  location: { path: string; start: { line: number } };
}

/** The plugin's findings (only the plugin runs) in `paths`, linted from `cwd` with a configuration at `config`. */
function findings(config: string, cwd: string, paths: string[]): Finding[] {
  const r = spawnSync(BIOME, ['lint', '--config-path', config, '--reporter=json', '--max-diagnostics=none', ...paths], { cwd, encoding: 'utf8' });
  const report = JSON.parse(r.stdout) as { diagnostics: Finding[] };
  return report.diagnostics.filter((d) => d.category === 'plugin');
}

function pluginOnlyConfig(dir: string): string {
  const file = path.join(dir, 'biome.json');
  writeFileSync(file, JSON.stringify({ plugins: [path.join(ROOT, 'lint', 'object-copies.grit')], linter: { enabled: true, rules: { preset: 'none' } } }));
  return file;
}

describe('object copies', () => {
  it('the lint rule finds the form however it is laid out, and passes the others', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-object-copies-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      const lines = [
        'export const bad1 = (b: object) => ({ ...b, c: 1 });',
        'export const bad2 = (b: object, c: object) => ({ ...b, ...c });',
        'export const bad3 = (b: object, c: number) => ({',
        '  ...b,',
        '  c,',
        '});',
        'export const fine1 = (b: object) => ({ ...b });',
        'export const fine2 = (b: object) => ({ c: 1, ...b });',
        'export const fine3 = ({ c, ...rest }: { c: number; d: number }) => [c, rest];',
        'export const fine4 = (b: object) => Object.assign({}, b, { c: 1 });',
      ];
      writeFileSync(path.join(dir, 'src', 'sample.ts'), `${lines.join('\n')}\n`);
      // the store contract's tests (they run under node:test, never in the service) may write it
      mkdirSync(path.join(dir, 'src', 'store-contract'));
      writeFileSync(path.join(dir, 'src', 'store-contract', 'sample.ts'), `${lines.join('\n')}\n`);
      const found = findings(pluginOnlyConfig(dir), dir, ['src']).map((f) => `${f.location.path}:${f.location.start.line}`);
      assert.deepEqual(found.sort(), ['src/sample.ts:1', 'src/sample.ts:2', 'src/sample.ts:3']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/ has none', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-object-copies-'));
    try {
      const found = findings(pluginOnlyConfig(dir), ROOT, [path.join(ROOT, 'src')]).map((f) => `${path.relative(ROOT, f.location.path)}:${f.location.start.line}`);
      assert.deepEqual(found, [], `write copyWith(base, { ... }) or name the fields instead:\n${found.join('\n')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('copyWith copies own enumerable fields and sets the given ones over them, as a spread does', () => {
    const base = { a: 1, b: 'x', c: undefined as number | undefined };
    const out = copyWith(base, { b: 'y', d: true });
    assert.deepEqual(out, { a: 1, b: 'y', c: undefined, d: true });
    assert.deepEqual(Object.keys(out), ['a', 'b', 'c', 'd']);
    assert.notEqual(out, base);
    assert.deepEqual(base, { a: 1, b: 'x', c: undefined });
  });

  it('an own __proto__ key (as JSON.parse makes from a body) is copied as a field, never set as the prototype', () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}, "event": "ready"}') as Record<string, unknown>;
    const out = copyWith(body, { at: 5 }) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(out.polluted, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: true });
    assert.deepEqual(Object.keys(out), ['__proto__', 'event', 'at']);
    const fromFields = copyWith({ event: 'ready' }, JSON.parse('{"__proto__": {"polluted": true}}') as object) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(fromFields), Object.prototype);
    assert.deepEqual(Object.keys(fromFields), ['event', '__proto__']);
  });
});
