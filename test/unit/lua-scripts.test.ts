// The Redis Lua scripts without a Redis (docs/architecture.md#redis-scripts): the loader's includes
// and codes prelude, and every registered script as Redis runs it checked statically: keys only
// through KEYS (Cluster-correct by construction), answers only named codes, and a header that
// matches the registration.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RedisStore, SCRIPTS } from '../../src/store/redis/redis-store.js';
import type { RedisClient } from '../../src/store/redis/connect.js';
import { keys } from '../../src/store/redis/keys.js';
import { Reply } from '../../src/store/redis/codes.js';
import { assembleScript, expandIncludes, loadScript, replyPrelude, type ReadLua } from '../../src/store/redis/lua-loader.js';
import { answers, argvUse, keyProblems, parseHeader, tokenize } from '../helpers/lua-check.js';

const LUA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/store/redis/lua');
const source = (file: string) => readFileSync(path.join(LUA, file), 'utf8');
const scriptFiles = readdirSync(LUA).filter((f) => f.endsWith('.lua')).sort();
const fragmentFiles = readdirSync(path.join(LUA, 'includes')).filter((f) => f.endsWith('.lua')).sort();

/** A reader over files held in memory. */
const files =
  (all: Record<string, string>): ReadLua =>
  (p) =>
    all[p];

/** What RedisStore registers: command name → numberOfKeys and the script text. */
function registered(): Map<string, { numberOfKeys: number | undefined; lua: string }> {
  const defined = new Map<string, { numberOfKeys: number | undefined; lua: string }>();
  const client = {
    options: {},
    defineCommand(name: string, def: { numberOfKeys?: number; lua: string }) {
      defined.set(name, { numberOfKeys: def.numberOfKeys, lua: def.lua });
    },
  };
  new RedisStore(client as unknown as RedisClient);
  return defined;
}

describe('the Lua loader', () => {
  it('inlines each fragment once, where it is first included, its own includes first', () => {
    const read = files({
      'main.lua': 'local a = 1\n--- @include "one"\n--- @include "two"\n--- @include "one"\nreturn a\n',
      'includes/one.lua': '--- @include "base"\nlocal function one() return base() end\n',
      'includes/two.lua': '--- @include "base"\nlocal function two() return base() end\n',
      'includes/base.lua': 'local function base() return 1 end\n',
    });
    assert.equal(
      expandIncludes('main.lua', read),
      [
        'local a = 1',
        'local function base() return 1 end',
        'local function one() return base() end',
        '-- (base included above)',
        'local function two() return base() end',
        '-- (one included above)',
        'return a',
        '',
      ].join('\n'),
    );
  });

  it('fails on a missing fragment, naming it and who included it', () => {
    const read = files({ 'main.lua': '--- @include "one"\n', 'includes/one.lua': '--- @include "nowhere"\n' });
    assert.throws(() => expandIncludes('main.lua', read), { message: 'Lua include "includes/nowhere.lua" not found (included by main.lua → includes/one.lua)' });
    assert.throws(() => expandIncludes('gone.lua', read), { message: 'Lua script gone.lua not found' });
  });

  it('fails on an include cycle, a fragment including itself too', () => {
    const cycle = files({
      'main.lua': '--- @include "a"\n',
      'includes/a.lua': '--- @include "b"\n',
      'includes/b.lua': '--- @include "a"\n',
    });
    assert.throws(() => expandIncludes('main.lua', cycle), { message: 'Lua include cycle: main.lua → includes/a.lua → includes/b.lua → includes/a.lua' });
    const self = files({ 'main.lua': '--- @include "a"\n', 'includes/a.lua': '--- @include "a"\n' });
    assert.throws(() => expandIncludes('main.lua', self), { message: 'Lua include cycle: main.lua → includes/a.lua → includes/a.lua' });
  });

  it('prepends the codes a script names, with the values of codes.ts, and fails on an unknown one', () => {
    assert.equal(replyPrelude('if x then return Reply.GONE end\nreturn {Reply.DONE, 1}'), `local Reply = {DONE = ${Reply.DONE}, GONE = ${Reply.GONE}}\n`);
    assert.equal(replyPrelude('return 1'), '');
    assert.throws(() => replyPrelude('return Reply.NOPE', 'x.lua'), { message: 'x.lua names Reply.NOPE, which src/store/redis/codes.ts does not define' });
    const read = files({ 'main.lua': '--- @include "f"\nreturn Reply.DONE\n', 'includes/f.lua': 'local function f() return Reply.MOVED end\n' });
    assert.equal(
      assembleScript('main.lua', read),
      `local Reply = {DONE = ${Reply.DONE}, MOVED = ${Reply.MOVED}}\nlocal function f() return Reply.MOVED end\nreturn Reply.DONE\n`,
    );
  });

  it('gives Redis every registered script assembled, no include line left', () => {
    const defined = registered();
    assert.deepEqual([...defined.keys()].sort(), Object.keys(SCRIPTS).sort());
    for (const [name, spec] of Object.entries(SCRIPTS)) {
      const lua = defined.get(name)!.lua;
      assert.equal(lua, loadScript(spec.file), name);
      assert.doesNotMatch(lua, /@include/, name);
      assert.match(lua, /^local Reply = \{/, name);
    }
  });
});

describe('the static checks find what they look for', () => {
  it('keys made by concatenation or string functions, and KEYS used otherwise', () => {
    const src = [
      "local base = string.sub(KEYS[1], 1, 5)",
      "redis.call('GET', base .. 'ss:' .. old)",
      "redis.call('ZREM', KEYS[1] .. 'x', id)",
      "redis.call('DEL', KEYS[1], 'literal')",
      "redis.call('ZADD', KEYS['a' .. i], 1, 'm')",
      "redis.call('ZADD', KEYS[tostring(i)], 1, 'm')",
      "local call = redis.call",
      "redis.call(cmd, KEYS[1])",
      "redis.call('EVAL', 'x', 0)",
      "if #KEYS >= 10 then redis.call('SET', KEYS[10], 'v') end",
      "for i = 2, 5 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end",
      "redis.call('ZREM', KEYS[gauge[rec.action]], member)",
    ].join('\n');
    assert.deepEqual(keyProblems(src), [
      "line 2: GET's key is not a KEYS[...] reference: base .. 'ss:' .. old",
      "line 3: ZREM's key is not a KEYS[...] reference: KEYS [ 1 ] .. 'x'",
      "line 4: DEL's key is not a KEYS[...] reference: 'literal'",
      "line 5: ZADD's key is not a KEYS[...] reference: KEYS [ 'a' .. i ]",
      "line 6: ZADD's key is not a KEYS[...] reference: KEYS [ tostring ( i ) ]",
      'line 7: redis.call is not called directly',
      'line 8: the command is not a literal: cmd',
      'line 9: EVAL is not in the checker\'s command tables (add its key positions)',
      "line 1: KEYS used other than as a redis.call key argument: … . sub ( KEYS [ 1 ] , 1 …",
      "line 3: KEYS used other than as a redis.call key argument: … ( 'ZREM' , KEYS [ 1 ] .. 'x' …",
      "line 5: KEYS used other than as a redis.call key argument: … ( 'ZADD' , KEYS [ 'a' .. i ] , 1 …",
      "line 6: KEYS used other than as a redis.call key argument: … ( 'ZADD' , KEYS [ tostring ( i ) ] , 1 …",
      "line 8: KEYS used other than as a redis.call key argument: … ( cmd , KEYS [ 1 ] ) redis …",
    ]);
  });

  it('answers that are not named codes; returns inside functions are the functions\' own', () => {
    const src = [
      'local function f(x) if x then return 1 end return {x} end',
      "if a then return {'ok', 1} end",
      'if b then return false end',
      'if c then return Reply.GONE end',
      'return {Reply.DONE, f(1)}',
    ].join('\n');
    const { codes, problems } = answers(src);
    assert.deepEqual([...codes].sort(), ['DONE', 'GONE']);
    assert.deepEqual(problems, ["line 2: an answer that is not a named code: return { 'ok' , 1 …", 'line 3: an answer that is not a named code: return false end if c …']);
  });

  it('tokenizes strings, long strings and comments, counting lines', () => {
    const t = tokenize("-- c\nlocal s = 'a\\'b' .. \"c\" --[[ x\n y ]] .. [==[\nz]==]\nx = 1 .. 2.5");
    assert.deepEqual(
      t.map((x) => `${x.line}:${x.type}:${x.value}`),
      ['2:name:local', '2:name:s', '2:op:=', "2:string:a\\'b", '2:op:..', '2:string:c', '3:op:..', '3:string:\nz', '5:name:x', '5:op:=', '5:number:1', '5:op:..', '5:number:2.5'],
    );
  });
});

describe('every Redis script, as Redis runs it', () => {
  const defined = registered();

  it('every script file is registered once, and every fragment is included', () => {
    assert.deepEqual(Object.values(SCRIPTS).map((s) => s.file).sort(), scriptFiles);
    const fragmentsUsed = new Set<string>();
    for (const s of Object.values(SCRIPTS)) {
      for (const m of source(s.file).matchAll(/^--- @include "([^"]+)"/gm)) fragmentsUsed.add(`${m[1]}.lua`);
    }
    for (const f of fragmentFiles) for (const m of source(`includes/${f}`).matchAll(/^--- @include "([^"]+)"/gm)) fragmentsUsed.add(`${m[1]}.lua`);
    assert.deepEqual([...fragmentsUsed].sort(), fragmentFiles);
  });

  for (const [name, spec] of Object.entries(SCRIPTS)) {
    describe(spec.file, () => {
      const src = source(spec.file);
      const lua = defined.get(name)!.lua;
      const header = parseHeader(src);

      it('names every key through KEYS: no key is built in Lua', () => {
        assert.deepEqual(keyProblems(lua), []);
      });

      it('answers only named codes, the ones its header lists', () => {
        const { codes, problems } = answers(lua);
        assert.deepEqual(problems, []);
        const listed = new Set([...header.replies.matchAll(/\b[A-Z][A-Z_]+\b/g)].map((m) => m[0]).filter((w) => Object.hasOwn(Reply, w)));
        assert.deepEqual([...listed].sort(), [...codes].sort());
      });

      it('has a header listing its KEYS (with the keys.ts function of each) as registered, and its ARGV', () => {
        assert.equal(header.name, spec.file.replace(/\.lua$/, ''));
        const fixed = header.keys.filter((k) => !k.varying);
        assert.deepEqual(
          fixed.map((k) => k.index),
          fixed.map((_, i) => i + 1),
          'KEYS[1], KEYS[2], ... in order',
        );
        assert.equal(fixed.length, spec.keys, 'as many fixed KEYS as registered');
        const more = header.keys.filter((k) => k.varying);
        const varying = 'varying' in spec && spec.varying === true;
        assert.deepEqual(
          more.map((k) => k.index),
          varying ? [spec.keys + 1] : [],
          'KEYS[n..] after the fixed ones exactly when it takes more',
        );
        assert.equal(defined.get(name)!.numberOfKeys, varying ? undefined : spec.keys, 'numberOfKeys as the header says');
        for (const k of header.keys) {
          const named = [...k.text.matchAll(/\bkeys\.(\w+)/g)].map((m) => m[1]);
          assert.ok(named.length > 0, `KEYS[${k.index}] names the keys.ts function that builds it: ${k.text}`);
          for (const fn of named) assert.ok(Object.hasOwn(keys, fn) && typeof keys[fn as keyof typeof keys] === 'function', `keys.${fn} is a function of keys.ts`);
        }
        const argFixed = header.argv.filter((a) => !a.varying);
        const argMore = header.argv.filter((a) => a.varying);
        assert.deepEqual(
          argFixed.map((a) => a.index),
          argFixed.map((_, i) => i + 1),
          'ARGV[1], ARGV[2], ... in order',
        );
        assert.ok(argMore.length <= 1 && argMore.every((a) => a.index === argFixed.length + 1), 'one ARGV[n..] at most, after the fixed ones');
        const use = argvUse(lua);
        if (argMore.length === 0) {
          assert.ok(use.highest <= argFixed.length, `ARGV[${use.highest}] is in the header`);
          assert.equal(use.otherwise, false, 'ARGV read by a computed index needs an ARGV[n..] entry');
        }
        assert.match(header.replies, /\S/, 'a Replies: line');
      });
    });
  }

  it('every code of codes.ts is answered by some script', () => {
    const answered = new Set(Object.keys(SCRIPTS).flatMap((name) => [...answers(defined.get(name)!.lua).codes]));
    assert.deepEqual([...answered].sort(), Object.keys(Reply).sort());
  });

  it('fragments only define functions (their answers are the scripts\')', () => {
    for (const f of fragmentFiles) {
      const src = source(`includes/${f}`);
      assert.deepEqual(answers(src), { codes: new Set(), problems: [] }, f);
      assert.deepEqual(keyProblems(src), [], f);
      assert.match(src, /^-- [\w-]+: /, `${f} starts with a header`);
    }
  });
});
