// The build (tsconfig.build.json, what `npm run build` compiles) emits type declarations for the
// library entry, at the path package.json's "types" names, and a TypeScript consumer type-checks
// against them with real types (not `any`).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/process.js';

const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');

describe('build: type declarations', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'sg-build-'));
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { types: string; exports: { '.': { types: string } } };
  let build: ReturnType<typeof spawnSync>;
  before(() => {
    build = spawnSync(tsc, ['-p', 'tsconfig.build.json', '--outDir', path.join(out, 'dist')], { cwd: ROOT, encoding: 'utf8' });
  });
  after(() => {
    // The link to the repository's node_modules goes first, so removing the directory cannot reach it.
    if (existsSync(path.join(out, 'node_modules'))) unlinkSync(path.join(out, 'node_modules'));
    rmSync(out, { recursive: true, force: true });
  });

  it('compiles without errors', () => {
    assert.equal(build.status, 0, `${build.stdout}${build.stderr}`);
  });

  it('writes the declarations package.json names, next to the code', () => {
    assert.equal(pkg.types, 'dist/index.d.ts');
    assert.equal(pkg.exports['.'].types, './dist/index.d.ts');
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/policy/evaluate.d.ts', 'dist/policy/types.d.ts', 'dist/policy/self-signed.d.ts']) {
      assert.ok(existsSync(path.join(out, f)), `${f} is emitted`);
    }
    const index = readFileSync(path.join(out, 'dist/index.d.ts'), 'utf8');
    for (const name of ['signSubscribeJwt', 'evaluate', 'REASONS', 'createApp', 'createServices', 'loadConfig', 'Store']) assert.match(index, new RegExp(`\\b${name}\\b`));
  });

  it('a consumer type-checks against them, and a wrong call is a type error', () => {
    writeFileSync(path.join(out, 'package.json'), JSON.stringify({ type: 'module' }));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'), 'dir');
    writeFileSync(
      path.join(out, 'consumer.ts'),
      [
        "import { evaluate, REASONS, signSubscribeJwt, type Decision, type EvalContext } from './dist/index.js';",
        "const ctx: EvalContext = { now: 0, secured: false, rtmpIpFilters: 'enforce', countryOf: () => undefined };",
        "const d: Decision = evaluate({ action: 'subscribe', streamName: 'cam1', protocol: 'hls' }, { type: 'none' }, ctx).decision;",
        'export const message: string = REASONS[d.reason].message;',
        "export const jwt: Promise<string> = signSubscribeJwt({ token: 't', tokenId: 1, streamName: 'cam1', expiresInSeconds: 60 });",
        '// @ts-expect-error a stream name is a string',
        "evaluate({ action: 'subscribe', streamName: 1, protocol: 'hls' }, { type: 'none' }, ctx);",
        '// @ts-expect-error an action is publish or subscribe',
        "evaluate({ action: 'view', streamName: 'cam1', protocol: 'hls' }, { type: 'none' }, ctx);",
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(out, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: true, types: ['node'] }, files: ['consumer.ts'] }),
    );
    const check = spawnSync(tsc, ['-p', path.join(out, 'tsconfig.json')], { cwd: out, encoding: 'utf8' });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  });
});
