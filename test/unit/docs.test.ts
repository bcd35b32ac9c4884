// The documents a newcomer reads: the README stays short, every relative link and heading anchor in
// README.md, CHANGELOG.md, SECURITY.md and docs/*.md resolves, and no document cites work notes or
// files outside the repository. The README's walk-through is replayed against the app.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import request from 'supertest';
import type { Express } from 'express';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { DEFAULT_ACCOUNT_META } from '../../src/management/accounts.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const DOCS: string[] = [
  'README.md',
  'CHANGELOG.md',
  'SECURITY.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');

/** The text with fenced code blocks blanked (line count kept) and inline code spans removed. */
export function prose(md: string): string {
  const lines = md.split('\n');
  let fence: string | null = null;
  const out = lines.map((line) => {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length) fence = null;
      return '';
    }
    if (m) {
      fence = m[1]!;
      return '';
    }
    return line;
  });
  return out.join('\n').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown file defines (duplicates get -1, -2, … as on GitHub). */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const lines = md.split('\n');
  let fence: string | null = null;
  for (const line of lines) {
    const f = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length) fence = null;
      continue;
    }
    if (f) {
      fence = f[1]!;
      continue;
    }
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a document (no scheme, not mailto), as written. */
export function relativeLinks(md: string): string[] {
  const text = prose(md);
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.push(target);
  }
  return out;
}

/** Problems with one document's relative links: a missing file or a missing heading anchor. */
export function brokenLinks(rel: string, md: string, readOther: (rel: string) => string | null): string[] {
  const problems: string[] = [];
  for (const target of relativeLinks(md)) {
    const [file, hash] = target.split('#', 2) as [string, string | undefined];
    const targetRel = file === '' ? rel : path.posix.normalize(path.posix.join(path.posix.dirname(rel), decodeURI(file)));
    if (targetRel.startsWith('..')) {
      problems.push(`${rel}: ${target} leaves the repository`);
      continue;
    }
    const content = file === '' ? md : readOther(targetRel);
    if (content === null) {
      problems.push(`${rel}: ${target} → ${targetRel} does not exist`);
      continue;
    }
    if (hash !== undefined && targetRel.endsWith('.md') && !anchors(content).has(decodeURIComponent(hash))) {
      problems.push(`${rel}: ${target} → no heading #${hash} in ${targetRel}`);
    }
  }
  return problems;
}

/**
 * The docs speak of the product only: no work-item numbers, no work-diary wording, no reference to a
 * document outside the repository. The words are put together from parts so that this checker does
 * not itself carry the wording it keeps out of the product.
 */
const WORK_ITEM = ['iss', 'ue'].join('');
const DIARY_ENTRY = ['sess', 'ion'].join('');
const OUTSIDE_SPEC = ['CONT', 'RACT'].join('');
export const FORBIDDEN: RegExp[] = [
  new RegExp(`${WORK_ITEM} \\d`, 'i'),
  new RegExp(`${DIARY_ENTRY} \\d`, 'i'),
  new RegExp(`previous ${DIARY_ENTRY}`, 'i'),
  new RegExp(`\\b${OUTSIDE_SPEC}\\b`),
  new RegExp(`${OUTSIDE_SPEC}\\.md`, 'i'),
  /\.\.\/shared\b/,
  /\/work\/shared\b/,
];

export function forbiddenWording(md: string): string[] {
  const found: string[] = [];
  md.split('\n').forEach((line, i) => {
    const re = FORBIDDEN.find((r) => r.test(line));
    if (re) found.push(`line ${i + 1}: ${re} in ${JSON.stringify(line.trim().slice(0, 120))}`);
  });
  return found;
}

const readIfExists = (rel: string): string | null => {
  const p = path.join(ROOT, rel);
  if (!existsSync(p)) return null;
  return statSync(p).isDirectory() ? '' : readFileSync(p, 'utf8');
};

/** Every `docs/<file>.md#anchor` (or SECURITY.md / README.md) a source text cites that names no heading there. */
export function staleCitations(where: string, source: string, readOther: (rel: string) => string | null): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/\b((?:docs\/[\w.-]+|SECURITY|README|CHANGELOG)\.md)(?:#([\w-]+))?/g)) {
    const [, file, hash] = m as unknown as [string, string, string | undefined];
    const content = readOther(file);
    if (content === null) out.push(`${where}: ${file} does not exist`);
    else if (hash !== undefined && !anchors(content).has(hash)) out.push(`${where}: ${file}#${hash} names no heading`);
  }
  return out;
}

describe('documentation', () => {
  it('covers the documents a newcomer is pointed to', () => {
    for (const rel of ['docs/api.md', 'docs/callers.md', 'docs/operations.md', 'docs/performance.md', 'docs/architecture.md', 'docs/compatibility.md']) {
      assert.ok(DOCS.includes(rel), `${rel} is missing`);
    }
  });

  it('README.md is under 260 lines and starts with the two commands', () => {
    const readme = read('README.md');
    const lines = readme.split('\n').length;
    assert.ok(lines < 260, `README.md has ${lines} lines`);
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    assert.match(firstBlock, /^npm ci && npm start\b/m);
    assert.match(firstBlock, /^npm test\b/m);
  });

  it('the README links every document in docs/', () => {
    const linked = new Set(relativeLinks(read('README.md')).map((t) => t.split('#')[0]));
    for (const rel of DOCS.filter((d) => d.startsWith('docs/'))) assert.ok(linked.has(rel), `README.md does not link ${rel}`);
  });

  for (const rel of DOCS) {
    it(`${rel}: every relative link and heading anchor resolves`, () => {
      assert.deepEqual(brokenLinks(rel, read(rel), readIfExists), []);
    });

    it(`${rel}: no work-note wording or outside references`, () => {
      assert.deepEqual(forbiddenWording(read(rel)), []);
    });
  }

  it('every document and heading the source code cites exists', () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
        const rel = `${dir}/${name}`;
        if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
        else if (/\.(ts|mjs|lua)$/.test(name) && rel !== 'test/unit/docs.test.ts') found.push(...staleCitations(rel, read(rel), readIfExists));
      }
    };
    for (const dir of ['src', 'scripts', 'bench', 'test']) walk(dir);
    assert.deepEqual(found, []);
  });

  it('the citation check names a missing document and a missing heading', () => {
    const files: Record<string, string> = { 'docs/a.md': '# A\n## Stores\n' };
    assert.deepEqual(staleCitations('src/x.ts', '// see docs/a.md#stores, docs/a.md#the-store and docs/b.md', (rel) => files[rel] ?? null), [
      'src/x.ts: docs/a.md#the-store names no heading',
      'src/x.ts: docs/b.md does not exist',
    ]);
  });

  // The checkers must be able to fail: each is shown a document with the fault it looks for.
  it('the link checker reports a missing file, a missing anchor and a path out of the repository', () => {
    const md = '# Title\n\n[a](nowhere.md) [b](#title) [c](#missing) [d](../README.md) [e](https://example.com/x.md)\n\n```\n[f](in-code.md)\n```\n';
    const files: Record<string, string> = { 'README.md': '# Readme\n' };
    assert.deepEqual(brokenLinks('docs/x.md', md, (rel) => files[rel] ?? null), [
      'docs/x.md: nowhere.md → docs/nowhere.md does not exist',
      'docs/x.md: #missing → no heading #missing in docs/x.md',
    ]);
    assert.deepEqual(brokenLinks('docs/x.md', '[r](../README.md#nope) [o](../../outside.md)', (rel) => files[rel] ?? null), [
      'docs/x.md: ../README.md#nope → no heading #nope in README.md',
      'docs/x.md: ../../outside.md leaves the repository',
    ]);
    assert.deepEqual(brokenLinks('README.md', '[x](../y.md)', () => ''), ['README.md: ../y.md leaves the repository']);
  });

  it('anchors follow GitHub: code, punctuation and duplicates', () => {
    const a = anchors('## nginx `auth_request` (HLS/DASH behind nginx)\n## Analytics: bandwidth per id\n## Events\n## Events\n');
    assert.deepEqual([...a], ['nginx-auth_request-hlsdash-behind-nginx', 'analytics-bandwidth-per-id', 'events', 'events-1']);
  });

  it('the wording check finds work notes and outside references', () => {
    const lines = [
      'ok',
      `as ${WORK_ITEM} 8 asked`,
      `see ${DIARY_ENTRY[0].toUpperCase()}${DIARY_ENTRY.slice(1)} 3`,
      `the previous ${DIARY_ENTRY}`,
      `per ${OUTSIDE_SPEC}.md`,
      'see ../shared/x',
      'the store contract',
    ];
    const found = forbiddenWording(lines.join('\n'));
    assert.equal(found.length, 5);
    assert.deepEqual(found.map((f) => f.split(':')[0]), ['line 2', 'line 3', 'line 4', 'line 5', 'line 6']);
  });
});

/** Each command of the fenced code blocks, continuation lines (`\` at the end) joined. */
export function codeCommands(md: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  let pending = '';
  for (const line of md.split('\n')) {
    const f = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length) {
        fence = null;
        if (pending) out.push(pending);
        pending = '';
        continue;
      }
      const joined = pending + line;
      if (/\\\s*$/.test(joined)) pending = `${joined.replace(/\\\s*$/, '')} `;
      else {
        out.push(joined);
        pending = '';
      }
      continue;
    }
    if (f) fence = f[1]!;
  }
  return out;
}

/** The header a documented hook call sends the secret in, from the variable Streamgate reads it from. */
const SECRET_HEADER = 'x-streamgate-hook-secret: $STREAMGATE_HOOK_SECRET';

/**
 * The documented shell calls of a hook (`curl … /hooks/…`, or a shell function wrapping one) that
 * would be refused once a hook secret is set: they send it neither in the header nor in `?secret=`.
 */
export function hookCallsWithoutSecret(md: string): string[] {
  return codeCommands(md).filter((c) => /\bcurl\b/.test(c) && /\/hooks\//.test(c) && !c.includes(SECRET_HEADER) && !/[?&]secret=/.test(c));
}

describe('documented hook calls', () => {
  for (const rel of DOCS) {
    it(`${rel}: every curl to a hook sends the hook secret`, () => {
      assert.deepEqual(hookCallsWithoutSecret(read(rel)), []);
    });
  }

  it('the check finds a call without the secret, however its lines are split', () => {
    const md = [
      '```sh',
      "curl -s localhost:8080/hooks/authorize -H 'content-type: application/json' \\",
      "  -d '{}'",
      `curl -s localhost:8080/hooks/events -H "${SECRET_HEADER}" -d '{}'`,
      'ask() { curl -s localhost:8080/hooks/authorize \\',
      '  -H "$JSON" -d "$1"; }',
      'curl -s "localhost:8080/hooks/thumbnail?streamId=a/b&secret=HOOK_SECRET"',
      'curl -s localhost:8080/api/publish_token/list',
      '```',
      "curl -s localhost:8080/hooks/srs (prose, not a command)",
    ].join('\n');
    assert.deepEqual(hookCallsWithoutSecret(md), [
      "curl -s localhost:8080/hooks/authorize -H 'content-type: application/json'    -d '{}'",
      'ask() { curl -s localhost:8080/hooks/authorize    -H "$JSON" -d "$1"; }',
    ]);
  });
});

// The README's five-minute walk-through, request by request, with the statuses and reasons it shows:
// a first start on an empty embedded store (the default account and its secret file), as `npm start`,
// with a hook secret set from STREAMGATE_HOOK_SECRET and sent by `ask` in its header.
describe('README walk-through', () => {
  const HOOK_SECRET = 'a'.repeat(16) + 'b'.repeat(16) + 'c'.repeat(16);
  let dataDir = '';
  let services: Services;
  let app: Express;
  let api: string;
  let accountId: string;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-docs-'));
    const config = loadConfig({ env: { STREAMGATE_HOOK_SECRET: HOOK_SECRET }, overrides: { dataDir, log: { level: 'silent' } } });
    services = await createServices(config, { firstStart: true });
    app = createApp(services);
    api = `Bearer ${readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim()}`;
    accountId = (await services.store.getMeta(DEFAULT_ACCOUNT_META)) ?? '';
    assert.match(accountId, /^[A-Z2-9]{6}$/);
  });
  after(async () => {
    await services?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // as the README's `ask`: the hook secret in x-streamgate-hook-secret
  const ask = (body: Record<string, unknown>) => request(app).post('/hooks/authorize').set('x-streamgate-hook-secret', HOOK_SECRET).send(body);

  it("the README's ask sends the hook secret from STREAMGATE_HOOK_SECRET, which the walk-through needs", async () => {
    const readme = read('README.md');
    const def = codeCommands(readme).find((c) => c.startsWith('ask() {'));
    assert.ok(def, 'README.md defines ask()');
    assert.ok(def.includes(`-H "${SECRET_HEADER}"`), def);
    const without = await request(app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1', protocol: 'hls' });
    assert.equal(without.status, 401);
    assert.deepEqual(without.body, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' });
  });

  it('creates two tokens, admits them, refuses what the README says, explains and revokes', async () => {
    const pubRes = await request(app)
      .post('/api/publish_token')
      .set('authorization', api)
      .send({ label: 'studio', streams: [{ streamName: 'cam1' }], subscribeRequiresAuth: true });
    assert.equal(pubRes.status, 200);
    assert.equal(pubRes.body.status, 'success');
    assert.equal(pubRes.body.data.id, 1);
    assert.match(pubRes.body.data.token, /^[0-9a-f]{64}$/);
    const PUB = pubRes.body.data.token as string;

    const subRes = await request(app)
      .post('/api/subscribe_token')
      .set('authorization', api)
      .send({ label: 'viewers', streams: [{ streamName: 'cam1' }], allowedOrigins: ['*.example.com'] });
    assert.equal(subRes.status, 200);
    assert.equal(subRes.body.data.id, 2);
    const SUB = subRes.body.data.token as string;

    const decide = async (body: Record<string, unknown>, status: number, expected: Record<string, unknown>) => {
      const r = await ask(body);
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.match(r.body.decisionId, /^[0-9a-f-]{36}$/);
      const { decisionId: _id, ...rest } = r.body as Record<string, unknown>;
      assert.deepEqual(rest, expected);
    };
    const refused = (reason: string, message: string) => ({ allowed: false, reason, message });
    const admitted = (extra: Record<string, unknown>) => ({
      allowed: true,
      status: 200,
      reason: 'allowed',
      message: 'Allowed',
      streamName: 'cam1',
      accountId,
      ...extra,
    });

    await decide({ action: 'publish', token: PUB, streamName: 'cam1', protocol: 'rtmp' }, 200, admitted({ tokenId: 1, record: false, subscribeRequiresAuth: true }));
    await decide(
      { action: 'subscribe', token: SUB, streamName: 'cam1', protocol: 'hls', origin: 'https://www.example.com' },
      200,
      admitted({ tokenId: 2 }),
    );

    await decide({ action: 'subscribe', streamName: 'cam1', protocol: 'hls' }, 401, refused('token_required', 'Unauthorized: Token required'));
    await decide(
      { action: 'subscribe', token: SUB, streamName: 'cam1', protocol: 'hls', origin: 'https://evil.example.net' },
      403,
      refused('origin_not_allowed', 'Unauthorized: Origin not allowed'),
    );
    await decide({ action: 'publish', token: PUB, streamName: 'cam2', protocol: 'rtmp' }, 403, refused('stream_not_allowed', 'Unauthorized: Stream name not allowed'));

    const check = await request(app)
      .post('/api/subscribe_token/2/check')
      .set('authorization', api)
      .send({ streamName: 'cam1', origin: 'https://evil.example.net' });
    assert.equal(check.status, 200, JSON.stringify(check.body));
    assert.equal(check.body.status, 'success');
    assert.equal(check.body.data.allowed, false);
    assert.equal(check.body.data.status, 403);
    assert.equal(check.body.data.reason, 'origin_not_allowed');
    assert.equal(check.body.data.message, 'Unauthorized: Origin not allowed');
    assert.deepEqual(check.body.data.rules[0], { rule: 'token present', reason: 'token_required', result: 'pass' });

    const disabled = await request(app).patch('/api/publish_token/disable').set('authorization', api).send({ tokenIds: [1] });
    assert.equal(disabled.status, 200);
    assert.deepEqual(disabled.body.data, { successfulTokens: [1], failedTokens: [] });
    await decide({ action: 'publish', token: PUB, streamName: 'cam1', protocol: 'rtmp' }, 401, refused('token_disabled', 'Unauthorized: Token disabled'));
    // Revoking never widens access: disabled, the publish token still secures cam1.
    await decide({ action: 'subscribe', streamName: 'cam1', protocol: 'hls' }, 401, refused('token_required', 'Unauthorized: Token required'));
  });
});
