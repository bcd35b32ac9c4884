// A store backend outside the repository runs the store contract from the package: a package in a
// temporary directory, its node_modules/streamgate a link to this repository (what installing it
// from a path makes), holds a plain-JavaScript in-memory MarkStore and MetaStore
// (test/contract/outside-backend/) and runs their parts of the suite, `streamgate/store-contract`,
// under `node --test`, and a TypeScript factory type-checks against the entries' declarations. The
// package name resolves to the build in dist/ (scripts/run-tests.mjs compiles it before the tests),
// so this is the suite as an outside backend gets it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, runNode } from '../helpers/process.js';

const FIXTURE = path.join(ROOT, 'test', 'contract', 'outside-backend');

describe('a store backend outside the repository', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-outside-backend-'));
  const link = path.join(dir, 'node_modules', 'streamgate');
  before(() => {
    assert.ok(path.relative(ROOT, dir).startsWith(`..${path.sep}`), `${dir} is outside ${ROOT}`);
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'memory-store', private: true, type: 'module', devDependencies: { streamgate: `file:${ROOT}` } }),
    );
    mkdirSync(path.dirname(link));
    symlinkSync(ROOT, link, 'dir');
    for (const f of ['memory-store.mjs', 'store.test.mjs']) copyFileSync(path.join(FIXTURE, f), path.join(dir, f));
  });
  after(() => {
    // The link into the repository goes first, so removing the directory cannot reach it.
    unlinkSync(link);
    rmSync(dir, { recursive: true, force: true });
  });

  const suite = (backend: 'memory' | 'late-expiry') => runNode(['--test', '--test-reporter=tap', 'store.test.mjs'], { BACKEND: backend }, dir);

  it('passes the marks and meta parts of the suite, taken from the package by name', async () => {
    const r = await suite('memory');
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /^# pass 3$/m);
    assert.match(r.stdout, /^# fail 0$/m);
    assert.deepEqual(r.stdout.match(/^ {4}ok \d+ - \w+$/gm), ['    ok 1 - marks', '    ok 1 - meta']);
  });

  it('fails the variant whose marks still live when their time runs out, in the test of expiry only', async () => {
    const r = await suite('late-expiry');
    assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /^# pass 2$/m);
    assert.match(r.stdout, /^# fail 1$/m);
    assert.deepEqual(r.stdout.match(/^ *not ok \d+ - .*$/gm)?.map((line) => line.trim().replace(/^not ok \d+ - /, '')), [
      "swapMark answers the value held before; 'absent' and 'present' write only then; marks are per account and expire by the store's clock",
      'marks',
      'store contract: memory',
    ]);
    assert.match(r.stdout, /^ +expired$/m, 'the assertion that a mark is gone at its time');
    assert.ok(r.stdout.includes(path.join(ROOT, 'dist', 'store-contract', 'marks.js')), 'the suite is the build, reached through the link');
  });

  it('type-checks a TypeScript factory against the declarations of both entries, one aggregate per part', async () => {
    writeFileSync(
      path.join(dir, 'factory.ts'),
      [
        "import { markStoreContract, metaStoreContract, type StoreFactory } from 'streamgate/store-contract';",
        "import { AccountExists, type MarkStore, type MetaStore, type StoreLifecycle } from 'streamgate/store';",
        'declare const marks: StoreFactory<MarkStore & StoreLifecycle>;',
        'declare const meta: StoreFactory<MetaStore & StoreLifecycle>;',
        'markStoreContract(marks);',
        'metaStoreContract(meta);',
        '// @ts-expect-error the marks part takes a factory of marks',
        'markStoreContract(meta);',
        "export const taken: Error = new AccountExists('A');",
        '',
      ].join('\n'),
    );
    const typeRoots = [path.join(ROOT, 'node_modules', '@types')];
    const compilerOptions = { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['factory.ts'] }));
    const r = await runNode([path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {}, dir);
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
  });

  it('gives the backend the store errors, by the names the suite matches, from `streamgate/store`', async () => {
    const script = [
      "import { AccountExists, StoreConflict, StoreUnavailable } from 'streamgate/store';",
      "import { createRequire } from 'node:module';",
      "const pkg = createRequire(import.meta.url)('streamgate/package.json');",
      "console.log(JSON.stringify([pkg.name, new AccountExists('A').name, new StoreConflict('token 1', 100).name, new StoreUnavailable(new Error('down')).name]));",
    ].join('\n');
    const r = await runNode(['--input-type=module', '-e', script], {}, dir);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ['streamgate', 'AccountExists', 'StoreConflict', 'StoreUnavailable']);
  });
});
