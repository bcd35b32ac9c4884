// The layer rules of src/ (docs/architecture.md#layers) are Biome rules in biome.json, run by
// `npm run lint`: noImportCycles (type-only imports count) and noRestrictedImports per directory.
// These tests show that a forbidden import fails the lint with the rule's name, that an allowed one
// passes, and that src/ keeps the rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIOME = path.join(ROOT, 'node_modules', '.bin', 'biome');
const LAYER_RULES = ['lint/suspicious/noImportCycles', 'lint/style/noRestrictedImports'];

interface Finding {
  category: string;
  location: { path: string; start: { line: number } };
}

interface Lint {
  status: number | null;
  output: string;
  findings: Finding[];
}

function lint(cwd: string, config: string, paths: string[]): Lint {
  const r = spawnSync(BIOME, ['lint', '--config-path', config, '--error-on-warnings', '--reporter=json', '--max-diagnostics=none', ...paths], { cwd, encoding: 'utf8' });
  const report = JSON.parse(r.stdout) as { diagnostics: Finding[] };
  return { status: r.status, output: r.stdout, findings: report.diagnostics };
}

const where = (f: Finding) => `${f.category} ${f.location.path}:${f.location.start.line}`;

/**
 * A scratch tree holding `files` (path under it → text) beside the project's own biome.json, its
 * layer overrides unchanged (the VCS setting and the plugin, which need the repository, left out);
 * the lint's findings of the layer rules.
 */
function lintScratch(files: Record<string, string>): Lint & { layer: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-layers-'));
  try {
    const config = JSON.parse(readFileSync(path.join(ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
    delete config.$schema;
    delete config.vcs;
    delete config.plugins;
    writeFileSync(path.join(dir, 'biome.json'), JSON.stringify(config));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    const r = lint(dir, path.join(dir, 'biome.json'), ['src']);
    return Object.assign(r, { layer: r.findings.filter((f) => LAYER_RULES.includes(f.category)).map(where).sort() });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const STORE = "export interface Session { id: string }\n";

describe('layer rules', () => {
  it('a caller that imports the store fails the lint, by noRestrictedImports', () => {
    const r = lintScratch({
      'src/store/store.ts': STORE,
      'src/callers/probe.ts': "import type { Session } from '../store/store.js';\nexport const id = (s: Session) => s.id;\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/style/noRestrictedImports src/callers/probe.ts:1']);
    assert.match(r.output, /a caller imports only src\/contracts/);
  });

  it('a caller may import the contracts, the domain, the request helpers and its own directory', () => {
    const r = lintScratch({
      'src/contracts/session.ts': STORE,
      'src/domain/addresses.ts': 'export const host = (s: string) => s.toLowerCase();\n',
      'src/http/client.ts': 'export const peer = () => undefined;\n',
      'src/callers/shared.ts': 'export const max = 64;\n',
      'src/callers/probe.ts': [
        "import type { Session } from '../contracts/session.js';",
        "import { host } from '../domain/addresses.js';",
        "import { peer } from '../http/client.js';",
        "import { max } from './shared.js';",
        'export const id = (s: Session) => [host(s.id), peer(), max];',
        '',
      ].join('\n'),
    });
    assert.deepEqual([r.status, r.layer], [0, []]);
  });

  it('a caller that imports any other HTTP module fails the lint', () => {
    const r = lintScratch({
      'src/http/middleware.ts': 'export const bearer = () => undefined;\n',
      'src/callers/probe.ts': "import { bearer } from '../http/middleware.js';\nexport const b = bearer;\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/style/noRestrictedImports src/callers/probe.ts:1']);
  });

  it('the policy that imports the services fails the lint, by noRestrictedImports', () => {
    const r = lintScratch({
      'src/services.ts': 'export interface Services { name: string }\n',
      'src/policy/probe.ts': "import type { Services } from '../services.js';\nexport const name = (s: Services) => s.name;\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/style/noRestrictedImports src/policy/probe.ts:1']);
    assert.match(r.output, /src\/policy imports only src\/domain, src\/contracts and src\/policy/);
  });

  it('the domain that imports anything outside it fails the lint; the contracts import only the domain', () => {
    const r = lintScratch({
      'src/errors.ts': 'export class E extends Error {}\n',
      'src/domain/probe.ts': "import { E } from '../errors.js';\nexport const e = new E();\n",
      'src/policy/types.ts': 'export type Reason = string;\n',
      'src/contracts/probe.ts': "import type { Reason } from '../policy/types.js';\nexport const r = (x: Reason) => x;\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/style/noRestrictedImports src/contracts/probe.ts:1', 'lint/style/noRestrictedImports src/domain/probe.ts:1']);
  });

  it('the store contract may import the store interfaces, the domain, the contracts and the errors', () => {
    const r = lintScratch({
      'src/store/store.ts': STORE,
      'src/domain/tokens.ts': 'export const tok = (id: number) => ({ id });\n',
      'src/contracts/session.ts': STORE,
      'src/errors.ts': 'export class E extends Error {}\n',
      'src/store-contract/fixtures.ts': 'export const T0 = 0;\n',
      'src/store-contract/probe.ts': [
        "import type { Session } from '../store/store.js';",
        "import type { Session as Same } from '../contracts/session.js';",
        "import { tok } from '../domain/tokens.js';",
        "import { E } from '../errors.js';",
        "import { T0 } from './fixtures.js';",
        'export const id = (s: Session, t: Same) => [s.id, t.id, tok(T0), new E()];',
        '',
      ].join('\n'),
    });
    assert.deepEqual([r.status, r.layer], [0, []]);
  });

  it('the store contract that imports a backend or the store\'s other modules fails the lint, by noRestrictedImports', () => {
    const r = lintScratch({
      'src/store/sqlite/sqlite-store.ts': 'export class SqliteStore {}\n',
      'src/store/failures.ts': 'export const attempts = 100;\n',
      'src/store-contract/probe.ts': [
        "import { SqliteStore } from '../store/sqlite/sqlite-store.js';",
        "import { attempts } from '../store/failures.js';",
        'export const made = [new SqliteStore(), attempts];',
        '',
      ].join('\n'),
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/style/noRestrictedImports src/store-contract/probe.ts:1', 'lint/style/noRestrictedImports src/store-contract/probe.ts:2']);
    assert.match(r.output, /src\/store-contract imports only src\/store\/store\.ts/);
  });

  it('nothing in src/ imports the store contract, by path or by package name', () => {
    const suite = 'export function storeContract(): void {}\n';
    const r = lintScratch({
      'src/store-contract/index.ts': suite,
      'src/index.ts': "export { storeContract } from './store-contract/index.js';\n",
      'src/store/sqlite/probe.ts': "import { storeContract } from '../../store-contract/index.js';\nexport const s = storeContract;\n",
      'src/http/probe.ts': "import { storeContract } from 'streamgate/store-contract';\nexport const s = storeContract;\n",
      'src/policy/probe.ts': "import { storeContract } from '../store-contract/index.js';\nexport const s = storeContract;\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, [
      'lint/style/noRestrictedImports src/http/probe.ts:1',
      'lint/style/noRestrictedImports src/index.ts:1',
      'lint/style/noRestrictedImports src/policy/probe.ts:1',
      'lint/style/noRestrictedImports src/store/sqlite/probe.ts:1',
    ]);
    assert.match(r.output, /nothing in src\/ imports src\/store-contract/);
  });

  it('two modules that import each other fail the lint, by noImportCycles, when the imports are type-only too', () => {
    const r = lintScratch({
      'src/policy/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'src/policy/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    });
    assert.notEqual(r.status, 0);
    assert.deepEqual(r.layer, ['lint/suspicious/noImportCycles src/policy/a.ts:1', 'lint/suspicious/noImportCycles src/policy/b.ts:1']);
  });

  it('src/ keeps the layer rules', () => {
    const r = lint(ROOT, path.join(ROOT, 'biome.json'), ['src']);
    const found = r.findings.filter((f) => LAYER_RULES.includes(f.category)).map((f) => where({ category: f.category, location: { path: path.relative(ROOT, path.resolve(ROOT, f.location.path)), start: f.location.start } }));
    assert.deepEqual(found, [], `imports that break a layer rule (docs/architecture.md#layers):\n${found.join('\n')}`);
  });
});
