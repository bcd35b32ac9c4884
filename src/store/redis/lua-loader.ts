// The Lua scripts of ./lua as Redis runs them (docs/architecture.md#redis-scripts). A line
// `--- @include "<name>"` is replaced by the fragment lua/includes/<name>.lua (its own includes
// expanded first), each fragment once per script however often it is included; a missing fragment
// or an include cycle is an error. A prelude `local Reply = {...}` gives the script the codes of
// codes.ts it names (Reply.<NAME>); naming one the table lacks is an error too.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Reply } from './codes.js';

/** The text of a file under lua/ by its path there (`includes/<name>.lua` for a fragment), else undefined. */
export type ReadLua = (path: string) => string | undefined;

const INCLUDE = /^--- @include "([^"]*)"\s*$/;
const CODE = /\bReply\.([A-Za-z_][A-Za-z0-9_]*)/g;

/** The path of a fragment under lua/. */
export const includePath = (name: string): string => `includes/${name}.lua`;

/** `file` with its includes expanded, each fragment once, in the order they are first included. */
export function expandIncludes(file: string, read: ReadLua): string {
  const done = new Set<string>();
  const expand = (path: string, chain: string[]): string => {
    const text = read(path);
    if (text === undefined) {
      throw new Error(chain.length === 0 ? `Lua script ${path} not found` : `Lua include "${path}" not found (included by ${chain.join(' → ')})`);
    }
    const lines = text.split('\n').map((line) => {
      const m = INCLUDE.exec(line);
      if (!m) return line;
      const inner = includePath(m[1]);
      if (chain.includes(inner) || inner === path) throw new Error(`Lua include cycle: ${[...chain, path, inner].join(' → ')}`);
      if (done.has(inner)) return `-- (${m[1]} included above)`;
      done.add(inner);
      return expand(inner, [...chain, path]).replace(/\n$/, '');
    });
    return lines.join('\n');
  };
  return expand(file, []);
}

/** The prelude declaring the codes `source` names, in the table's order; an unknown name throws. */
export function replyPrelude(source: string, file = 'a Lua script'): string {
  const named = new Set<string>();
  for (const m of source.matchAll(CODE)) {
    if (!Object.hasOwn(Reply, m[1])) throw new Error(`${file} names Reply.${m[1]}, which src/store/redis/codes.ts does not define`);
    named.add(m[1]);
  }
  if (named.size === 0) return '';
  const fields = Object.entries(Reply)
    .filter(([name]) => named.has(name))
    .map(([name, value]) => `${name} = ${value}`);
  return `local Reply = {${fields.join(', ')}}\n`;
}

/** A script as Redis runs it: the prelude, then the script with its includes expanded. */
export function assembleScript(file: string, read: ReadLua): string {
  const body = expandIncludes(file, read);
  return replyPrelude(body, file) + body;
}

function readFromDisk(path: string): string | undefined {
  try {
    return readFileSync(fileURLToPath(new URL(`./lua/${path}`, import.meta.url)), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

const loaded = new Map<string, string>();

/** lua/<file> as Redis runs it (read and assembled once per process). */
export function loadScript(file: string): string {
  let lua = loaded.get(file);
  if (lua === undefined) {
    lua = assembleScript(file, readFromDisk);
    loaded.set(file, lua);
  }
  return lua;
}
