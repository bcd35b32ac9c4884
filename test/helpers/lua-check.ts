// Static checks of the Redis Lua scripts (docs/architecture.md#redis-scripts), on their text as
// Redis runs it: a small Lua tokenizer, then the rules: every key a redis.call/pcall names is a
// KEYS[...] reference (so no concatenation or string function makes one), KEYS is used nowhere else,
// and the script's own answers are named codes. Also reads a script's header.

export interface Token {
  type: 'name' | 'string' | 'number' | 'op';
  value: string;
  line: number;
}

const LONG_OPEN = /^\[(=*)\[/;
const NUMBER = /^(0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const OPS = ['...', '..', '==', '~=', '<=', '>='];

/** Lua source as tokens, comments dropped. Throws on an unterminated string or comment. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  const longBracket = (at: number): { end: number; text: string } | undefined => {
    const m = LONG_OPEN.exec(src.slice(at));
    if (!m) return undefined;
    const close = `]${m[1]}]`;
    const end = src.indexOf(close, at + m[0].length);
    if (end < 0) throw new Error(`line ${line}: unterminated long bracket`);
    return { end: end + close.length, text: src.slice(at + m[0].length, end) };
  };
  while (i < src.length) {
    const c = src[i];
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith('--', i)) {
      const long = longBracket(i + 2);
      if (long) {
        line += (src.slice(i, long.end).match(/\n/g) ?? []).length;
        i = long.end;
      } else {
        const nl = src.indexOf('\n', i);
        i = nl < 0 ? src.length : nl;
      }
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let text = '';
      while (j < src.length && src[j] !== c) {
        if (src[j] === '\n') throw new Error(`line ${line}: unterminated string`);
        if (src[j] === '\\') {
          text += src.slice(j, j + 2);
          j += 2;
        } else text += src[j++];
      }
      if (j >= src.length) throw new Error(`line ${line}: unterminated string`);
      out.push({ type: 'string', value: text, line });
      i = j + 1;
      continue;
    }
    if (c === '[') {
      const long = longBracket(i);
      if (long) {
        out.push({ type: 'string', value: long.text, line });
        line += (src.slice(i, long.end).match(/\n/g) ?? []).length;
        i = long.end;
        continue;
      }
    }
    const rest = src.slice(i, i + 64);
    const num = /[0-9.]/.test(c) ? NUMBER.exec(rest) : null;
    if (num) {
      out.push({ type: 'number', value: num[0], line });
      i += num[0].length;
      continue;
    }
    const name = NAME.exec(rest);
    if (name) {
      out.push({ type: 'name', value: name[0], line });
      i += name[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i)) ?? c;
    out.push({ type: 'op', value: op, line });
    i += op.length;
  }
  return out;
}

/** Commands whose first argument is a key (PUBLISH: the version key's own name is the channel). */
const FIRST_KEY = new Set(
  (
    'GET SET INCR HSET HGET HEXISTS HDEL HGETALL HINCRBY HMGET ZADD ZREM ZSCORE ZCARD ZCOUNT ZRANGE ZRANGEBYSCORE ZREMRANGEBYRANK ' +
    'ZREMRANGEBYSCORE SADD SREM SCARD SMEMBERS SISMEMBER LPUSH RPUSH LPOP LTRIM LRANGE EXPIRE EXPIREAT PEXPIRE PUBLISH'
  ).split(' '),
);
/** Commands whose every argument is a key. */
const ALL_KEYS = new Set(['DEL', 'EXISTS', 'UNLINK', 'MGET']);
/** Names that make strings: never part of a key's index. */
const STRING_MAKERS = new Set(['string', 'tostring', 'format', 'sub', 'gsub', 'rep', 'concat']);

const at = (t: Token | undefined, type: Token['type'], value?: string) => t !== undefined && t.type === type && (value === undefined || t.value === value);

/** The index of the token closing the bracket opened at `open`. */
function closing(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const v = tokens[i].type === 'op' ? tokens[i].value : '';
    if (v === '(' || v === '[' || v === '{') depth++;
    else if (v === ')' || v === ']' || v === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  throw new Error(`line ${tokens[open].line}: unbalanced brackets`);
}

/** The arguments of the call whose '(' is at `open`: [first token, last token] index pairs. */
function argumentsOf(tokens: Token[], open: number): Array<[number, number]> {
  const close = closing(tokens, open);
  const args: Array<[number, number]> = [];
  let start = open + 1;
  let depth = 0;
  for (let i = open + 1; i < close; i++) {
    const v = tokens[i].type === 'op' ? tokens[i].value : '';
    if (v === '(' || v === '[' || v === '{') depth++;
    else if (v === ')' || v === ']' || v === '}') depth--;
    else if (v === ',' && depth === 0) {
      args.push([start, i - 1]);
      start = i + 1;
    }
  }
  if (start < close) args.push([start, close - 1]);
  return args;
}

const text = (tokens: Token[], [a, b]: [number, number]) =>
  tokens
    .slice(a, b + 1)
    .map((t) => (t.type === 'string' ? `'${t.value}'` : t.value))
    .join(' ');

/**
 * Problems with the keys of `src`: a redis.call/pcall not called directly or with a command that is
 * not a literal (or not in the tables above), a key argument that is not exactly KEYS[<index>] with
 * an index free of strings, `..` and string functions, and KEYS used anywhere else than as such an
 * argument or in #KEYS.
 */
export function keyProblems(src: string): string[] {
  const tokens = tokenize(src);
  const problems: string[] = [];
  const keyArgs = new Set<number>();
  for (let i = 0; i < tokens.length; i++) {
    if (!(at(tokens[i], 'name', 'redis') && at(tokens[i + 1], 'op', '.') && (at(tokens[i + 2], 'name', 'call') || at(tokens[i + 2], 'name', 'pcall')))) continue;
    const where = `line ${tokens[i].line}`;
    if (!at(tokens[i + 3], 'op', '(')) {
      problems.push(`${where}: redis.${tokens[i + 2].value} is not called directly`);
      continue;
    }
    const args = argumentsOf(tokens, i + 3);
    const [c0, c1] = args[0] ?? [i + 4, i + 3];
    if (c0 !== c1 || tokens[c0].type !== 'string') {
      problems.push(`${where}: the command is not a literal: ${args[0] ? text(tokens, args[0]) : '(none)'}`);
      continue;
    }
    const command = tokens[c0].value.toUpperCase();
    const keyed = ALL_KEYS.has(command) ? args.slice(1) : FIRST_KEY.has(command) ? args.slice(1, 2) : undefined;
    if (keyed === undefined) {
      problems.push(`${where}: ${command} is not in the checker's command tables (add its key positions)`);
      continue;
    }
    if (keyed.length === 0) problems.push(`${where}: ${command} without a key`);
    for (const [a, b] of keyed) {
      const ok = at(tokens[a], 'name', 'KEYS') && at(tokens[a + 1], 'op', '[') && closing(tokens, a + 1) === b && b > a + 2;
      const index = tokens.slice(a + 2, b);
      const clean = index.every((t) => t.type !== 'string' && !(t.type === 'op' && t.value === '..') && !(t.type === 'name' && STRING_MAKERS.has(t.value)));
      if (ok && clean) keyArgs.add(a);
      else problems.push(`${where}: ${command}'s key is not a KEYS[...] reference: ${text(tokens, [a, b])}`);
    }
  }
  tokens.forEach((t, i) => {
    if (!at(t, 'name', 'KEYS') || keyArgs.has(i)) return;
    if (at(tokens[i - 1], 'op', '#') && !at(tokens[i + 1], 'op', '[')) return;
    const end = at(tokens[i + 1], 'op', '[') ? closing(tokens, i + 1) : i;
    const around = text(tokens, [Math.max(0, i - 3), Math.min(tokens.length - 1, end + 2)]);
    problems.push(`line ${t.line}: KEYS used other than as a redis.call key argument: … ${around} …`);
  });
  return problems;
}

/**
 * The codes a script's own answers name (its returns outside any function), and the returns that
 * are not `return Reply.<NAME>` or `return {Reply.<NAME>, ...}`.
 */
export function answers(src: string): { codes: Set<string>; problems: string[] } {
  const tokens = tokenize(src);
  const codes = new Set<string>();
  const problems: string[] = [];
  const blocks: Array<'function' | 'block'> = [];
  tokens.forEach((t, i) => {
    if (t.type !== 'name') return;
    if (t.value === 'function') blocks.push('function');
    else if (t.value === 'if' || t.value === 'do' || t.value === 'repeat') blocks.push('block');
    else if (t.value === 'end' || t.value === 'until') blocks.pop();
    else if (t.value === 'return' && !blocks.includes('function')) {
      const j = at(tokens[i + 1], 'op', '{') ? i + 2 : i + 1;
      if (at(tokens[j], 'name', 'Reply') && at(tokens[j + 1], 'op', '.') && at(tokens[j + 2], 'name')) codes.add(tokens[j + 2].value);
      else problems.push(`line ${t.line}: an answer that is not a named code: return ${text(tokens, [i + 1, Math.min(tokens.length - 1, i + 4)])} …`);
    }
  });
  if (blocks.length !== 0) problems.push('unbalanced blocks (the checker lost count of end)');
  return { codes, problems };
}

export interface HeaderEntry {
  /** KEYS[n] / ARGV[n]: n; for KEYS[n..] / ARGV[n..] also varying. */
  index: number;
  varying: boolean;
  text: string;
}

export interface Header {
  /** The first line's text up to the colon. */
  name: string;
  keys: HeaderEntry[];
  argv: HeaderEntry[];
  replies: string;
}

/** The header of a script's source: its leading comment lines, up to the first include or code. */
export function parseHeader(src: string): Header {
  const lines: string[] = [];
  for (const line of src.split('\n')) {
    if (!line.startsWith('--') || line.startsWith('--- @include')) break;
    lines.push(line.replace(/^--\s?/, ''));
  }
  const header: Header = { name: /^([\w-]+):/.exec(lines[0] ?? '')?.[1] ?? '', keys: [], argv: [], replies: '' };
  let current: HeaderEntry | 'replies' | undefined;
  for (const line of lines) {
    const entry = /^(KEYS|ARGV)\[(\d+)(\.\.)?\]\s+(.*)$/.exec(line);
    if (entry) {
      current = { index: Number(entry[2]), varying: entry[3] !== undefined, text: entry[4] };
      (entry[1] === 'KEYS' ? header.keys : header.argv).push(current);
    } else if (line.startsWith('Replies:')) {
      header.replies = line.slice('Replies:'.length);
      current = 'replies';
    } else if (current === 'replies') header.replies += ` ${line.trim()}`;
    else if (current) current.text += ` ${line.trim()}`;
  }
  return header;
}

/** The highest literal ARGV[n] of `src`, and whether it reads ARGV otherwise (#ARGV, unpack(ARGV), ARGV[i]). */
export function argvUse(src: string): { highest: number; otherwise: boolean } {
  const tokens = tokenize(src);
  let highest = 0;
  let otherwise = false;
  tokens.forEach((t, i) => {
    if (!at(t, 'name', 'ARGV')) return;
    if (at(tokens[i + 1], 'op', '[') && at(tokens[i + 2], 'number') && at(tokens[i + 3], 'op', ']')) highest = Math.max(highest, Number(tokens[i + 2].value));
    else otherwise = true;
  });
  return { highest, otherwise };
}
